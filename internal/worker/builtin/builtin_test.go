package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

// newRegistry builds a registry with the built-ins over a workspace that
// holds a few ordinary and a few hostile files.
func newRegistry(t *testing.T, now time.Time, loc *time.Location) (*worker.Registry, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	files := map[string]string{
		"notes.txt":           "hello\n",
		"sub/inner.txt":       "inner\n",
		"sub/kilo.bin.txt":    strings.Repeat("k", 1300),
		".env":                "API_KEY=sk-secret\n",
		"secret.pem":          "-----BEGIN PRIVATE KEY-----\n",
		".ssh/config":         "Host *\n",
		"a":                   "aliased\n",
		"empty.txt":           "",
		"binary.dat":          "\x7fELF\x00\x01\x02",
		"latin1.txt":          "caf\xe9\n",
		"big.txt":             strings.Repeat("0123456789abcde\n", 100<<10/16), // 100 KiB
		"runes.txt":           strings.Repeat("a", readFileMax-1) + "é and more",
		"../outside/x.txt":    "outside\n",
		"list/.env":           "x",
		"list/b.txt":          "bb",
		"list/a.txt":          "a",
		"list/line\nbreak.md": "",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"list/zdir", "emptydir"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	for target, name := range map[string]string{
		"/etc": "etc", ".env": "innocent.txt", "../outside": "out", "/dev/zero": "zero", "loop": "loop",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "p"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	reg := worker.NewRegistry()
	if err := Register(reg, Env{Workspace: ws, Now: func() time.Time { return now }, Location: loc}); err != nil {
		t.Fatal(err)
	}
	return reg, dir
}

// call runs a tool the way the worker's loop does: validate the arguments
// against the tool's schema, then run it.
func call(t *testing.T, reg *worker.Registry, name, args string) (string, error) {
	t.Helper()
	tool, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	resolved, err := tool.ResolveSchema()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("bad test arguments %s: %v", args, err)
	}
	if err := resolved.Validate(v); err != nil {
		return "", fmt.Errorf("invalid arguments: %w", err)
	}
	return tool.Run(context.Background(), json.RawMessage(args))
}

type toolCase struct {
	args    string
	want    string // the result, when wantErr is empty
	wantErr string // the error text the model gets (substring)
}

func runCases(t *testing.T, reg *worker.Registry, tool string, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.args, func(t *testing.T) {
			t.Parallel()
			type result struct {
				out string
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := call(t, reg, tool, tc.args)
				done <- result{out, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s(%s) blocked", tool, tc.args)
			}
			if tc.wantErr != "" {
				if r.err == nil || !strings.Contains(r.err.Error(), tc.wantErr) {
					t.Fatalf("%s(%s) = %q, %v; want error containing %q", tool, tc.args, r.out, r.err, tc.wantErr)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("%s(%s) error: %v", tool, tc.args, r.err)
			}
			if diff := cmp.Diff(tc.want, r.out); diff != "" {
				t.Errorf("%s(%s) (-want +got):\n%s", tool, tc.args, diff)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	reg, _ := newRegistry(t, time.Now(), time.UTC)
	var names []string
	for _, tool := range reg.Tools() {
		names = append(names, tool.Name)
		if tool.Tier != contracts.TierFree {
			t.Errorf("%s: tier %q, want free", tool.Name, tool.Tier)
		}
		if len(tool.Description) < 50 {
			t.Errorf("%s: description too short: %q", tool.Name, tool.Description)
		}
	}
	if diff := cmp.Diff([]string{"about", "eval", "get_time", "list_dir", "read_file"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// The parameter names are a contract, and each carries a description.
	type prop struct {
		Description string `json:"description"`
		Type        string `json:"type"`
	}
	type params struct {
		Type       string          `json:"type"`
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required"`
	}
	want := map[string][2][]string{ // properties, required
		"get_time":  {nil, nil},
		"read_file": {{"path"}, {"path"}},
		"list_dir":  {{"path"}, nil},
		"eval":      {{"code"}, {"code"}},
		"about":     {{"topic"}, nil},
	}
	for _, spec := range reg.Specs() {
		var p params
		if err := json.Unmarshal(spec.Parameters, &p); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		var props []string
		for name, pr := range p.Properties {
			props = append(props, name)
			if pr.Type != "string" || pr.Description == "" {
				t.Errorf("%s.%s = %+v; want a described string", spec.Name, name, pr)
			}
		}
		if p.Type != "object" {
			t.Errorf("%s: schema type %q", spec.Name, p.Type)
		}
		if diff := cmp.Diff(want[spec.Name], [2][]string{props, p.Required}); diff != "" {
			t.Errorf("%s: properties, required (-want +got):\n%s", spec.Name, diff)
		}
	}

	if err := Register(reg, Env{Workspace: nil}); err == nil {
		t.Error("Register without a workspace succeeded")
	}
}

func TestRegisterDuplicate(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	reg := worker.NewRegistry()
	if err := Register(reg, Env{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	if err := Register(reg, Env{Workspace: ws}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("second Register = %v; want a duplicate error", err)
	}
}

func TestGetTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 13, 5, 9, 0, time.UTC)
	reg, _ := newRegistry(t, now, time.FixedZone("CET", 3600))
	runCases(t, reg, "get_time", []toolCase{
		{args: `{}`, want: "local: 2026-03-01T14:05:09+01:00 (CET)\nweekday: Sunday\nutc: 2026-03-01T13:05:09Z"},
		{args: `{"x":1}`, wantErr: "invalid arguments"},
	})
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	reg, _ := newRegistry(t, time.Now(), time.UTC)
	big := strings.Repeat("0123456789abcde\n", readFileMax/16)
	runCases(t, reg, "read_file", []toolCase{
		{args: `{"path":"notes.txt"}`, want: "hello\n"},
		{args: `{"path":"./sub/../sub/inner.txt"}`, want: "inner\n"},
		{args: `{"path":"empty.txt"}`, want: "(empty file)"},
		{args: `{"path":"latin1.txt"}`, want: "caf\uFFFD\n"},
		{args: `{"path":"big.txt"}`, want: big + "\n[truncated: file is 102400 bytes; showing the first 65536]"},
		{args: `{"path":"runes.txt"}`, want: strings.Repeat("a", readFileMax-1) + "\n[truncated: file is 65546 bytes; showing the first 65535]"},
		{args: `{"path":"binary.dat"}`, wantErr: `read_file: "binary.dat" looks binary (a NUL byte in the first 8 KiB); read_file shows text files only`},

		{args: `{"path":"../x"}`, wantErr: `read_file: "../x": path escapes the workspace`},
		{args: `{"path":"a/../../x"}`, wantErr: `read_file: "a/../../x": path escapes the workspace`},
		{args: `{"path":"../outside/x.txt"}`, wantErr: "path escapes the workspace"},
		{args: `{"path":"/etc/passwd"}`, wantErr: `read_file: "/etc/passwd": absolute path outside the workspace; paths are relative to the workspace`},
		{args: `{"path":"etc/passwd"}`, wantErr: `read_file: "etc/passwd": path escapes the workspace (through the symlink "etc" -> "/etc")`},
		{args: `{"path":"out/x.txt"}`, wantErr: `path escapes the workspace (through the symlink "out" -> "../outside")`},
		{args: `{"path":"zero"}`, wantErr: `read_file: "zero": path escapes the workspace`},
		{args: `{"path":"loop"}`, wantErr: `read_file: "loop": too many levels of symbolic links`},
		{args: `{"path":"secret.pem"}`, wantErr: `read_file: "secret.pem" is on the credential deny list`},
		{args: `{"path":".ENV"}`, wantErr: `read_file: ".ENV" is on the credential deny list`},
		{args: `{"path":"Id_Rsa"}`, wantErr: `is on the credential deny list`},
		{args: `{"path":"X.PEM"}`, wantErr: `is on the credential deny list`},
		{args: `{"path":".ssh/config"}`, wantErr: `read_file: ".ssh/config": ".ssh" is on the credential deny list`},
		{args: `{"path":"innocent.txt"}`, wantErr: `read_file: "innocent.txt": resolves to ".env", which is on the credential deny list`},
		{args: `{"path":"a"}`, wantErr: `read_file: "a" has 2 hard links; refusing files with more than one`},
		{args: `{"path":"p"}`, wantErr: `read_file: "p": not a regular file (named pipe)`},
		{args: `{"path":"sub"}`, wantErr: `read_file: "sub": not a regular file (directory)`},
		{args: `{"path":"missing.txt"}`, wantErr: `read_file: "missing.txt": no such file or directory`},
		{args: `{"path":"a\u0000b"}`, wantErr: `read_file: "a\x00b": invalid path (it contains a NUL byte)`},
		{args: `{"path":"` + strings.Repeat("n", 300) + `"}`, wantErr: "file name too long"},
		{args: `{}`, wantErr: "invalid arguments"},
		{args: `{"path":7}`, wantErr: "invalid arguments"},
	})
}

func TestListDir(t *testing.T) {
	t.Parallel()
	reg, dir := newRegistry(t, time.Now(), time.UTC)
	runCases(t, reg, "list_dir", []toolCase{
		{args: `{"path":"list"}`, want: "a.txt  1 B\nb.txt  2 B\n\"line\\nbreak.md\"  0 B\nzdir/"},
		{args: `{"path":"sub"}`, want: "inner.txt  6 B\nkilo.bin.txt  1.3 KiB"},
		{args: `{"path":"emptydir"}`, want: "(empty directory)"},
		{args: `{"path":"notes.txt"}`, wantErr: `list_dir: "notes.txt": not a directory`},
		{args: `{"path":".."}`, wantErr: `list_dir: "..": path escapes the workspace`},
		{args: `{"path":"/etc"}`, wantErr: `list_dir: "/etc": absolute path outside the workspace`},
		{args: `{"path":"etc"}`, wantErr: `list_dir: "etc": path escapes the workspace (through the symlink "etc" -> "/etc")`},
		{args: `{"path":"out"}`, wantErr: "path escapes the workspace"},
		{args: `{"path":".ssh"}`, wantErr: `list_dir: ".ssh" is on the credential deny list`},
		{args: `{"path":"missing"}`, wantErr: `list_dir: "missing": no such file or directory`},
	})

	for _, args := range []string{`{}`, `{"path":""}`, `{"path":"."}`, `{"path":"` + dir + `"}`} {
		out, err := call(t, reg, "list_dir", args)
		if err != nil {
			t.Fatalf("list_dir(%s): %v", args, err)
		}
		for _, line := range []string{"notes.txt  6 B", "sub/", "etc  (symlink)", "p  (special file)", "big.txt  100.0 KiB"} {
			if !strings.Contains(out, line+"\n") {
				t.Errorf("list_dir(%s) lacks %q:\n%s", args, line, out)
			}
		}
		for _, denied := range []string{".env", "secret.pem", ".ssh"} {
			if strings.Contains(out, denied+"  ") || strings.Contains(out, denied+"/") {
				t.Errorf("list_dir(%s) shows %q:\n%s", args, denied, out)
			}
		}
	}
}

func TestListDirTruncated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 1001 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	reg := worker.NewRegistry()
	if err := Register(reg, Env{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	out, err := call(t, reg, "list_dir", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != listDirMax+1 || lines[0] != "f0000  0 B" || lines[listDirMax-1] != "f0499  0 B" {
		t.Fatalf("list_dir: %d lines, first %q, last entry %q", len(lines), lines[0], lines[len(lines)-2])
	}
	if want := "[truncated: showing the first 500 entries by name]"; lines[listDirMax] != want {
		t.Errorf("note = %q, want %q", lines[listDirMax], want)
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1229: "1.2 KiB", 5 << 20: "5.0 MiB", 5 << 30: "5.0 GiB", 3 << 50: "3072.0 TiB",
	} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAbout(t *testing.T) {
	t.Parallel()
	tool, err := aboutTool(Env{})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		``:                                 "Topics: providers, approvals, sandbox, files, gate, quarantine, skills, memory, telegram, tools",
		`{"topic":"memory"}`:               "shelldon memory list",
		`{"topic":"providers"}`:            "fallback",
		`{"topic":"Telegram"}`:             "@BotFather",
		`{"topic":"quarantine"}`:           "shelldon tools restore",
		`{"topic":"switch"}`:               "provider.kind",
		`{"topic":"where do skills live"}`: "",
	}
	for args, want := range cases {
		if args == "" {
			args = "{}"
		}
		out, err := tool.Run(context.Background(), []byte(args))
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "topics:") {
				t.Errorf("%s: %q %v, want a list of topics", args, out, err)
			}
			continue
		}
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("%s: %q %v, want %q", args, out, err, want)
		}
	}
}
