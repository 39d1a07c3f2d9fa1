//go:build !unix

package workspace

import (
	"io/fs"
	"os"
)

const openFlags = os.O_RDONLY

// nlink returns 1: the platform does not report hard-link counts.
func nlink(fs.FileInfo) uint64 { return 1 }
