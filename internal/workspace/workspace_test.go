package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixture builds a hostile workspace beside a sibling directory that must
// stay out of reach, and opens it.
func fixture(t *testing.T) (*Root, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("notes.txt", "hello\n")
	write("sub/inner.txt", "inner\n")
	write("sub/deeper/leaf.txt", "leaf\n")
	write(".env", "API_KEY=sk-secret\n")
	write(".ENV", "API_KEY=sk-secret\n")
	write("secret.pem", "-----BEGIN PRIVATE KEY-----\n")
	write("X.PEM", "key\n")
	write("Id_Rsa", "key\n")
	write(".ssh/config", "Host *\n")
	write(".docker/config.json", "{}\n")
	write("docker/config.json", "{}\n")
	write("a", "aliased\n")
	write("one-link.txt", "one\n")
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	link("/etc", "etc")
	link("/dev/zero", "zero")
	link(outside, "outside-abs")
	link("../outside/secret.txt", "outside-rel")
	link("sub/../../outside", "outside-deep")
	link("..", "up")
	link("..", "sub/up")
	link("chain2", "chain1")
	link("chain3", "chain2")
	link("sub/inner.txt", "chain3")
	link("loop2", "loop1")
	link("loop1", "loop2")
	link("self", "self")
	link(".env", "innocent.txt")
	link("sub", "subl")
	link(".ssh", "dotfiles")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, outside
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("Open(missing) succeeded")
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Open(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open(file) = %v, want not a directory", err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Path() != dir {
		t.Errorf("Path() = %q, want %q", r.Path(), dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("Open created something")
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	r, outside := fixture(t)
	long := strings.Repeat("a", 300)
	tests := []struct {
		name    string
		want    string
		wantErr error
		msg     string // substring of the error message
	}{
		{name: "", want: "."},
		{name: ".", want: "."},
		{name: "notes.txt", want: "notes.txt"},
		{name: "./sub//inner.txt/", want: "sub/inner.txt"},
		{name: "sub/../notes.txt", want: "notes.txt"},
		{name: "sub/up/notes.txt", want: "notes.txt"},
		{name: "subl/inner.txt", want: "sub/inner.txt"},
		{name: "subl/..", want: "."},
		{name: "chain1", want: "sub/inner.txt"},
		{name: "new-file.txt", want: "new-file.txt"},
		{name: "sub/new-file.txt", want: "sub/new-file.txt"},
		{name: r.Path() + "/sub/inner.txt", want: "sub/inner.txt"},
		{name: r.Path(), want: "."},

		{name: "..", wantErr: ErrEscapes, msg: `"..": path escapes the workspace`},
		{name: "../x", wantErr: ErrEscapes, msg: `"../x": path escapes the workspace`},
		{name: "a/../../x", wantErr: ErrEscapes},
		{name: "sub/../../ws/notes.txt", wantErr: ErrEscapes},
		{name: "/etc/passwd", wantErr: ErrEscapes, msg: `"/etc/passwd": absolute path outside the workspace; paths are relative to the workspace`},
		{name: outside + "/secret.txt", wantErr: ErrEscapes},
		{name: r.Path() + "/../outside/secret.txt", wantErr: ErrEscapes},
		{name: "etc/passwd", wantErr: ErrEscapes, msg: `through the symlink "etc" -> "/etc"`},
		{name: "zero", wantErr: ErrEscapes},
		{name: "outside-abs/secret.txt", wantErr: ErrEscapes},
		{name: "outside-rel", wantErr: ErrEscapes},
		{name: "outside-deep/secret.txt", wantErr: ErrEscapes},
		{name: "up", wantErr: ErrEscapes},
		{name: "up/ws/notes.txt", wantErr: ErrEscapes},
		{name: "sub/up/up/x", wantErr: ErrEscapes},

		{name: "loop1", wantErr: ErrLoop, msg: "too many levels of symbolic links"},
		{name: "self/x", wantErr: ErrLoop},

		{name: ".env", wantErr: ErrDenied, msg: `".env" is on the credential deny list`},
		{name: ".ENV", wantErr: ErrDenied},
		{name: ".env.local", wantErr: ErrDenied},
		{name: "secret.pem", wantErr: ErrDenied, msg: `"secret.pem" is on the credential deny list`},
		{name: "X.PEM", wantErr: ErrDenied},
		{name: "Id_Rsa", wantErr: ErrDenied},
		{name: "sub/id_ed25519.pub", wantErr: ErrDenied},
		{name: ".ssh/config", wantErr: ErrDenied, msg: `".ssh/config": ".ssh" is on the credential deny list`},
		{name: ".SSH/config", wantErr: ErrDenied},
		{name: ".docker/config.json", wantErr: ErrDenied},
		{name: "Credentials.json", wantErr: ErrDenied},
		{name: "shelldon.db-wal", wantErr: ErrDenied},
		{name: ".shelldon/config.yaml", wantErr: ErrDenied},
		{name: "sub/../.env", wantErr: ErrDenied},
		{name: "innocent.txt", wantErr: ErrDenied, msg: `"innocent.txt": resolves to ".env", which is on the credential deny list`},
		{name: "dotfiles/config", wantErr: ErrDenied},
		{name: "vault.\u212Adbx", wantErr: ErrDenied}, // the Kelvin sign folds like k

		{name: "missing/x", wantErr: fs.ErrNotExist, msg: `"missing/x": no such file or directory`},
		{name: "notes.txt/x", wantErr: syscall.ENOTDIR, msg: `"notes.txt" is not a directory`},
		{name: "a\x00b", wantErr: fs.ErrInvalid, msg: "NUL byte"},
		{name: long + "/x", wantErr: syscall.ENAMETOOLONG},
		{name: strings.Repeat("a/", 3000), wantErr: syscall.ENAMETOOLONG, msg: "path too long"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.40q", tt.name), func(t *testing.T) {
			t.Parallel()
			got, err := r.Resolve(tt.name)
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Resolve(%q) = %q, %v; want error %v", tt.name, got, err, tt.wantErr)
			}
			if got != "" {
				t.Errorf("Resolve(%q) returned %q with an error", tt.name, got)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Resolve(%q) error %q does not contain %q", tt.name, err, tt.msg)
			}
			if strings.Contains(err.Error(), r.Path()) && !strings.HasPrefix(tt.name, "/") {
				t.Errorf("error %q leaks the root path", err)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	r, _ := fixture(t)
	dir := r.Path()

	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })

	tests := []struct {
		name    string
		want    string
		wantErr error
		msg     string
	}{
		{name: "notes.txt", want: "hello\n"},
		{name: "chain1", want: "inner\n"},
		{name: "subl/deeper/leaf.txt", want: "leaf\n"},
		{name: "one-link.txt", want: "one\n"},
		{name: "pipe", wantErr: ErrNotRegular, msg: `"pipe": not a regular file (named pipe)`},
		{name: "sock", wantErr: ErrNotRegular, msg: "(socket)"},
		{name: "sub", wantErr: ErrNotRegular, msg: `"sub": not a regular file (directory)`},
		{name: ".", wantErr: ErrNotRegular, msg: "(directory)"},
		{name: "subl/..", wantErr: ErrNotRegular},
		{name: "a", wantErr: ErrHardLink, msg: `"a" has 2 hard links; refusing files with more than one`},
		{name: "b", wantErr: ErrHardLink},
		{name: "zero", wantErr: ErrEscapes},
		{name: "etc/passwd", wantErr: ErrEscapes},
		{name: "/etc/passwd", wantErr: ErrEscapes},
		{name: "outside-rel", wantErr: ErrEscapes},
		{name: "innocent.txt", wantErr: ErrDenied},
		{name: ".ENV", wantErr: ErrDenied},
		{name: "missing.txt", wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			type result struct {
				data []byte
				err  error
			}
			done := make(chan result, 1)
			go func() {
				data, _, err := r.ReadFile(tt.name, 1<<16)
				done <- result{data, err}
			}()
			var res result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadFile(%q) blocked", tt.name)
			}
			if tt.wantErr == nil {
				if res.err != nil || string(res.data) != tt.want {
					t.Fatalf("ReadFile(%q) = %q, %v; want %q", tt.name, res.data, res.err, tt.want)
				}
				return
			}
			if !errors.Is(res.err, tt.wantErr) || !strings.Contains(res.err.Error(), tt.msg) {
				t.Fatalf("ReadFile(%q) error = %v; want %v containing %q", tt.name, res.err, tt.wantErr, tt.msg)
			}
		})
	}
}

func TestReadFileCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "huge"))
	if err != nil {
		t.Fatal(err)
	}
	const size = 5 << 30
	if err := f.Truncate(size); err != nil {
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	os.WriteFile(filepath.Join(dir, "small"), []byte("0123456789"), 0o644)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	data, n, err := r.ReadFile("huge", 1<<16)
	if err != nil || len(data) != 1<<16 || n != size {
		t.Fatalf("ReadFile(huge) = %d bytes, size %d, %v; want %d bytes, size %d", len(data), n, err, 1<<16, size)
	}
	for _, tt := range []struct {
		limit int64
		want  string
	}{{4, "0123"}, {100, "0123456789"}, {0, ""}, {-1, ""}} {
		data, n, err := r.ReadFile("small", tt.limit)
		if err != nil || string(data) != tt.want || n != 10 {
			t.Errorf("ReadFile(small, %d) = %q, %d, %v; want %q, 10", tt.limit, data, n, err, tt.want)
		}
	}
}

func TestReadFileDevice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mknod(filepath.Join(dir, "zero"), syscall.S_IFCHR|0o666, int(1<<8|5)); err != nil {
		t.Skipf("mknod needs privileges: %v", err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.ReadFile("zero", 1<<16); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "character device") {
		t.Fatalf("ReadFile(device) = %v; want ErrNotRegular (character device)", err)
	}
}

func TestSwapDetected(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	os.Mkdir(filepath.Join(dir, "b"), 0o755)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fiB, _ := root.Lstat("b")
	// What was looked up ("b") is not what gets opened ("a").
	if _, err := openDir(root, "a", fiB); !errors.Is(err, ErrChanged) {
		t.Fatalf("openDir with a swapped directory = %v; want ErrChanged", err)
	}
}

func TestListDir(t *testing.T) {
	t.Parallel()
	r, _ := fixture(t)
	got, truncated, err := r.ListDir("sub", 100)
	if err != nil || truncated {
		t.Fatalf("ListDir(sub) = %v, %v", truncated, err)
	}
	want := []Entry{
		{Name: "deeper", Kind: "dir"},
		{Name: "inner.txt", Kind: "file", Size: 6},
		{Name: "up", Kind: "symlink"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListDir(sub) (-want +got):\n%s", diff)
	}

	// The root listing omits denied names and shows the rest.
	got, _, err = r.ListDir("", 1000)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, e := range got {
		names[e.Name] = e.Kind
	}
	for _, denied := range []string{".env", ".ENV", "secret.pem", "X.PEM", "Id_Rsa", ".ssh"} {
		if _, ok := names[denied]; ok {
			t.Errorf("ListDir(.) shows denied %q", denied)
		}
	}
	for name, kind := range map[string]string{"notes.txt": "file", "sub": "dir", "etc": "symlink", "pipe": "other", ".docker": "dir", "innocent.txt": "symlink"} {
		if names[name] != kind {
			t.Errorf("ListDir(.)[%q] = %q, want %q", name, names[name], kind)
		}
	}
	if got, _, _ := r.ListDir(".docker", 10); len(got) != 0 {
		t.Errorf("ListDir(.docker) = %v, want config.json omitted", got)
	}
	if got, _, _ := r.ListDir("docker", 10); len(got) != 1 {
		t.Errorf("ListDir(docker) = %v, want config.json shown", got)
	}

	for _, tt := range []struct {
		name    string
		wantErr error
	}{
		{"notes.txt", syscall.ENOTDIR},
		{"..", ErrEscapes},
		{"etc", ErrEscapes},
		{".ssh", ErrDenied},
		{"dotfiles", ErrDenied},
		{"loop1", ErrLoop},
		{"missing", fs.ErrNotExist},
	} {
		if _, _, err := r.ListDir(tt.name, 10); !errors.Is(err, tt.wantErr) {
			t.Errorf("ListDir(%q) = %v; want %v", tt.name, err, tt.wantErr)
		}
	}
}

func TestListDirCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 1200
	for i := n - 1; i >= 0; i-- {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.key"), nil, 0o644) // denied: sorts first but never shown
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, truncated, err := r.ListDir(".", 500)
	if err != nil || !truncated || len(got) != 500 {
		t.Fatalf("ListDir = %d entries, truncated %v, %v; want 500, true", len(got), truncated, err)
	}
	for i, e := range got {
		if want := fmt.Sprintf("f%04d", i); e.Name != want {
			t.Fatalf("entry %d = %q, want %q", i, e.Name, want)
		}
	}
	got, truncated, err = r.ListDir(".", n)
	if err != nil || truncated || len(got) != n {
		t.Fatalf("ListDir(all) = %d entries, truncated %v, %v; want %d, false", len(got), truncated, err, n)
	}
}

func TestDeniedName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		parent, name string
		want         bool
	}{
		{"", ".env", true},
		{"", ".env.production", true},
		{"", ".environment", false},
		{"", "env", false},
		{"", ".Gnupg", true},
		{"", ".AWS", true},
		{"", ".netrc", true},
		{"", ".git-credentials", true},
		{"", ".npmrc", true},
		{"", ".pypirc", true},
		{"", ".htpasswd", true},
		{"", "shadow", false}, // a file rule: see TestDeniedFile
		{"", "shadow.txt", false},
		{"", "id_rsa", true},
		{"", "id_rsa.pub", true},
		{"", "ID_ECDSA", true},
		{"", "cert.p12", true},
		{"", "cert.PFX", true},
		{"", "vault.kdbx", true},
		{"", "server.key", true},
		{"", "keys.txt", false},
		{"", "secrets.yaml", false}, // a file rule: see TestDeniedFile
		{"", "SECRETS", false},      // a file rule: see TestDeniedFile
		{"", "my-secrets.yaml", false},
		{"", "shelldon.db", true},
		{"", "shelldon.db-shm", true},
		{"", ".shelldon", true},
		{"", "config.json", false},
		{".docker", "config.json", true},
		{".Docker", "Config.JSON", true},
		{"", "notes.txt", false},
	} {
		if got := deniedName(tt.parent, tt.name); got != tt.want {
			t.Errorf("deniedName(%q, %q) = %v, want %v", tt.parent, tt.name, got, tt.want)
		}
	}
}

func TestDeniedFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dirs []string
		leaf string
		want string
	}{
		{nil, "shadow", "shadow"},
		{nil, "SECRETS", "SECRETS"},
		{nil, "secrets.yaml", "secrets.yaml"},
		{nil, "Secrets.Go", ""},
		{nil, "secrets.py", "secrets.py"},
		{nil, "notes.txt", ""},
		{[]string{"web", "shadow"}, "notes.txt", ""},
		{[]string{"a", "Secrets", "b"}, "notes.txt", "Secrets"},
		{[]string{"a", "Secrets", "b"}, "main.PY", ""},
		{[]string{"secrets"}, "secrets.py", "secrets.py"},
		{[]string{"kubeconfig.d"}, "prod", "kubeconfig.d"},
	} {
		if got, _ := deniedFile(tt.dirs, tt.leaf); got != tt.want {
			t.Errorf("deniedFile(%q, %q) = %q, want %q", tt.dirs, tt.leaf, got, tt.want)
		}
	}
}
