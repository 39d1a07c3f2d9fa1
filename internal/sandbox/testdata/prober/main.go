// Command prober is a sandboxed target for the tests of package sandbox
// that probe the kernel's shared state: /proc and memory no rlimit bounds.
//
//	prober mem shared|memfd|sysv|private MIB [MARKER SECONDS]
//
// maps MIB MiB of one kind of memory and touches it 16 MiB at a time,
// printing "touched N" after each step and "done N" at the end; with a
// MARKER it then creates that file and holds the memory SECONDS seconds.
//
//	prober fleet N MIB
//
// starts N `prober mem private MIB` at once, waits until each holds its
// memory or ended, and prints as JSON how many held theirs together.
//
// Run as `prober be-child sandbox` it is a sandbox helper whose in-process
// mode "nest" runs $NEST_SCRIPT with /bin/sh in a nested sandbox (no
// network) and prints the result as JSON, as shelldon's worker would.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/sandbox"
)

const step = 16 << 20

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "be-child" && os.Args[2] == "sandbox" {
		os.Exit(sandbox.Helper(map[string]func() int{"nest": nest}))
	}
	switch {
	case len(os.Args) >= 4 && os.Args[1] == "mem":
		os.Exit(mem(os.Args[2], mib(os.Args[3]), os.Args[4:]))
	case len(os.Args) == 4 && os.Args[1] == "fleet":
		n, _ := strconv.Atoi(os.Args[2])
		os.Exit(fleet(n, os.Args[3]))
	}
	fmt.Fprintln(os.Stderr, "usage: prober mem KIND MIB [MARKER SECONDS] | fleet N MIB")
	os.Exit(2)
}

func mib(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return n << 20
}

func fail(what string, err error) int {
	fmt.Printf("failed %s: %v\n", what, err)
	return 3
}

func mem(kind string, size int, hold []string) int {
	var m []byte
	var err error
	switch kind {
	case "shared":
		m, err = unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	case "private":
		m, err = unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	case "memfd":
		var fd int
		if fd, err = unix.MemfdCreate("prober", unix.MFD_CLOEXEC); err != nil {
			return fail("memfd_create", err)
		}
		if err = unix.Ftruncate(fd, int64(size)); err != nil {
			return fail("ftruncate", err)
		}
		m, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		unix.Close(fd)
	case "sysv":
		var id int
		if id, err = unix.SysvShmGet(unix.IPC_PRIVATE, size, unix.IPC_CREAT|0o600); err != nil {
			return fail("shmget", err)
		}
		m, err = unix.SysvShmAttach(id, 0, 0)
		// Gone once detached: the attack needs it only while it runs.
		unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	default:
		fmt.Fprintf(os.Stderr, "unknown kind %q\n", kind)
		return 2
	}
	if err != nil {
		return fail("map", err)
	}
	for off := 0; off < size; off += step {
		for i := off; i < min(off+step, size); i += 4096 {
			m[i] = 1
		}
		fmt.Printf("touched %d\n", min(off+step, size)>>20)
	}
	fmt.Printf("done %d\n", size>>20)
	if len(hold) == 2 {
		if err := os.WriteFile(hold[0], nil, 0o644); err != nil {
			return fail("marker", err)
		}
		secs, _ := strconv.Atoi(hold[1])
		time.Sleep(time.Duration(secs) * time.Second)
	}
	return 0
}

// FleetReport is what fleet prints.
type FleetReport struct {
	Held  int      // processes that held their memory at the same time
	Ended []string // how the others ended
}

func fleet(n int, size string) int {
	self, err := os.Executable()
	if err != nil {
		return fail("find self", err)
	}
	dir, err := os.MkdirTemp("", "fleet")
	if err != nil {
		return fail("temp dir", err)
	}
	var cmds []*exec.Cmd
	for i := range n {
		cmd := exec.Command(self, "mem", "private", size, filepath.Join(dir, strconv.Itoa(i)), "60")
		if err := cmd.Start(); err != nil {
			return fail("start", err)
		}
		cmds = append(cmds, cmd)
	}
	// Wait until each has its memory or has ended; then every one that
	// still runs holds its memory at this same moment.
	ended := make([]bool, n)
	var rep FleetReport
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		settled := true
		for i, cmd := range cmds {
			if ended[i] {
				continue
			}
			var ws unix.WaitStatus
			if pid, _ := unix.Wait4(cmd.Process.Pid, &ws, unix.WNOHANG, nil); pid == cmd.Process.Pid {
				ended[i] = true
				rep.Ended = append(rep.Ended, how(ws))
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(i))); err != nil {
				settled = false
			}
		}
		if settled {
			break
		}
	}
	// A process the kernel killed in the last moment has ended by now.
	time.Sleep(500 * time.Millisecond)
	for i, cmd := range cmds {
		var ws unix.WaitStatus
		if pid, _ := unix.Wait4(cmd.Process.Pid, &ws, unix.WNOHANG, nil); !ended[i] && pid == cmd.Process.Pid {
			ended[i] = true
			rep.Ended = append(rep.Ended, "at last: "+how(ws))
		}
		if !ended[i] {
			if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(i))); err == nil {
				rep.Held++
			}
			cmd.Process.Kill()
		}
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

func how(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return ws.Signal().String()
	}
	return fmt.Sprintf("exit %d", ws.ExitStatus())
}

// NestResult is what the mode "nest" prints.
type NestResult struct {
	Exit           int
	Signal         string
	Stdout, Stderr string
	Err            string
}

func nest() int {
	r, err := sandbox.NewRunner("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if layers := os.Getenv("NEST_LAYERS"); layers != "" {
		r.Known(sandbox.TierOf(strings.Split(layers, ",")))
	}
	res, err := r.Run(context.Background(), sandbox.Policy{
		Argv:    []string{"/bin/sh", "-c", os.Getenv("NEST_SCRIPT")},
		Timeout: 20 * time.Second,
	})
	nr := NestResult{Exit: res.ExitCode, Signal: res.Signal, Stdout: string(res.Stdout), Stderr: string(res.Stderr)}
	if err != nil {
		nr.Err = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(nr)
	return 0
}
