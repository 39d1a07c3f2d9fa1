package childproc

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// calls records what a fake runner was asked, in order.
type calls struct{ log []string }

func (c *calls) Run(context.Context, sandbox.Policy) (sandbox.Result, error) {
	c.log = append(c.log, "run")
	return sandbox.Result{}, nil
}

func (c *calls) Start(context.Context, sandbox.Policy, io.Reader, io.Writer, io.Writer) (*sandbox.Process, error) {
	c.log = append(c.log, "start")
	return nil, nil
}

// TestKnownLater: the runner is told the sandbox's layers once, before the
// turn's first command, and not at all by a turn that runs none.
func TestKnownLater(t *testing.T) {
	t.Parallel()
	c := &calls{}
	k := &knownLater{runner: c, know: func() { c.log = append(c.log, "known") }}
	if len(c.log) != 0 {
		t.Fatalf("before any command: %v", c.log)
	}
	k.Run(context.Background(), sandbox.Policy{})
	k.Start(context.Background(), sandbox.Policy{}, nil, nil, nil)
	k.Run(context.Background(), sandbox.Policy{})
	if want := []string{"known", "run", "start", "run"}; !slices.Equal(c.log, want) {
		t.Errorf("calls %v, want %v", c.log, want)
	}
}
