package landlock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// childEnv, when set, makes the test binary a child: it reads a childSpec from
// the variable, restricts its locked thread, runs the operations from that
// thread and prints a childReport as JSON on stdout.
const childEnv = "SHELLDON_LANDLOCK_TEST_CHILD"

type childSpec struct {
	Restrict bool // false: a control run, the same operations unrestricted
	Rules    Rules
	Ops      []op
}

// op is one operation the child attempts. Do names it: read, readdir, write,
// create, truncate, mkdir, remove, rename, link, symlink, exec, connect,
// bind, kill, abstract, read-other-thread.
type op struct {
	Name string
	Do   string
	Path string   // the file, or the source of rename, link and symlink
	To   string   // the destination of rename, link and symlink
	Addr string   // host:port for connect, @name for abstract
	PID  int      // for kill
	Cmd  []string // for exec
}

type childReport struct {
	Applied     Applied
	RestrictErr string
	// Results maps an op's name to "ok", an errno name ("EACCES"), or for
	// exec "exit N: output".
	Results map[string]string
}

func childMain(spec string) int {
	runtime.LockOSThread() // never unlocked: the thread dies with the process
	var s childSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "child: bad spec:", err)
		return 2
	}
	rep := childReport{Results: map[string]string{}}
	if s.Restrict {
		applied, err := RestrictThread(s.Rules)
		rep.Applied = applied
		if err != nil {
			rep.RestrictErr = err.Error()
		}
	}
	for _, o := range s.Ops {
		rep.Results[o.Name] = result(runOp(o))
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	return 0
}

// result names err the way the tests compare it.
func result(err error) string {
	if err == nil {
		return "ok"
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
	}
	return err.Error()
}

// runOp performs o with raw system calls on the calling (locked) thread.
func runOp(o op) error {
	switch o.Do {
	case "read":
		return readFile(o.Path)
	case "readdir":
		fd, err := unix.Open(o.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		return unix.Close(fd)
	case "write":
		return writeFile(o.Path, unix.O_WRONLY|unix.O_APPEND)
	case "create":
		return writeFile(o.Path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL)
	case "truncate":
		return unix.Truncate(o.Path, 0)
	case "mkdir":
		return unix.Mkdir(o.Path, 0o777)
	case "remove":
		return unix.Unlink(o.Path)
	case "rename":
		return unix.Rename(o.Path, o.To)
	case "link":
		return unix.Link(o.Path, o.To)
	case "symlink":
		return unix.Symlink(o.Path, o.To)
	case "exec":
		return runCmd(o.Cmd)
	case "connect", "bind":
		return tcp(o.Do, o.Addr)
	case "kill":
		return unix.Kill(o.PID, 0)
	case "abstract":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrUnix{Name: o.Addr})
	case "read-other-thread":
		// A goroutine that locks a thread gets one other than ours: the
		// domain is not there.
		done := make(chan error)
		go func() {
			runtime.LockOSThread()
			done <- readFile(o.Path)
		}()
		return <-done
	}
	return fmt.Errorf("unknown op %q", o.Do)
}

func readFile(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Read(fd, make([]byte, 64))
	return err
}

func writeFile(path string, flags int) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte("x\n"))
	return err
}

// runCmd forks and execs args from this locked goroutine. Stdin is an open
// file, so os/exec need not open /dev/null, which the rules may not allow.
func runCmd(args []string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = os.Stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("exit %d: %s", exit.ExitCode(), strings.TrimSpace(out.String()))
	}
	return err
}

func tcp(do, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	sa := &unix.SockaddrInet4{Port: p}
	copy(sa.Addr[:], net.ParseIP(host).To4())
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if do == "bind" {
		return unix.Bind(fd, sa)
	}
	return unix.Connect(fd, sa)
}
