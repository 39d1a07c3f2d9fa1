//go:build !linux

package core

import "os"

// procWatch holds a handle on a worker process. Outside Linux it cannot
// tell that the worker died while it waited (a dead one fails its turn),
// and on Unix its kill names the process by pid.
type procWatch struct{ p *os.Process }

func watchProc(pid int) procWatch {
	p, err := os.FindProcess(pid)
	if err != nil {
		return procWatch{}
	}
	return procWatch{p: p}
}

func (w procWatch) exited() bool { return false }

func (w procWatch) kill() {
	if w.p != nil {
		w.p.Kill()
	}
}

func (w procWatch) close() {
	if w.p != nil {
		w.p.Release()
	}
}
