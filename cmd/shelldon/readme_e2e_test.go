package main

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// The README's API examples name the daemon and the token this way; the
// test puts its own daemon's in their place.
const (
	readmeAddr      = "127.0.0.1:7433"
	readmeTokenVar  = "SHELLDON_API_TOKEN"
	readmeRequestID = "ID" // $ID: the id of a request waiting for the owner
)

// TestReadmeAPIExamples runs every curl command in the README's shell
// blocks, in order, against a real daemon with a fake provider: each must
// answer 2xx with JSON holding the top-level keys of the example answer
// shown under it ("# {...}"). The commands are parsed, not run by a shell
// or curl, and sent as curl would send them (with -d and no Content-Type,
// curl says application/x-www-form-urlencoded, which the API refuses).
// A pending request is set up first, so the examples that need an id
// ($ID) have one.
func TestReadmeAPIExamples(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := readmeCurls(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	var posts int
	for _, ex := range examples {
		if ex.hasBody {
			posts++
		}
	}
	if len(examples) < 8 || posts < 3 {
		t.Fatalf("found %d curl examples (%d with a body) in the README; the parser no longer finds them", len(examples), posts)
	}

	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		switch {
		case len(last.ToolResults) > 0:
			return brokertest.Reply{Text: "Done: " + last.ToolResults[0].Content}
		case strings.Contains(last.Text, "write the note"):
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "w1", Name: contracts.ToolWriteFile, Arguments: `{"path":"note.txt","content":"hi"}`}}}
		}
		return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "t1", Name: "get_time", Arguments: `{}`}}}
	})
	d := startServe(t, home(t, "openai", srv.BaseURL(), ""))
	status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "setup", "text": "write the note"})
	if status != 200 {
		t.Fatalf("set up a request: %d %v", status, out)
	}
	vars := map[string]string{readmeTokenVar: d.token, readmeRequestID: approvalID(t, out)}

	client := &http.Client{
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for _, ex := range examples {
		req, err := ex.request(vars, d.addr)
		if err != nil {
			t.Errorf("README.md:%d: %v", ex.line, err)
			continue
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("README.md:%d: %v", ex.line, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got map[string]any
		jerr := json.Unmarshal(body, &got)
		switch {
		case resp.StatusCode/100 != 2:
			t.Errorf("README.md:%d: %s %s: status %d: %s", ex.line, req.Method, req.URL.Path, resp.StatusCode, body)
		case !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || jerr != nil:
			t.Errorf("README.md:%d: %s %s: not a JSON object (%s, %v): %s", ex.line, req.Method, req.URL.Path, resp.Header.Get("Content-Type"), jerr, body)
		default:
			for _, k := range ex.keys {
				if _, ok := got[k]; !ok {
					t.Errorf("README.md:%d: the example answer has %q, the daemon's does not: %s", ex.line, k, body)
				}
			}
		}
	}
}

// TestReadmeBuildCommand runs the README's build command: it makes the
// static binary the README promises (no interpreter, no shared library),
// and, built in a git checkout, `shelldon version` names the commit
// (HEAD) and whether the checkout had uncommitted changes.
func TestReadmeBuildCommand(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var build []string
	for line := range strings.SplitSeq(string(readme), "\n") {
		if cmd, _, _ := strings.Cut(line, "&&"); strings.Contains(cmd, "go build") {
			if build, err = shellWords(strings.TrimSpace(cmd)); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	var environ []string
	for len(build) > 0 && strings.Contains(build[0], "=") {
		environ, build = append(environ, build[0]), build[1:]
	}
	if len(build) < 2 || build[0] != "go" || build[1] != "build" || !slices.Contains(environ, "CGO_ENABLED=0") {
		t.Fatalf("the README's build command is %q %q; want CGO_ENABLED=0 go build ... (cgo makes a dynamic binary)", environ, build)
	}
	head, gitErr := exec.Command("git", "rev-parse", "HEAD").Output()
	status, statusErr := exec.Command("git", "status", "--porcelain").Output()
	inCheckout := gitErr == nil && statusErr == nil
	// The README's flags and package, with the binary written here.
	bin := filepath.Join(t.TempDir(), "shelldon")
	args := []string{"build", "-o", bin}
	if inCheckout {
		// Whatever GOFLAGS says (-buildvcs=false), as a user's build would.
		args = append(args, "-buildvcs=true")
	}
	for i := 2; i < len(build); i++ {
		if build[i] == "-o" {
			i++
			continue
		}
		args = append(args, build[i])
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), environ...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", cmd.Args, err, out)
	}

	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		libs, _ := f.ImportedLibraries()
		interp := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
		f.Close()
		if interp || len(libs) > 0 {
			t.Errorf("the README's build makes a dynamic binary (interpreter %v, libraries %q), not the static one it promises", interp, libs)
		}
	}

	if !inCheckout {
		t.Skip("not a git checkout: no revision to check")
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	rev, dirty := strings.TrimSpace(string(head)), len(strings.TrimSpace(string(status))) > 0
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("version:\n%s", out)
	}
	// The commit's tag, or a pseudo-version naming the commit
	// (v0.0.0-20261201144232-56e7cb999920), +dirty with changes.
	version, _, _ := strings.Cut(strings.TrimPrefix(lines[0], "shelldon "), " ")
	pseudo := strings.Count(strings.TrimSuffix(version, "+dirty"), "-") >= 2
	if !strings.HasPrefix(version, "v") || pseudo && !strings.Contains(version, rev[:12]) || strings.HasSuffix(version, "+dirty") != dirty {
		t.Errorf("version %q: want the module version of %s (uncommitted changes: %v)", lines[0], rev[:12], dirty)
	}
	if !strings.HasPrefix(lines[1], "revision "+rev) || strings.Contains(lines[1], "with uncommitted changes") != dirty {
		t.Errorf("second line %q: want the revision %s (uncommitted changes: %v)", lines[1], rev, dirty)
	}
}

// curlExample is one curl command of the README.
type curlExample struct {
	line    int // where it starts in the README
	words   []string
	hasBody bool
	keys    []string // the top-level keys of the example answer under it
}

// readmeCurls finds the curl commands in the ```sh (or bash) blocks of a
// README, a line ending in \ continued on the next, each with the keys of
// the "# {...}" answer that follows it.
func readmeCurls(readme string) ([]curlExample, error) {
	var out []curlExample
	lines := strings.Split(readme, "\n")
	inShell := false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if fence, ok := strings.CutPrefix(line, "```"); ok {
			if inShell || fence == "" {
				inShell = false
			} else {
				inShell = fence == "sh" || fence == "bash" || fence == "shell"
			}
			continue
		}
		if !inShell || !strings.HasPrefix(line, "curl ") {
			continue
		}
		start := i
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		words, err := shellWords(line)
		if err != nil {
			return nil, fmt.Errorf("README.md:%d: %v", start+1, err)
		}
		ex := curlExample{line: start + 1, words: words, hasBody: slices.ContainsFunc(words, func(w string) bool {
			return w == "-d" || w == "--data" || w == "--data-raw" || w == "--json"
		})}
		if i+1 < len(lines) {
			if answer, ok := strings.CutPrefix(strings.TrimSpace(lines[i+1]), "# {"); ok {
				ex.keys = topLevelKeys("{" + answer)
			}
		}
		out = append(out, ex)
	}
	return out, nil
}

// request builds what curl would send for the example, with vars for the
// shell's variables and addr in place of the README's address.
func (ex curlExample) request(vars map[string]string, addr string) (*http.Request, error) {
	args := make([]string, len(ex.words))
	for i, w := range ex.words {
		var err error
		if args[i], err = expand(w, vars); err != nil {
			return nil, err
		}
	}
	if len(args) == 0 || args[0] != "curl" {
		return nil, errors.New("not a curl command")
	}
	method, rawURL := "", ""
	header := http.Header{}
	var data []string
	isJSON := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return args[i], nil
		}
		var err error
		switch a {
		case "-s", "--silent", "-S", "--show-error", "-sS", "-f", "--fail", "-fsS":
		case "-X", "--request":
			method, err = value()
		case "-H", "--header":
			var h string
			if h, err = value(); err == nil {
				k, v, ok := strings.Cut(h, ":")
				if !ok {
					return nil, fmt.Errorf("header %q has no colon", h)
				}
				header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		case "-d", "--data", "--data-raw", "--json":
			var v string
			if v, err = value(); err == nil {
				if strings.HasPrefix(v, "@") && a != "--data-raw" {
					return nil, fmt.Errorf("%s %s reads a file; write the body inline", a, v)
				}
				data = append(data, v)
				isJSON = isJSON || a == "--json"
			}
		default:
			if strings.HasPrefix(a, "-") {
				return nil, fmt.Errorf("curl option %s: the README test does not know it (teach curlExample.request)", a)
			}
			if rawURL != "" {
				return nil, fmt.Errorf("two URLs: %s and %s", rawURL, a)
			}
			rawURL = a
		}
		if err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host != readmeAddr {
		return nil, fmt.Errorf("URL %q: the examples call the daemon at http://%s", rawURL, readmeAddr)
	}
	u.Host = addr
	var body io.Reader
	if data != nil {
		body = strings.NewReader(strings.Join(data, "&"))
		if method == "" {
			method = http.MethodPost
		}
		// What curl sends when the command does not say.
		if header.Get("Content-Type") == "" {
			ct := "application/x-www-form-urlencoded"
			if isJSON {
				ct = "application/json"
			}
			header.Set("Content-Type", ct)
		}
	}
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}

// Markers of the shell's variables within a word: shellWords leaves
// "$NAME" outside single quotes as varMark+NAME+varEnd for expand.
const (
	varMark = "\x00"
	varEnd  = "\x01"
)

// shellWords splits a command line as sh would, for the simple commands
// of a README: words, '...' (literal), "..." (with $NAME and \ escapes),
// \ outside quotes, and $NAME or ${NAME} marked for expand. Anything that
// would need a shell (pipes, redirections, command substitution, ...) is
// an error.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	variable := func(rest string) (string, int, error) {
		name, n := "", 0
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", 0, errors.New("unterminated ${")
			}
			name, n = rest[1:end], end+1
		} else {
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= 'a' && rest[n] <= 'z' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			name = rest[:n]
		}
		if name == "" {
			return "", 0, fmt.Errorf("$ not followed by a variable name in %q", line)
		}
		return varMark + name + varEnd, n, nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			continue
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated '")
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				switch {
				case line[i] == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\", line[i+1]) >= 0:
					i++
					w.WriteByte(line[i])
				case line[i] == '$':
					v, n, err := variable(line[i+1:])
					if err != nil {
						return nil, err
					}
					w.WriteString(v)
					i += n
				case line[i] == '`':
					return nil, errors.New("command substitution needs a shell")
				default:
					w.WriteByte(line[i])
				}
			}
			if i >= len(line) {
				return nil, errors.New(`unterminated "`)
			}
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
		case c == '$':
			v, n, err := variable(line[i+1:])
			if err != nil {
				return nil, err
			}
			w.WriteString(v)
			i += n
		case strings.IndexByte("|&;<>()`", c) >= 0:
			return nil, fmt.Errorf("%q needs a shell; keep the README's curl examples simple commands", c)
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// expand puts the value of each variable shellWords marked in w; a
// variable vars lacks is an error, so the README uses only the
// placeholders it documents.
func expand(w string, vars map[string]string) (string, error) {
	var b strings.Builder
	for {
		before, rest, ok := strings.Cut(w, varMark)
		b.WriteString(before)
		if !ok {
			return b.String(), nil
		}
		name, after, _ := strings.Cut(rest, varEnd)
		v, known := vars[name]
		if !known {
			return "", fmt.Errorf("$%s is not a placeholder the README documents", name)
		}
		b.WriteString(v)
		w = after
	}
}

// topLevelKeys are the keys of the outermost object of an example answer
// such as {"turn":3,"usage":{...},"approvals":[]}: the text after it, and
// the "..." standing for what is left out, are ignored.
func topLevelKeys(answer string) []string {
	var keys []string
	depth := 0
	for i := 0; i < len(answer); i++ {
		switch c := answer[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return keys
			}
		case '"':
			end := i + 1
			for end < len(answer) && answer[end] != '"' {
				if answer[end] == '\\' {
					end++
				}
				end++
			}
			if depth == 1 && end+1 < len(answer) && answer[end+1] == ':' {
				keys = append(keys, answer[i+1:end])
			}
			i = end
		}
	}
	return keys
}

// TestReadmeCurlParsing: the parser takes a command as sh and curl would,
// and refuses what it cannot take that way.
func TestReadmeCurlParsing(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"T": "tok", "ID": "abc"}
	cases := []struct {
		line                    string
		method, path, body, err string
		header                  map[string]string
	}{
		{line: `curl -s -H "Authorization: Bearer $T" http://127.0.0.1:7433/api/tools`, method: "GET", path: "/api/tools",
			header: map[string]string{"Authorization": "Bearer tok"}},
		{line: `curl -s -H "Authorization: Bearer ${T}" -d '{"a":"$T"}' 'http://127.0.0.1:7433/api/approvals/'$ID`, method: "POST",
			path: "/api/approvals/abc", body: `{"a":"$T"}`, header: map[string]string{"Authorization": "Bearer tok", "Content-Type": "application/x-www-form-urlencoded"}},
		{line: `curl -X PUT -H 'Content-Type: application/json' --data "{\"x\":1}" http://127.0.0.1:7433/x`, method: "PUT", path: "/x",
			body: `{"x":1}`, header: map[string]string{"Content-Type": "application/json"}},
		{line: `curl --json '{}' http://127.0.0.1:7433/x`, method: "POST", path: "/x", body: `{}`, header: map[string]string{"Content-Type": "application/json"}},
		{line: `curl http://127.0.0.1:7433/x | jq .`, err: "needs a shell"},
		{line: `curl -d @body.json http://127.0.0.1:7433/x`, err: "reads a file"},
		{line: `curl -k http://127.0.0.1:7433/x`, err: "does not know it"},
		{line: `curl -H "X: $OTHER" http://127.0.0.1:7433/x`, err: "$OTHER is not a placeholder"},
		{line: `curl http://localhost:8080/x`, err: "the examples call the daemon at"},
		{line: `curl -H 'X: 1 http://127.0.0.1:7433/x`, err: "unterminated '"},
	}
	for _, tc := range cases {
		req, err := func() (*http.Request, error) {
			words, err := shellWords(tc.line)
			if err != nil {
				return nil, err
			}
			return curlExample{words: words}.request(vars, "127.0.0.1:1")
		}()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		var body string
		if req.Body != nil {
			b, _ := io.ReadAll(req.Body)
			body = string(b)
		}
		got := map[string]string{}
		for k := range req.Header {
			got[k] = req.Header.Get(k)
		}
		if req.Method != tc.method || req.URL.Host != "127.0.0.1:1" || req.URL.Path != tc.path || body != tc.body || !cmp.Equal(got, tc.header) {
			t.Errorf("%s:\n got %s %s %q %v\nwant %s %s %q %v", tc.line, req.Method, req.URL, body, got, tc.method, tc.path, tc.body, tc.header)
		}
	}
	if got, want := topLevelKeys(`{"turn":3,"usage":{"in":1},"approvals":[{"id":"x"}],...}: then "text": here`), []string{"turn", "usage", "approvals"}; !cmp.Equal(got, want) {
		t.Errorf("topLevelKeys = %q, want %q", got, want)
	}
}
