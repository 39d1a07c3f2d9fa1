//go:build !linux

package gitremote

import (
	"errors"
	"os"
)

// sealedToken needs Linux's memfd: elsewhere a remote with a token is not
// offered, rather than put the token where another process could read it.
func sealedToken(string) (*os.File, error) {
	return nil, errors.New("gitremote: a remote with a token needs Linux (a sealed memfd holds the token)")
}
