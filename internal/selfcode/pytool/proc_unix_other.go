//go:build unix && !linux

package pytool

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}

func lowerPriority(int) {}
