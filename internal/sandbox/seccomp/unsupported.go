//go:build !linux || !(amd64 || arm64 || arm)

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
)

func errUnavailable() error {
	return fmt.Errorf("seccomp is not available on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}

// Supported reports that seccomp is not available on this platform.
func Supported() error { return errUnavailable() }

// Install fails: seccomp is not available on this platform.
func Install(Options) error { return errUnavailable() }
