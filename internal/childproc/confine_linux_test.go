package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/sandbox/seccomp"
)

// confineProbe confines this process as the eval child does, then reports
// which sockets it can still make.
func confineProbe() {
	if err := confine(); err != nil {
		fmt.Println("confine:", err)
		os.Exit(1)
	}
	for _, f := range []struct {
		name   string
		family int
	}{{"unix", unix.AF_UNIX}, {"inet", unix.AF_INET}, {"inet6", unix.AF_INET6}, {"vsock", unix.AF_VSOCK}, {"packet", unix.AF_PACKET}} {
		fd, err := unix.Socket(f.family, unix.SOCK_DGRAM, 0)
		if err == nil {
			unix.Close(fd)
			fmt.Printf("%s:made ", f.name)
		} else {
			fmt.Printf("%s:refused ", f.name)
		}
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err == nil {
		fmt.Print("unshare:made")
	} else {
		fmt.Print("unshare:refused")
	}
	os.Exit(0)
}

// TestEvalChildIsConfined: the eval child runs model-written code, so it
// keeps no network and no namespaces, even inside a worker that has them.
func TestEvalChildIsConfined(t *testing.T) {
	t.Parallel()
	if seccomp.Supported() != nil {
		t.Skip("no seccomp here")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "confine-probe").CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "unix:made inet:refused inet6:refused vsock:refused packet:refused unshare:refused"; got != want {
		t.Errorf("confined eval child: %s, want %s", got, want)
	}
}
