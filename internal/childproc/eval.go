package childproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"time"

	"github.com/shelldon/shelldon/internal/sandbox/seccomp"
	"github.com/shelldon/shelldon/internal/worker/builtin"
)

// EvalMemory caps the data segment of an eval child. Starlark bounds steps,
// not memory ("x" * (1 << 30) is one step), so the kernel bounds it.
const EvalMemory = 128 << 20

// evalReply is what an eval child writes to stdout.
type evalReply struct {
	Text  string `json:"text"`
	Error string `json:"error,omitempty"`
}

// runEval is the eval child mode: one expression from stdin, the result as
// JSON on stdout, under RLIMIT_DATA. Running out of memory kills this
// process, not the worker.
func runEval(stdin io.Reader, stdout io.Writer) error {
	if !raceEnabled {
		if err := limitData(EvalMemory); err != nil {
			return fmt.Errorf("eval: set memory limit: %w", err)
		}
		debug.SetMemoryLimit(EvalMemory * 3 / 4)
	}
	if err := confine(); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	code, err := io.ReadAll(io.LimitReader(stdin, 64<<10))
	if err != nil {
		return fmt.Errorf("eval: read code: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rep evalReply
	rep.Text, err = builtin.Eval(ctx, string(code))
	if err != nil {
		rep.Error = err.Error()
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// confine gives the eval child no capability from the kernel that the
// expression could use if it ever got past Starlark's hermetic interpreter:
// the sandbox's seccomp filter, with no network sockets (only AF_UNIX), no
// namespaces or mounts, no ptrace. It runs in the worker's own sandbox,
// which keeps the network for http_get; this takes it away again. On a
// kernel without seccomp (a degraded sandbox the owner allowed) it does
// nothing more.
func confine() error {
	if seccomp.Supported() != nil {
		return nil
	}
	if err := seccomp.Install(seccomp.Options{}); err != nil {
		return fmt.Errorf("confine: %w", err)
	}
	return nil
}

// evalInChild runs one eval expression in a child process of this binary.
func evalInChild(ctx context.Context, code string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("eval: find own binary: %w", err)
	}
	return evalWith(ctx, exe, code)
}

// evalWith runs one eval expression in `exe be-child eval`.
func evalWith(ctx context.Context, exe, code string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, Arg, "eval")
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader([]byte(code))
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: 256 << 10}
	cmd.SysProcAttr = dieWithParent()
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	var rep evalReply
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil || runErr != nil {
		if ctx.Err() != nil {
			return "", errors.New("eval: the expression did not finish in time")
		}
		return "", fmt.Errorf("eval: the expression ran out of memory (limit %d MiB) or crashed", EvalMemory>>20)
	}
	if rep.Error != "" {
		return "", errors.New(rep.Error)
	}
	return rep.Text, nil
}

// limitedWriter keeps the first n bytes and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	q := p
	if len(q) > l.n {
		q = q[:l.n]
	}
	l.n -= len(q)
	l.w.Write(q)
	return len(p), nil
}
