//go:build unix

package pytool

import (
	"context"
	"os/exec"
	"slices"
	"syscall"
)

// canRun: the runner needs inherited pipes (fds 3-5) and SIGALRM.
const canRun = true

// command is python with args in dir, in a clean environment and its own process group,
// the whole group killed when ctx is done.
func command(ctx context.Context, python, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = dir
	cmd.Env = slices.Clone(cleanEnv)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	return cmd
}

// killGroup kills what is left of a started child's process group: processes the tool
// started. Call it before Wait: until the child is reaped, its pid, which names the
// group, cannot be reused. (A process that leaves the group with setsid escapes this;
// the sandbox's pid namespace is what catches it.)
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
