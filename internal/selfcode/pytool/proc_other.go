//go:build !unix

package pytool

import (
	"context"
	"os/exec"
	"slices"
)

func lowerPriority(int) {}

// canRun is false: the runner needs inherited pipes (fds 3-5) and SIGALRM. Check works.
const canRun = false

func command(ctx context.Context, python, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = dir
	cmd.Env = slices.Clone(cleanEnv)
	cmd.WaitDelay = waitDelay
	return cmd
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
