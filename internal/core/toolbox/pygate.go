package toolbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode/pytool"
)

// ErrNoPython means the sandbox's PATH has no python3: there is no Python
// gate to build a cache for.
var ErrNoPython = errors.New("toolbox: python3 is not on the sandbox's PATH")

// SandboxPython is the python3 the sandboxes' PATH finds, the one a Python
// gate and a Python tool run with.
func SandboxPython() (string, error) {
	for _, kv := range sandbox.Env() {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				p := filepath.Join(dir, "python3")
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return p, nil
				}
			}
		}
	}
	return "", ErrNoPython
}

// BuildPyGateCache compiles the Python gate's scripts ahead, with the
// sandbox's python3, into dir (pytool.BuildGateCache), which the daemon owns
// and every sandbox sees read-only: a gate then skips compiling them, and
// takes its analyses of the allowed modules' sources from there rather
// than make them (python3 makes them there, at a low priority, in about a
// second; the file is about 200 KiB). It
// returns the cache file's path. The daemon calls it once at start, in the
// background: until it is done, or if it fails, gates compile the scripts
// themselves, as they do without a cache; it never changes a gate's answer.
func BuildPyGateCache(ctx context.Context, dir string) (string, error) {
	python, err := SandboxPython()
	if err != nil {
		return "", err
	}
	path, err := pytool.BuildGateCache(ctx, python, dir)
	if err != nil {
		return "", fmt.Errorf("toolbox: python gate cache: %w", err)
	}
	return path, nil
}
