package pytool

import "syscall"

// setDeathSignal kills the child if the thread that started it dies with the daemon.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
