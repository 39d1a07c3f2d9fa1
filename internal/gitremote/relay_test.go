package gitremote

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer accepts connections on loopback and echoes them; it counts
// what it accepted.
func echoServer(t *testing.T) (addr string, accepted func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	n := make(chan int, 1)
	n <- 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n <- <-n + 1
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String(), func() int { v := <-n; n <- v; return v }
}

// request sends line to the relay and returns its answer line and the
// connection.
func request(t *testing.T, rl *Relay, line string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("unix", rl.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, line); err != nil {
		t.Fatal(err)
	}
	answer, _ := readLine(c)
	return answer, c
}

func TestRelay(t *testing.T) {
	t.Parallel()
	addr, accepted := echoServer(t)
	other, otherAccepted := echoServer(t)
	host, port, _ := net.SplitHostPort(addr)
	_, otherPort, _ := net.SplitHostPort(other)
	rl, err := StartRelay(Remote{Name: "origin", Scheme: "http", Host: addr, Username: "u", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()

	t.Run("the remote's host and port are relayed", func(t *testing.T) {
		answer, c := request(t, rl, "tcp "+host+" "+port+"\n")
		if answer != "ok" {
			t.Fatalf("answer %q", answer)
		}
		if _, err := io.WriteString(c, "ping"); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("echo %q, %v", buf, err)
		}
	})
	for _, line := range []string{
		"tcp " + host + " " + otherPort + "\n", // same address, another port
		"tcp localhost " + port + "\n",         // another name for it
		"tcp 169.254.169.254 80\n",
		"tcp " + host + "\n",
		"tcp " + host + " " + port + " extra\n",
		"ssh git-upload-pack '/repo.git'\n", // ssh for an http remote
		"cred http 127.0.0.1:1\n",
		"cred https " + addr + "\n",
		"cred http " + addr + ".evil\n",
		"CONNECT " + addr + " HTTP/1.1\n",
		"\n",
	} {
		answer, _ := request(t, rl, line)
		if !strings.HasPrefix(answer, "no ") {
			t.Errorf("%q: answered %q", line, answer)
		}
		if strings.Contains(answer, token) {
			t.Errorf("%q: the refusal shows the token", line)
		}
	}
	t.Run("the credential goes to its own scheme and host", func(t *testing.T) {
		_, c := request(t, rl, "cred http "+addr+"\n")
		rest, _ := io.ReadAll(c)
		if string(rest) != "username=u\npassword="+token+"\n" {
			t.Errorf("answered %q", rest)
		}
	})
	t.Run("a request line that never ends is dropped", func(t *testing.T) {
		answer, _ := request(t, rl, strings.Repeat("x", maxRequest+10))
		if answer != "" {
			t.Errorf("answered %q", answer)
		}
	})
	if got := otherAccepted(); got != 0 {
		t.Errorf("the other port saw %d connections", got)
	}
	if accepted() != 1 {
		t.Errorf("the remote saw %d connections, want 1", accepted())
	}
	if got := rl.Refusals(); !strings.Contains(got, "not the remote origin") || strings.Contains(got, token) {
		t.Errorf("refusals %q", got)
	}
}

// TestRelayCloseEndsConnections: a git that outlives its run loses its
// relayed connections when the relay closes.
func TestRelayCloseEndsConnections(t *testing.T) {
	t.Parallel()
	addr, _ := echoServer(t)
	host, port, _ := net.SplitHostPort(addr)
	rl, err := StartRelay(Remote{Name: "origin", Scheme: "https", Host: addr})
	if err != nil {
		t.Fatal(err)
	}
	answer, c := request(t, rl, "tcp "+host+" "+port+"\n")
	if answer != "ok" {
		t.Fatalf("answer %q", answer)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(c); done <- err }()
	rl.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a relayed connection outlived Close")
	}
	if _, err := net.Dial("unix", rl.Socket()); err == nil {
		t.Error("the socket still answers after Close")
	}
}
