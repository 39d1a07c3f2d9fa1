package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
)

// The ways a path can be refused. Every error the package returns for a
// refused path wraps one of these (or fs.ErrNotExist, fs.ErrInvalid or
// syscall.ENOTDIR), so callers can test with errors.Is while the message,
// written for the model, says what happened and why.
var (
	ErrEscapes    = errors.New("path escapes the workspace")
	ErrDenied     = errors.New("on the credential deny list")
	ErrNotRegular = errors.New("not a regular file")
	ErrHardLink   = errors.New("refusing files with more than one hard link")
	ErrLoop       = errors.New("too many levels of symbolic links")
	ErrChanged    = errors.New("changed while it was being opened")
)

// maxName bounds a requested name, like PATH_MAX.
const maxName = 4096

// maxLinks bounds the symlinks followed while resolving one name, like
// Linux's MAXSYMLINKS.
const maxLinks = 40

// pathError is an error with a message written in full and a sentinel kind
// for errors.Is.
type pathError struct {
	msg  string
	kind error
}

func (e *pathError) Error() string { return e.msg }
func (e *pathError) Unwrap() error { return e.kind }

// errorf builds a pathError of the given kind.
func errorf(kind error, format string, args ...any) error {
	return &pathError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// quote quotes a name for an error message, cutting very long names short so
// that a hostile name does not flood the model's context.
func quote(name string) string {
	const max = 160
	if len(name) > max {
		cut := max
		for cut > 0 && !isRuneStart(name[cut]) {
			cut--
		}
		return strconv.Quote(name[:cut]) + "…"
	}
	return strconv.Quote(name)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// fsError turns an error of the os package into one that names the
// requested path and drops the root's absolute path.
func fsError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errorf(fs.ErrNotExist, "%s: no such file or directory", quote(name))
	}
	return &pathError{msg: quote(name) + ": " + err.Error(), kind: err}
}

// kindOf names the kind of a file that is not a regular file.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	default:
		return "irregular file"
	}
}
