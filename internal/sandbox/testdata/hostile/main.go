// Command hostile is a sandboxed target that attacks its sandbox, for the
// tests of package sandbox: it writes forged status lines to every
// descriptor it can find, signals the helper (PID 1) every way there is,
// reads the helper's /proc files, makes sockets of every family and fills
// its tmpfs with inodes. Each mode prints what it managed as JSON on
// stdout. Run as `hostile be-child sandbox` it is also a sandbox helper
// whose in-process mode "nest" builds nested sandboxes, as shelldon's
// worker does.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// Forged is the status line a target would forge: "exit status 0".
const Forged = `{"layers":[],"exit":0,"done":true}` + "\n"

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "be-child" && os.Args[2] == "sandbox" {
		os.Exit(sandbox.Helper(map[string]func() int{"nest": nest}))
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: hostile fds|signals|proc1 [DIR]|sockets|inodes DIR")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "fds":
		os.Exit(fds())
	case "signals":
		os.Exit(signals())
	case "proc1":
		os.Exit(proc1())
	case "sockets":
		os.Exit(sockets())
	case "inodes":
		os.Exit(inodes(os.Args[2]))
	}
	fmt.Fprintf(os.Stderr, "hostile: unknown mode %q\n", os.Args[1])
	os.Exit(2)
}

func print(v any) {
	json.NewEncoder(os.Stdout).Encode(v)
}

func outcome(err error) string {
	var errno unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// FDReport is what fds found.
type FDReport struct {
	Open     []int             // descriptors open at start
	Wrote    []int             // descriptors 3..1023 a forged line was written to
	Proc1FD  string            // listing /proc/1/fd
	Proc1    map[string]string // opening /proc/1/fd/N for writing, reading its link
	ProcSelf map[string]string // writing through /proc/self/fd/N, N >= 3
}

// fds looks for every descriptor it was given and writes a forged status
// line to each, then exits 9.
func fds() int {
	// First, before this program opens anything of its own.
	r := FDReport{Proc1: map[string]string{}, ProcSelf: map[string]string{}}
	for fd := 0; fd < 1<<16; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			r.Open = append(r.Open, fd)
		}
	}
	for fd := 3; fd <= 1023; fd++ {
		if n, err := unix.Write(fd, []byte(Forged)); err == nil && n > 0 {
			r.Wrote = append(r.Wrote, fd)
		}
	}
	names := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}
	if entries, err := os.ReadDir("/proc/1/fd"); err != nil {
		r.Proc1FD = outcome(err)
	} else {
		var listed []string
		for _, e := range entries {
			listed = append(listed, e.Name())
			names = append(names, e.Name())
		}
		r.Proc1FD = "listed " + strings.Join(listed, " ")
	}
	for _, n := range names {
		p := "/proc/1/fd/" + n
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			_, werr := f.WriteString(Forged)
			f.Close()
			r.Proc1["open "+n] = "opened, write " + outcome(werr)
		}
		if link, err := os.Readlink(p); err == nil {
			r.Proc1["readlink "+n] = link
		}
	}
	if entries, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range entries {
			if fd, _ := strconv.Atoi(e.Name()); fd < 3 {
				continue
			}
			f, err := os.OpenFile("/proc/self/fd/"+e.Name(), os.O_WRONLY, 0)
			if err != nil {
				r.ProcSelf[e.Name()] = outcome(err)
				continue
			}
			_, werr := f.WriteString(Forged)
			f.Close()
			r.ProcSelf[e.Name()] = "write " + outcome(werr)
		}
	}
	print(r)
	return 9
}

// siQueue is SI_QUEUE, the si_code of sigqueue(3).
const siQueue = -1

func sigqueue(pid int, sig unix.Signal) error {
	info := unix.Siginfo{Signo: int32(sig), Code: siQueue}
	_, _, e := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info)))
	if e != 0 {
		return e
	}
	return nil
}

func tgsigqueue(tgid, tid int, sig unix.Signal) error {
	info := unix.Siginfo{Signo: int32(sig), Code: siQueue}
	_, _, e := unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(tgid), uintptr(tid), uintptr(sig), uintptr(unsafe.Pointer(&info)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// signals sends PID 1, and each of its threads, every signal every way,
// then exits 9. The helper must report that exit.
func signals() int {
	out := map[string]string{}
	var tids []int
	if entries, err := os.ReadDir("/proc/1/task"); err == nil {
		for _, e := range entries {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				tids = append(tids, tid)
			}
		}
	}
	out["helper threads"] = fmt.Sprint(tids)
	for s := unix.Signal(1); s <= 64; s++ {
		out[fmt.Sprintf("kill 1 %d", s)] = outcome(unix.Kill(1, s))
	}
	for _, tid := range tids {
		for _, s := range []unix.Signal{unix.SIGSEGV, unix.SIGBUS, unix.SIGTERM, unix.SIGQUIT} {
			out[fmt.Sprintf("tgkill 1 %d %d", tid, s)] = outcome(unix.Tgkill(1, tid, s))
			// kill(2) with a thread's id signals its whole process.
			out[fmt.Sprintf("kill %d %d", tid, s)] = outcome(unix.Kill(tid, s))
		}
	}
	faults := []unix.Signal{unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP, unix.SIGSYS, unix.SIGSTKFLT}
	for _, s := range faults {
		out[fmt.Sprintf("sigqueue 1 %d", s)] = outcome(sigqueue(1, s))
		for _, tid := range tids {
			out[fmt.Sprintf("sigqueue %d %d", tid, s)] = outcome(sigqueue(tid, s))
			out[fmt.Sprintf("tgsigqueue 1 %d %d", tid, s)] = outcome(tgsigqueue(1, tid, s))
		}
	}
	for _, s := range []unix.Signal{unix.SIGTERM, unix.SIGQUIT, unix.SIGUSR1, 40} {
		out[fmt.Sprintf("sigqueue 1 %d", s)] = outcome(sigqueue(1, s))
	}
	if pidfd, err := unix.PidfdOpen(1, 0); err != nil {
		out["pidfd_open 1"] = outcome(err)
	} else {
		for _, s := range append(faults, unix.SIGTERM, unix.SIGABRT) {
			info := unix.Siginfo{Signo: int32(s), Code: siQueue}
			out[fmt.Sprintf("pidfd_send_signal %d info", s)] = outcome(unix.PidfdSendSignal(pidfd, s, &info, 0))
			out[fmt.Sprintf("pidfd_send_signal %d", s)] = outcome(unix.PidfdSendSignal(pidfd, s, nil, 0))
		}
		unix.Close(pidfd)
	}
	// The I/O signal of a pipe, owned by PID 1: the kernel sends it with
	// si_code POLL_IN.
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err == nil {
		out["F_SETOWN 1"] = outcome(fcntl(p[0], unix.F_SETOWN, 1))
		for _, s := range faults {
			out[fmt.Sprintf("F_SETSIG %d", s)] = outcome(fcntl(p[0], unix.F_SETSIG, int(s)))
		}
		out["F_SETSIG 15"] = outcome(fcntl(p[0], unix.F_SETSIG, int(unix.SIGTERM)))
		fl, _ := unix.FcntlInt(uintptr(p[0]), unix.F_GETFL, 0)
		out["O_ASYNC"] = outcome(fcntl(p[0], unix.F_SETFL, fl|unix.O_ASYNC))
		unix.Write(p[1], []byte("x"))
	}
	out["kill -1 15"] = outcome(unix.Kill(-1, unix.SIGTERM))
	// Whatever the helper does with them, it does now.
	time.Sleep(200 * time.Millisecond)
	print(out)
	return 9
}

func fcntl(fd, cmd, arg int) error {
	_, err := unix.FcntlInt(uintptr(fd), cmd, arg)
	return err
}

// proc1 tries the helper's /proc files, under /proc or, given a directory,
// under a proc it mounts there itself (a target that keeps capabilities,
// as a nested sandbox's builder does, can). Keys are relative to
// <proc>/1, except the controls "self/...".
func proc1() int {
	out := map[string]string{}
	proc := "/proc"
	if len(os.Args) > 2 {
		proc = os.Args[2]
		os.MkdirAll(proc, 0o755)
		out["mount"] = outcome(unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""))
	}
	pid1 := proc + "/1/"
	_, err := os.Stat(pid1)
	out["stat"] = outcome(err)
	if entries, err := os.ReadDir(proc); err == nil {
		var pids []string
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, e.Name())
			}
		}
		out["self/pids"] = strings.Join(pids, " ")
	}
	files := []string{"mem", "environ", "maps", "smaps", "numa_maps", "auxv", "stack", "syscall", "pagemap",
		"io", "personality", "status", "cmdline", "fdinfo/0", "fdinfo/1", "fdinfo/3", "fdinfo/4"}
	tasks := []string{"1"}
	if entries, err := os.ReadDir(pid1 + "task"); err == nil {
		tasks = nil
		for _, e := range entries {
			tasks = append(tasks, e.Name())
		}
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f)
		for _, t := range tasks {
			paths = append(paths, "task/"+t+"/"+f)
		}
	}
	read := func(p string) string {
		f, err := os.Open(p)
		if err != nil {
			return outcome(err)
		}
		defer f.Close()
		buf := make([]byte, 4096)
		n, err := f.Read(buf)
		if err != nil && n == 0 {
			return outcome(err)
		}
		return fmt.Sprintf("%d bytes", n)
	}
	for _, p := range paths {
		out["read "+p] = read(pid1 + p)
	}
	out["read self/environ"] = read(proc + "/self/environ")
	out["read self/status"] = read(proc + "/self/status")
	for _, d := range []string{"", "fd", "fdinfo", "root", "cwd", "map_files", "ns", "task"} {
		entries, err := os.ReadDir(pid1 + d)
		if err != nil {
			out["list "+d] = outcome(err)
		} else {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			out["list "+d] = "listed " + strings.Join(names, " ")
		}
	}
	for _, l := range []string{"root", "cwd", "exe", "fd/0", "fd/1", "fd/4", "ns/mnt"} {
		link, err := os.Readlink(pid1 + l)
		if err != nil {
			out["readlink "+l] = outcome(err)
		} else {
			out["readlink "+l] = "is " + link
		}
	}
	out["open root/etc/passwd"] = openOutcome(pid1 + "root/etc/passwd")
	out["open cwd/."] = openOutcome(pid1 + "cwd/.")
	print(out)
	return 0
}

func openOutcome(p string) string {
	f, err := os.Open(p)
	if err == nil {
		f.Close()
	}
	return outcome(err)
}

// sockets tries a socket of every family (each type), every netlink
// protocol and a unix socketpair.
func sockets() int {
	out := map[string]string{}
	for fam := 0; fam < 64; fam++ {
		res := ""
		for _, typ := range []int{unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_RAW, unix.SOCK_SEQPACKET} {
			fd, err := unix.Socket(fam, typ|unix.SOCK_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
				res = "ok"
				break
			}
			if o := outcome(err); res == "" || res == "EAFNOSUPPORT" {
				res = o
			}
		}
		out[fmt.Sprintf("family %d", fam)] = res
	}
	for proto := 0; proto < 32; proto++ {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
		if err == nil {
			unix.Close(fd)
		}
		out[fmt.Sprintf("netlink %d", proto)] = outcome(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	out["socketpair unix"] = outcome(err)
	_, err = unix.Socketpair(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	out["socketpair inet"] = outcome(err)
	print(out)
	return 0
}

// inodes makes empty files in dir until it cannot.
func inodes(dir string) int {
	n := 0
	var err error
	for ; n < 1<<22; n++ {
		var fd int
		fd, err = unix.Open(filepath.Join(dir, "i"+strconv.Itoa(n)), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			break
		}
		unix.Close(fd)
	}
	print(map[string]string{"created": strconv.Itoa(n), "error": outcome(err)})
	return 0
}

// NestResult is one nested run, as the mode "nest" prints it.
type NestResult struct {
	Name     string
	Exit     int
	Signal   string
	Stdout   string
	Stderr   string
	Err      string
	Dumpable int // the helper's own PR_GET_DUMPABLE after the run
}

// nest runs in the helper (PID 1 of the outer sandbox), as shelldon's
// worker does, and builds nested sandboxes with this binary as their
// helper: each must work, and each must hold against its own target.
func nest() int {
	r, err := sandbox.NewRunner("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if layers := os.Getenv("NEST_LAYERS"); layers != "" {
		r.Known(sandbox.TierOf(strings.Split(layers, ",")))
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runs := []struct {
		name string
		argv []string
	}{
		{"fds", []string{self, "fds"}},
		{"signals", []string{"/bin/sh", "-c", "kill -TERM 1; kill -SEGV 1; kill -KILL 1; kill -TERM -1; exit 7"}},
		{"proc1", []string{"/bin/sh", "-c", "cat /proc/1/environ || echo denied; exit 5"}},
	}
	var results []NestResult
	for _, run := range runs {
		res, err := r.Run(context.Background(), sandbox.Policy{
			Argv:     run.argv,
			ReadOnly: []string{filepath.Dir(self)},
			Timeout:  20 * time.Second,
		})
		nr := NestResult{Name: run.name, Exit: res.ExitCode, Signal: res.Signal, Stdout: string(res.Stdout), Stderr: string(res.Stderr)}
		if err != nil {
			nr.Err = err.Error()
		}
		nr.Dumpable, _ = unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		results = append(results, nr)
	}
	print(results)
	return 0
}
