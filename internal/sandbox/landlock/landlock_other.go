//go:build !linux

package landlock

import (
	"errors"
	"fmt"
)

var errLinuxOnly = fmt.Errorf("landlock: Landlock is Linux-only: %w", errors.ErrUnsupported)

// ABI returns 0 and an error: Landlock is Linux-only.
func ABI() (int, error) { return 0, errLinuxOnly }

// RestrictThread returns an error: Landlock is Linux-only.
func RestrictThread(Rules) (Applied, error) { return Applied{}, errLinuxOnly }
