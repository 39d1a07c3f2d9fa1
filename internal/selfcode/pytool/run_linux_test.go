package pytool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spawner is a deliberately unchecked tool (Call does not re-check) that also switches
// the runner's guard off, as a tool exploiting a miss in each layer would: the guard is
// not the boundary, and the process group must be killed even then. It starts a child
// that ignores SIGTERM, records its pid, and then either hangs or returns.
const spawner = `import typing

DESCRIPTION = "x"
PARAMS_SCHEMA = {"type": "object", "properties": {"hang": {"type": "boolean"}}, "required": ["hang"]}
CAPABILITIES = {}


def run(hang):
    sys = typing.sys
    guard = sys.meta_path[0]
    guard.busy.add(sys.modules["_thread"].get_ident())
    sys.meta_path.remove(guard)
    sys.modules["builtins"].__import__ = guard.original_import
    import subprocess
    p = subprocess.Popen(["sh", "-c", "trap '' TERM; exec sleep 1000"])
    with open("child.pid", "w") as f:
        f.write(str(p.pid))
    while hang:
        pass
    return "left a child behind"
`

func TestCallKillsProcessGroup(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, hang := range []bool{true, false} {
		t.Run(fmt.Sprintf("hang=%v", hang), func(t *testing.T) {
			t.Parallel()
			dir := stage(t, "spawner", spawner, "def test_x():\n    pass\n")
			args := json.RawMessage(fmt.Sprintf(`{"hang": %v}`, map[bool]string{true: "true", false: "false"}[hang]))
			start := time.Now()
			got, err := Call(context.Background(), python, dir, "spawner", args, 1500*time.Millisecond, Host{})
			if hang {
				var te *ToolError
				if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) || !strings.Contains(te.Message, "timed out after 1.5s") {
					t.Fatalf("Call = %q, %v; want a timeout ToolError", got, err)
				}
				if d := time.Since(start); d > 1500*time.Millisecond+waitDelay {
					t.Errorf("Call took %v after a 1.5s timeout", d)
				}
			} else if err != nil {
				t.Fatalf("Call: %v", err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
			if err != nil {
				t.Fatalf("the tool recorded no child: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for alive(pid) {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("the tool's child %d (ignoring SIGTERM) outlived the call", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// alive reports whether pid is a live process: not gone, not a zombie awaiting reaping.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}
