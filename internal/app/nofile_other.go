//go:build !linux

package app

import "log/slog"

// raiseOpenFiles leaves the limit as it is where it is not Linux's; the
// connection cap is then MaxConns.
func raiseOpenFiles(*slog.Logger) uint64 { return 0 }
