package pytool

import "syscall"

// setDeathSignal kills the child if the thread that started it dies with the daemon.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// lowerPriority makes the process pid yield the CPU to others (nice 10): the daemon's
// background build of the gate's cache, which must not slow the turns it runs beside.
// Best effort: the build is only slower if this fails.
func lowerPriority(pid int) { _ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, 10) }
