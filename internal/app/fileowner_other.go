//go:build !unix

package app

import "os"

// fileOwner reports no owner: this system has no uids.
func fileOwner(os.FileInfo) (uid uint32, ok bool) { return 0, false }
