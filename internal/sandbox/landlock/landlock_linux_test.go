package landlock

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childMain(spec))
	}
	os.Exit(m.Run())
}

// requireLandlock skips t when the kernel has no Landlock, saying which part
// is missing; everywhere else the tests run.
func requireLandlock(t *testing.T) int {
	t.Helper()
	abi, err := ABI()
	if err != nil {
		t.Skipf("Landlock layer missing: %v", err)
	}
	return abi
}

func TestABI(t *testing.T) {
	t.Parallel()
	abi := requireLandlock(t)
	if abi < 1 {
		t.Fatalf("ABI() = %d, want >= 1", abi)
	}
	t.Logf("Landlock ABI %d", abi)
}

// systemRO is what /bin/sh needs to start: its binary, the loader and libc.
var systemRO = []string{"/usr", "/bin", "/lib", "/lib64", "/etc/ld.so.cache"}

// layout is a temporary tree reachable by nobody:
//
//	ro/file.txt ro/sub/      a ReadOnly directory
//	rw/file.txt rw/sub/ ...  a ReadWrite directory
//	home/secret              outside every rule: the owner's home
//	rw/hardlink              a hard link to home/secret
//	home/single-ro-alias     a hard link to single-ro
//	single-ro, single-rw     files listed on their own
type layout struct {
	base, ro, rw, home, secret, singleRO, singleRW string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	base, err := os.MkdirTemp("", "landlock-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	l := layout{
		base:     base,
		ro:       filepath.Join(base, "ro"),
		rw:       filepath.Join(base, "rw"),
		home:     filepath.Join(base, "home"),
		secret:   filepath.Join(base, "home", "secret"),
		singleRO: filepath.Join(base, "single-ro"),
		singleRW: filepath.Join(base, "single-rw"),
	}
	// Modes are loose on purpose: Unix permissions allow everything asked
	// here, even to nobody, so every denial is Landlock's.
	dirs := map[string]os.FileMode{
		base: 0o755, l.ro: 0o755, l.ro + "/sub": 0o755,
		l.rw: 0o777, l.rw + "/sub": 0o777, l.home: 0o755,
	}
	files := map[string]os.FileMode{
		l.ro + "/file.txt": 0o666, l.rw + "/file.txt": 0o666, l.rw + "/old.txt": 0o666,
		l.rw + "/del.txt": 0o666, l.rw + "/out.txt": 0o666, l.secret: 0o644,
		l.singleRO: 0o666, l.singleRW: 0o666,
	}
	for _, d := range []string{base, l.ro, l.ro + "/sub", l.rw, l.rw + "/sub", l.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, dirs[d]); err != nil {
			t.Fatal(err)
		}
	}
	for f, mode := range files {
		if err := os.WriteFile(f, []byte(filepath.Base(f)+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(l.secret, l.rw+"/escape"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(l.secret, l.rw+"/hardlink"); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(l.singleRO, l.home+"/single-ro-alias"); err != nil {
		t.Fatal(err)
	}
	return l
}

// rules allows the system, ro and single-ro read-only, rw and single-rw
// read-write.
func (l layout) rules() Rules {
	return Rules{
		ReadOnly:  append(append([]string{}, systemRO...), l.ro, l.singleRO),
		ReadWrite: []string{l.rw, l.singleRW},
		Scope:     true,
	}
}

// expect is one op and the result wanted once restricted; a control run
// wants "ok" everywhere. A want holding "*" matches as prefix*suffix; one
// with "|" lists alternatives.
type expect struct {
	op   op
	want string
}

func matches(got, want string) bool {
	for _, w := range strings.Split(want, "|") {
		if prefix, suffix, ok := strings.Cut(w, "*"); ok {
			if strings.HasPrefix(got, prefix) && strings.HasSuffix(got, suffix) {
				return true
			}
		} else if got == w {
			return true
		}
	}
	return false
}

const (
	denied   = "EACCES"
	reparent = "EXDEV|EACCES" // rename or link the rules do not allow
	shDenied = "exit *Permission denied"
)

// fsCases are the filesystem operations tried against l, in order.
func fsCases(l layout) []expect {
	sh := func(script string) []string { return []string{"/bin/sh", "-c", script} }
	return []expect{
		{op{Name: "read ro", Do: "read", Path: l.ro + "/file.txt"}, "ok"},
		{op{Name: "list ro", Do: "readdir", Path: l.ro}, "ok"},
		{op{Name: "read single ro file", Do: "read", Path: l.singleRO}, "ok"},
		{op{Name: "read system file rule", Do: "read", Path: "/etc/ld.so.cache"}, "ok"},
		{op{Name: "write ro", Do: "write", Path: l.ro + "/file.txt"}, denied},
		{op{Name: "truncate ro", Do: "truncate", Path: l.ro + "/file.txt"}, denied},
		{op{Name: "create in ro", Do: "create", Path: l.ro + "/new.txt"}, denied},
		{op{Name: "mkdir in ro", Do: "mkdir", Path: l.ro + "/newdir"}, denied},
		{op{Name: "write single ro file", Do: "write", Path: l.singleRO}, denied},
		{op{Name: "write single rw file", Do: "write", Path: l.singleRW}, "ok"},
		{op{Name: "truncate single rw file", Do: "truncate", Path: l.singleRW}, "ok"},
		{op{Name: "create in rw", Do: "create", Path: l.rw + "/new.txt"}, "ok"},
		{op{Name: "write rw", Do: "write", Path: l.rw + "/file.txt"}, "ok"},
		{op{Name: "truncate rw", Do: "truncate", Path: l.rw + "/file.txt"}, "ok"},
		{op{Name: "mkdir in rw", Do: "mkdir", Path: l.rw + "/newdir"}, "ok"},
		{op{Name: "rename within rw", Do: "rename", Path: l.rw + "/old.txt", To: l.rw + "/sub/moved.txt"}, "ok"},
		{op{Name: "remove in rw", Do: "remove", Path: l.rw + "/del.txt"}, "ok"},
		{op{Name: "rename rw into ro", Do: "rename", Path: l.rw + "/out.txt", To: l.ro + "/out.txt"}, reparent},
		{op{Name: "hard link outside file into rw", Do: "link", Path: l.secret, To: l.rw + "/hard2"}, reparent},
		{op{Name: "read home", Do: "read", Path: l.secret}, denied},
		{op{Name: "list home", Do: "readdir", Path: l.home}, denied},
		{op{Name: "read /etc/hostname", Do: "read", Path: "/etc/hostname"}, denied},
		{op{Name: "read symlink to home", Do: "read", Path: l.rw + "/escape"}, denied},
		{op{Name: "make symlink to /etc/hostname", Do: "symlink", Path: "/etc/hostname", To: l.rw + "/host"}, "ok"},
		{op{Name: "read new symlink", Do: "read", Path: l.rw + "/host"}, denied},
		// Finding: a hard link made before the restriction is a path beneath
		// rw, and Landlock judges the path walked, not the inode's other
		// names: the secret is readable through it.
		{op{Name: "read hard link to home", Do: "read", Path: l.rw + "/hardlink"}, "ok"},
		// Likewise a file rule holds on the inode: its other names, even
		// outside every rule, are readable.
		{op{Name: "read single ro file by another name", Do: "read", Path: l.home + "/single-ro-alias"}, "ok"},
		{op{Name: "sh reads ro, writes rw", Do: "exec", Cmd: sh("cat " + l.ro + "/file.txt > " + l.rw + "/copy")}, "ok"},
		{op{Name: "sh reads home", Do: "exec", Cmd: sh("cat " + l.secret)}, shDenied},
		{op{Name: "sh writes ro", Do: "exec", Cmd: sh("echo x > " + l.ro + "/sh.txt")}, shDenied},
		{op{Name: "grandchild reads home", Do: "exec", Cmd: sh("/bin/sh -c 'cat " + l.secret + "'")}, shDenied},
		// Landlock binds the thread, not the process.
		{op{Name: "other thread reads home", Do: "read-other-thread", Path: l.secret}, "ok"},
		{op{Name: "remove in ro", Do: "remove", Path: l.ro + "/file.txt"}, denied},
	}
}

// testBinary is the executable children run: this test binary, or as nobody
// a copy in a directory nobody can reach.
func testBinary(t *testing.T, forNobody bool) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !forNobody {
		return exe
	}
	dir, err := os.MkdirTemp("", "landlock-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	copied := filepath.Join(dir, "landlock.test")
	// No fork may happen while the copy is open for writing: a child of
	// another test would hold the write descriptor until its exec, and
	// executing the copy would fail with "text file busy" (ETXTBSY).
	syscall.ForkLock.Lock()
	dst, err := os.OpenFile(copied, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return copied
}

// runChild runs spec in a child of exe, as cred when not nil.
func runChild(t *testing.T, exe string, spec childSpec, cred *syscall.Credential) childReport {
	t.Helper()
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(js),
		// A race-instrumented child otherwise sleeps a second at exit.
		"GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.Bytes())
	}
	var rep childReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("child report %q: %v\n%s", out, err, stderr.Bytes())
	}
	return rep
}

// check runs cases in a child twice, each time on a fresh layout: once
// unrestricted, where everything must succeed (so Unix permissions allow it
// all), and once under rules, where each case must get its want.
func check(t *testing.T, exe string, cred *syscall.Credential, cases func(layout) []expect, rules func(layout) Rules) childReport {
	t.Helper()
	run := func(restrict bool) (childReport, []expect) {
		l := newLayout(t)
		cs := cases(l)
		spec := childSpec{Restrict: restrict, Rules: rules(l)}
		for _, c := range cs {
			spec.Ops = append(spec.Ops, c.op)
		}
		return runChild(t, exe, spec, cred), cs
	}

	control, cs := run(false)
	for _, c := range cs {
		if got := control.Results[c.op.Name]; got != "ok" {
			t.Errorf("unrestricted %s: got %s, want ok", c.op.Name, got)
		}
	}
	rep, cs := run(true)
	if rep.RestrictErr != "" {
		t.Fatalf("RestrictThread: %s", rep.RestrictErr)
	}
	for _, c := range cs {
		if got := rep.Results[c.op.Name]; !matches(got, c.want) {
			t.Errorf("restricted %s: got %s, want %s", c.op.Name, got, c.want)
		}
	}
	return rep
}

func TestRestrictThreadFilesystem(t *testing.T) {
	t.Parallel()
	abi := requireLandlock(t)
	rep := check(t, testBinary(t, false), nil, fsCases, layout.rules)
	want := Applied{ABI: abi, FS: true, Net: abi >= 4, Scoped: abi >= 6}
	got := rep.Applied
	if got.ABI != want.ABI || got.FS != want.FS || got.Net != want.Net || got.Scoped != want.Scoped {
		t.Errorf("Applied = %+v, want %+v", got, want)
	}
	if abi >= maxKnownABI && len(got.Missing) != 0 {
		t.Errorf("Applied.Missing = %q, want none on ABI %d", got.Missing, abi)
	}
}

func TestRestrictThreadUnprivileged(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	} // else the tests already run unprivileged
	cases := func(l layout) []expect {
		return []expect{
			{op{Name: "read ro", Do: "read", Path: l.ro + "/file.txt"}, "ok"},
			{op{Name: "write ro", Do: "write", Path: l.ro + "/file.txt"}, denied},
			{op{Name: "create in rw", Do: "create", Path: l.rw + "/new.txt"}, "ok"},
			{op{Name: "write rw", Do: "write", Path: l.rw + "/file.txt"}, "ok"},
			{op{Name: "read home", Do: "read", Path: l.secret}, denied},
			{op{Name: "read /etc/hostname", Do: "read", Path: "/etc/hostname"}, denied},
			{op{Name: "sh reads home", Do: "exec", Cmd: []string{"/bin/sh", "-c", "cat " + l.secret}}, shDenied},
			{op{Name: "sh writes ro", Do: "exec", Cmd: []string{"/bin/sh", "-c", "echo x >> " + l.ro + "/file.txt"}}, shDenied},
		}
	}
	check(t, testBinary(t, true), cred, cases, layout.rules)
}

func TestRestrictThreadNetworkAndScope(t *testing.T) {
	t.Parallel()
	abi := requireLandlock(t)
	if abi < 6 {
		t.Skipf("Landlock ABI %d: TCP rules need ABI 4, scoping ABI 6", abi)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	abstract, err := net.Listen("unix", "@shelldon-landlock-test-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer abstract.Close()
	parent := strconv.Itoa(os.Getpid())

	exe := testBinary(t, false)
	ops := []op{
		{Name: "connect", Do: "connect", Addr: tcp.Addr().String()},
		{Name: "bind", Do: "bind", Addr: "127.0.0.1:0"},
		{Name: "kill parent", Do: "kill", PID: os.Getpid()},
		{Name: "abstract", Do: "abstract", Addr: abstract.Addr().String()},
		{Name: "sh kill parent", Do: "exec", Cmd: []string{"/bin/sh", "-c", "kill -0 " + parent}},
	}
	denials := map[string]string{"connect": denied, "bind": denied, "kill parent": "EPERM", "abstract": "EPERM", "sh kill parent": "exit *not permitted"}
	for _, rules := range []Rules{
		{ReadOnly: systemRO, AllowTCP: false, Scope: true},
		{ReadOnly: systemRO, AllowTCP: true, Scope: false},
	} {
		rep := runChild(t, exe, childSpec{Restrict: true, Rules: rules, Ops: ops}, nil)
		if rep.RestrictErr != "" {
			t.Fatalf("RestrictThread: %s", rep.RestrictErr)
		}
		if rep.Applied.Net == rules.AllowTCP || rep.Applied.Scoped != rules.Scope {
			t.Errorf("AllowTCP=%v Scope=%v: Applied = %+v", rules.AllowTCP, rules.Scope, rep.Applied)
		}
		for _, o := range ops {
			want := "ok"
			if (!rules.AllowTCP && (o.Do == "connect" || o.Do == "bind")) || (rules.Scope && o.Do != "connect" && o.Do != "bind") {
				want = denials[o.Name]
			}
			if got := rep.Results[o.Name]; !matches(got, want) {
				t.Errorf("AllowTCP=%v Scope=%v: %s: got %s, want %s", rules.AllowTCP, rules.Scope, o.Name, got, want)
			}
		}
	}
}

func TestRestrictThreadPaths(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	exe := testBinary(t, false)
	l := newLayout(t)
	readHome := op{Name: "read home", Do: "read", Path: l.secret}
	readRO := op{Name: "read ro", Do: "read", Path: l.ro + "/file.txt"}
	execSh := op{Name: "exec sh", Do: "exec", Cmd: []string{"/bin/sh", "-c", "true"}}

	t.Run("missing path is skipped and reported", func(t *testing.T) {
		t.Parallel()
		nope := filepath.Join(l.base, "nope")
		rep := runChild(t, exe, childSpec{Restrict: true, Rules: Rules{ReadOnly: []string{nope, l.ro}}, Ops: []op{readHome, readRO}}, nil)
		if rep.RestrictErr != "" {
			t.Fatalf("RestrictThread: %s", rep.RestrictErr)
		}
		if !strings.Contains(strings.Join(rep.Applied.Missing, "\n"), strconv.Quote(nope)) {
			t.Errorf("Applied.Missing = %q, want it to name %s", rep.Applied.Missing, nope)
		}
		if got := rep.Results[readRO.Name]; got != "ok" {
			t.Errorf("read ro: got %s, want ok", got)
		}
		if got := rep.Results[readHome.Name]; got != denied {
			t.Errorf("read home: got %s, want %s", got, denied)
		}
	})

	for name, tc := range map[string]struct {
		path, errText string
	}{
		"unopenable path is an error": {l.ro + "/file.txt/sub", "not a directory"},
		"relative path is an error":   {"ro", "not an absolute path"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep := runChild(t, exe, childSpec{Restrict: true, Rules: Rules{ReadOnly: []string{tc.path}}, Ops: []op{readHome}}, nil)
			if !strings.Contains(rep.RestrictErr, tc.errText) {
				t.Errorf("RestrictThread error = %q, want it to contain %q", rep.RestrictErr, tc.errText)
			}
			// The thread is left as it was.
			if got := rep.Results[readHome.Name]; got != "ok" {
				t.Errorf("read home after a failed RestrictThread: got %s, want ok", got)
			}
		})
	}

	t.Run("exec needs the system paths", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			readOnly []string
			want     string
		}{
			{nil, denied},
			{systemRO, "ok"},
		} {
			rep := runChild(t, exe, childSpec{Restrict: true, Rules: Rules{ReadOnly: tc.readOnly, ReadWrite: []string{l.rw}}, Ops: []op{execSh}}, nil)
			if rep.RestrictErr != "" {
				t.Fatalf("RestrictThread: %s", rep.RestrictErr)
			}
			if got := rep.Results[execSh.Name]; got != tc.want {
				t.Errorf("ReadOnly %q: exec /bin/sh: got %s, want %s", tc.readOnly, got, tc.want)
			}
		}
	})
}
