//go:build linux

package selftools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/testbin"
	"github.com/shelldon/shelldon/internal/worker"
)

var (
	runnerOnce sync.Once
	runner     *sandbox.Runner
	runnerErr  error
)

// realSandbox is the sandbox with a real shelldon binary as its helper;
// the test is skipped on a kernel without the required layers.
func realSandbox(t *testing.T) (*sandbox.Runner, string) {
	t.Helper()
	bin := testbin.Shelldon(t)
	runnerOnce.Do(func() { runner, runnerErr = sandbox.NewRunner(bin) })
	if runnerErr != nil {
		t.Fatal(runnerErr)
	}
	if tier := runner.Probe(context.Background()); !tier.Full() {
		t.Skipf("this kernel lacks a required sandbox layer: %s", tier)
	}
	return runner, bin
}

// recorder is the real sandbox, recording each policy it is given. With a
// mode, it starts this test binary as a fake toolcall child playing that
// mode instead of the real one, with the rest of the policy unchanged (a
// race-instrumented binary gets the memory its shadow needs).
type recorder struct {
	*sandbox.Runner
	mode string
	mu   sync.Mutex
	got  []sandbox.Policy
}

func (r *recorder) Start(ctx context.Context, p sandbox.Policy, stdin io.Reader, stdout, stderr io.Writer) (*sandbox.Process, error) {
	r.mu.Lock()
	r.got = append(r.got, p)
	r.mu.Unlock()
	if r.mode != "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		p.Argv = []string{exe, "-test.run=^$"}
		p.Env = append(slices.Clone(p.Env), fakeEnv+"="+r.mode)
		p.ReadOnly = append(slices.Clone(p.ReadOnly), exe)
		if raceEnabled {
			p.Limits.DataBytes = 1 << 42
		}
	}
	return r.Runner.Start(ctx, p, stdin, stdout, stderr)
}

func (r *recorder) policies() []sandbox.Policy {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// liveTool writes a tool's files as the live directory holds them.
func liveTool(t *testing.T, name, language, code string, hosts ...string) contracts.SelfTool {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(dir), 0o755)
	codeName, testName, test := "tool.star", "tool_test.star", "def test_x():\n    pass\n"
	if language == selfcode.Python {
		codeName, testName, test = name+".py", "test_"+name+".py", "def test_x():\n    pass\n"
	}
	for f, s := range map[string]string{codeName: code, testName: test} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := contracts.SelfTool{Name: name, Version: 1, Language: language, Hash: selfcode.Hash(language, code, test),
		Description: "a test tool", Dir: dir, Parameters: json.RawMessage(`{"type":"object"}`)}
	if len(hosts) > 0 {
		st.Capabilities = map[string][]string{"http": hosts}
	}
	return st
}

// call registers st as the worker does and calls it once.
func call(t *testing.T, ctx context.Context, env Env, st contracts.SelfTool, args string) (string, error) {
	t.Helper()
	env.Tools = []contracts.SelfTool{st}
	reg := worker.NewRegistry()
	if err := Register(reg, env); err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Get(st.Name)
	if !ok {
		t.Fatalf("%s was not registered", st.Name)
	}
	return tool.Run(ctx, json.RawMessage(args))
}

// tcpListener counts the connections a loopback listener accepts.
type tcpListener struct {
	ln       net.Listener
	accepted atomic.Int64
}

func listenTCP(t *testing.T, addr string) *tcpListener {
	t.Helper()
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	l := &tcpListener{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	return l
}

func (l *tcpListener) port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// untouched proves the listener accepted nothing before now: a probe
// connection of the test's own is accepted, and is the only one.
func (l *tcpListener) untouched(t *testing.T) {
	t.Helper()
	c, err := net.Dial("tcp4", l.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for l.accepted.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := l.accepted.Load(); n != 1 {
		t.Errorf("the listener on %s accepted %d connection(s) besides the test's probe", l.ln.Addr(), n-1)
	}
}

// TestToolCallPolicyIsTheSameForEveryTool: the sandbox a call runs in is
// exactly ToolCallPolicy, granted http or not: no network.
func TestToolCallPolicyIsTheSameForEveryTool(t *testing.T) {
	t.Parallel()
	r, bin := realSandbox(t)
	rec := &recorder{Runner: r}
	env := Env{Sandbox: rec, Binary: bin}
	code := "DESCRIPTION = \"Say hi.\"\nPARAMS_SCHEMA = {\"type\": \"object\", \"properties\": {}}\nCAPABILITIES = {\"http\": [\"api.example.com\"]}\n\ndef run():\n    return \"hi\"\n"
	plain := liveTool(t, "say_hi", selfcode.Starlark, strings.Replace(code, `{"http": ["api.example.com"]}`, "{}", 1))
	granted := liveTool(t, "say_hi", selfcode.Starlark, code, "api.example.com")
	for _, st := range []contracts.SelfTool{plain, granted} {
		if got, err := call(t, context.Background(), env, st, `{}`); err != nil || got != "hi" {
			t.Fatalf("call: %q %v", got, err)
		}
	}
	got := rec.policies()
	if len(got) != 2 {
		t.Fatalf("%d sandboxes", len(got))
	}
	for i, st := range []contracts.SelfTool{plain, granted} {
		want := ToolCallPolicy(env, st.Dir)
		if got[i].Network || !reflect.DeepEqual(got[i], want) {
			t.Errorf("tool %d ran under %+v\nwant %+v", i, got[i], want)
		}
	}
}

// hostileScript tries everything the attacker's tool did from the sandbox:
// connect to a loopback service, take its port, send UDP, use IPv6.
const hostileScript = `
import json, socket
res = {}
def attempt(name, fn):
    try:
        fn()
        res[name] = "ok"
    except BaseException as e:
        res[name] = "%s: %s" % (type(e).__name__, e)
def connect():
    socket.create_connection(("127.0.0.1", PORT), 2).close()
def listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", PORT))
    s.listen(1)
def listen_loopback():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("127.0.0.1", UDPPORT))
def inet6():
    socket.socket(socket.AF_INET6, socket.SOCK_STREAM).close()
for name, fn in [("connect", connect), ("listen", listen), ("listen_loopback", listen_loopback), ("udp", udp), ("inet6", inet6)]:
    attempt(name, fn)
print(json.dumps(res))
`

// TestHostileToolReachesNothing: a hostile tool that got past a weakened
// checker, run with exactly the toolcall sandbox (python3 directly, no
// checker, no audit hook), reaches no loopback service, takes no port,
// sends no UDP and opens no IPv6 socket.
func TestHostileToolReachesNothing(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	r, bin := realSandbox(t)
	tcp := listenTCP(t, "127.0.0.1:0")
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	var udpGot atomic.Int64
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			udpGot.Add(1)
		}
	}()
	script := strings.NewReplacer("UDPPORT", fmt.Sprint(udp.LocalAddr().(*net.UDPAddr).Port),
		"PORT", fmt.Sprint(tcp.port())).Replace(hostileScript)

	st := liveTool(t, "hostile", selfcode.Python, "def run():\n    pass\n", "api.example.com")
	pol := ToolCallPolicy(Env{Binary: bin}, st.Dir)
	pol.Argv = []string{"python3", "-I", "-S", "-c", script}
	res, err := r.Run(context.Background(), pol)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(res.Stdout, &got); err != nil || len(got) != 5 {
		t.Fatalf("the script's report: %v\nstdout %s\nstderr %s", err, res.Stdout, res.Stderr)
	}
	for name, outcome := range got {
		if outcome == "ok" {
			t.Errorf("%s succeeded in the toolcall sandbox", name)
		}
		t.Logf("%s: %s", name, outcome)
	}
	tcp.untouched(t)
	time.Sleep(100 * time.Millisecond)
	if n := udpGot.Load(); n != 0 {
		t.Errorf("the UDP listener got %d datagrams", n)
	}
}

// TestGrantedHostOnLoopbackIsRefused: a tool granted http for a host whose
// name resolves to 127.0.0.1 reaches nothing: its only way out is the
// worker, and netguard refuses the address.
func TestGrantedHostOnLoopbackIsRefused(t *testing.T) {
	t.Parallel()
	r, bin := realSandbox(t)
	tcp := listenTCP(t, "127.0.0.1:0")
	// Port 80 too, where a Starlark tool's URL (which may not name a port)
	// would go, when this test may take it.
	var tcp80 *tcpListener
	if ln, err := net.Listen("tcp4", "127.0.0.1:80"); err == nil {
		ln.Close()
		tcp80 = listenTCP(t, "127.0.0.1:80")
	}
	client := testClient(t, map[string]netip.Addr{"api.example.com": netip.MustParseAddr("127.0.0.1")}, "")
	env := Env{Sandbox: &recorder{Runner: r}, Binary: bin, HTTP: client, Python: true}

	star := "DESCRIPTION = \"Fetch.\"\nPARAMS_SCHEMA = {\"type\": \"object\", \"properties\": {}}\nCAPABILITIES = {\"http\": [\"api.example.com\"]}\n\n" +
		"def run():\n    return http.get(\"http://api.example.com/\").body\n"
	st := liveTool(t, "fetch", selfcode.Starlark, star, "api.example.com")
	got, err := call(t, context.Background(), env, st, `{}`)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "local network") {
		t.Errorf("starlark: %q, %v; want netguard's refusal of 127.0.0.1", got, err)
	}
	if _, err := exec.LookPath("python3"); err == nil {
		py := "from shelldon_host import http_get\n\nDESCRIPTION = \"Fetch.\"\nPARAMS_SCHEMA = {\"type\": \"object\", \"properties\": {}}\n" +
			"CAPABILITIES = {\"http\": [\"api.example.com\"]}\n\n\ndef run():\n    return http_get(\"http://api.example.com:" + fmt.Sprint(tcp.port()) + "/\")[1]\n"
		st := liveTool(t, "fetch", selfcode.Python, py, "api.example.com")
		got, err := call(t, context.Background(), env, st, `{}`)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "local network") {
			t.Errorf("python: %q, %v; want netguard's refusal of 127.0.0.1", got, err)
		}
	}
	tcp.untouched(t)
	if tcp80 != nil {
		tcp80.untouched(t)
	}
}

// TestGrantedHostThroughTheWorker: the http a tool was granted is served by
// the worker, from the worker's grant only, with its caps: the granted host
// is fetched, another is refused, the 33rd request and a body over the cap
// too. A test server on loopback stands for api.example.com.
func TestGrantedHostThroughTheWorker(t *testing.T) {
	t.Parallel()
	r, bin := realSandbox(t)
	srv := newHostServer(t)
	lo := netip.MustParseAddr("127.0.0.1")
	client := testClient(t, map[string]netip.Addr{"api.example.com": lo, "other.example.com": lo}, srv.Listener.Addr().String())
	base := "http://api.example.com:" + srv.port()
	other := "http://other.example.com:" + srv.port()

	t.Run("protocol", func(t *testing.T) {
		t.Parallel()
		env := Env{Sandbox: &recorder{Runner: r, mode: "script"}, Binary: bin, HTTP: client}
		urls := []string{base + "/ok", other + "/ok", base + "/big", base + "/cap"}
		for len(urls) < MaxHostCalls+1 {
			urls = append(urls, base+"/ok")
		}
		// The child claims whatever it likes; the grant is the worker's.
		st := liveTool(t, "script", selfcode.Starlark, "x", "api.example.com")
		args, _ := json.Marshal(scriptArgs{URLs: urls})
		out, err := call(t, context.Background(), env, st, string(args))
		if err != nil {
			t.Fatal(err)
		}
		var got []scriptAnswer
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(urls) {
			t.Fatalf("%v: %s", err, out)
		}
		check := func(i int, status int, body, errPart string) {
			t.Helper()
			a := got[i]
			if a.Status != status || !strings.HasPrefix(a.Body, body) || !strings.Contains(a.Error, errPart) || (errPart == "") != (a.Error == "") {
				t.Errorf("request %d (%s): %+v; want status %d, body %q, error %q", i+1, urls[i], a, status, body, errPart)
			}
		}
		check(0, 200, "hello from api.example.com", "")
		check(1, 0, "", "not a host this tool was granted")
		check(2, 0, "", "larger than")
		check(3, 200, "ccc", "")
		if got[3].Size != MaxHTTPBody {
			t.Errorf("a body of the cap came back with %d bytes", got[3].Size)
		}
		for i := 4; i < MaxHostCalls; i++ {
			check(i, 200, "hello", "")
		}
		check(MaxHostCalls, 0, "", fmt.Sprintf("more than %d requests", MaxHostCalls))
		if n := srv.requests("other.example.com:" + srv.port() + "/ok"); n != 0 {
			t.Errorf("the host not granted got %d requests", n)
		}

		// A tool granted nothing gets nothing, whatever its child asks.
		none := liveTool(t, "script", selfcode.Starlark, "x")
		args, _ = json.Marshal(scriptArgs{URLs: []string{base + "/none"}})
		out, err = call(t, context.Background(), env, none, string(args))
		if err != nil || !strings.Contains(out, "http is not granted") || srv.requests("api.example.com:"+srv.port()+"/none") != 0 {
			t.Errorf("not granted: %s %v", out, err)
		}
		args, _ = json.Marshal(scriptArgs{URLs: []string{base + "/none"}, Kind: "exec"})
		if out, err = call(t, context.Background(), env, st, string(args)); err != nil || !strings.Contains(out, `unknown method \"exec\"`) {
			t.Errorf("an unknown host call: %s %v", out, err)
		}
	})

	t.Run("python", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed")
		}
		env := Env{Sandbox: &recorder{Runner: r}, Binary: bin, HTTP: client, Python: true}
		py := "from shelldon_host import http_get\n\nDESCRIPTION = \"Fetch.\"\nPARAMS_SCHEMA = {\"type\": \"object\", \"properties\": {\"url\": {\"type\": \"string\"}}}\n" +
			"CAPABILITIES = {\"http\": [\"api.example.com\"]}\n\n\ndef run(url):\n    status, body = http_get(url)\n    return \"%d %s\" % (status, body)\n"
		st := liveTool(t, "fetch", selfcode.Python, py, "api.example.com")
		got, err := call(t, context.Background(), env, st, `{"url": "`+base+`/py"}`)
		if err != nil || got != "200 hello from api.example.com:"+srv.port() {
			t.Errorf("granted: %q %v", got, err)
		}
		_, err = call(t, context.Background(), env, st, `{"url": "`+other+`/py"}`)
		if err == nil || !strings.Contains(err.Error(), "not a host this tool was granted") {
			t.Errorf("not granted: %v", err)
		}
	})
}

// TestHostileChild: whatever the child does on its end of the channel, the
// call ends within its deadline with an error or the child's own result,
// and the worker reads no more than a frame's worth of it at a time.
func TestHostileChild(t *testing.T) {
	t.Parallel()
	r, bin := realSandbox(t)
	st := liveTool(t, "hostile", selfcode.Starlark, "x", "api.example.com")
	for _, tc := range []struct {
		mode, args, want string
		timeout          bool          // the deadline ends it
		deadline         time.Duration // 3s unless set
	}{
		{mode: "garbage", want: "broke the protocol"},
		{mode: "huge", want: "frame too large"},
		{mode: "malformed", want: "malformed frame"},
		{mode: "badtype", want: `unexpected "job" frame`},
		{mode: "stray", want: "never made"},
		// 41 frames of 256 KiB: slow under the race detector on a busy machine.
		{mode: "flood", want: fmt.Sprintf("more than %d host calls", MaxHostCalls), deadline: 20 * time.Second},
		{mode: "silent", want: "did not finish", timeout: true},
		// A request the child never reads cannot hold the worker either.
		{mode: "deaf", args: `{"pad": "` + strings.Repeat("p", 1<<20) + `"}`, want: "did not finish", timeout: true},
		{mode: "exit", want: "exited with status 3"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			env := Env{Sandbox: &recorder{Runner: r, mode: tc.mode}, Binary: bin, HTTP: testClient(t, nil, "")}
			deadline := tc.deadline
			if deadline == 0 {
				deadline = 3 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			args := tc.args
			if args == "" {
				args = `{}`
			}
			start := time.Now()
			got, err := call(t, ctx, env, st, args)
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q, %v; want an error containing %q", got, err, tc.want)
			}
			if took > deadline+3*time.Second || !tc.timeout && took >= deadline {
				t.Errorf("the call took %s", took)
			}
		})
	}
	t.Run("forge", func(t *testing.T) {
		t.Parallel()
		env := Env{Sandbox: &recorder{Runner: r, mode: "forge"}, Binary: bin, HTTP: testClient(t, nil, "")}
		// A forged result is only the tool's own output; what follows it is
		// never read.
		if got, err := call(t, context.Background(), env, st, `{}`); err != nil || got != "forged" {
			t.Errorf("%q, %v", got, err)
		}
	})
}

// TestFloodCostsTheWorkerNothing: a child that writes hundreds of
// megabytes costs the worker a few kilobytes: it stops at the first
// frame that is not one.
func TestFloodCostsTheWorkerNothing(t *testing.T) {
	r, bin := realSandbox(t)
	st := liveTool(t, "hostile", selfcode.Starlark, "x")
	env := Env{Sandbox: &recorder{Runner: r, mode: "garbage"}, Binary: bin}
	call(t, context.Background(), env, st, `{}`) // warm up: the first sandbox probes
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := call(t, context.Background(), env, st, `{}`)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("the flood was taken for a result")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("the worker allocated %d bytes during a flood", n)
	}
}
