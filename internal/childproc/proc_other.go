//go:build !linux

package childproc

import (
	"errors"
	"os"
	"syscall"
)

// limitData is not available here: eval's memory is then unbounded, and
// the sandboxed tools that need real containment refuse to run off Linux.
func limitData(uint64) error {
	return errors.New("memory limits need Linux")
}

func dieWithParent() *syscall.SysProcAttr { return nil }

// hideFromChildren needs Linux; the sandboxed children it protects do not
// run elsewhere.
func hideFromChildren() error { return nil }

// jobArrived says yes: a worker off Linux does not rehearse.
func jobArrived(*os.File) func() bool { return func() bool { return true } }
