//go:build unix && !linux

package core

import "syscall"

func setDeathSignal(*syscall.SysProcAttr) {}
