package childproc

import (
	"context"
	"io"
	"sync"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// sandboxRunner is what the turn's tools run commands with: a
// sandbox.Runner.
type sandboxRunner interface {
	Run(ctx context.Context, p sandbox.Policy) (sandbox.Result, error)
	Start(ctx context.Context, p sandbox.Policy, stdin io.Reader, stdout, stderr io.Writer) (*sandbox.Process, error)
}

// knownLater hands the turn's tools a runner that is told the sandbox
// layers the daemon found (sandbox.Runner.Known) before its first command
// rather than when the tools are built: knowing them costs cgroup probes
// (a cgroup made and removed for each controller, about half a
// millisecond), which a turn that runs no command need not pay.
type knownLater struct {
	runner sandboxRunner
	know   func() // tells runner the layers
	once   sync.Once
}

func (k *knownLater) Run(ctx context.Context, p sandbox.Policy) (sandbox.Result, error) {
	k.once.Do(k.know)
	return k.runner.Run(ctx, p)
}

func (k *knownLater) Start(ctx context.Context, p sandbox.Policy, stdin io.Reader, stdout, stderr io.Writer) (*sandbox.Process, error) {
	k.once.Do(k.know)
	return k.runner.Start(ctx, p, stdin, stdout, stderr)
}
