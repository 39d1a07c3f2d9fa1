package gitremote

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// The be-child modes below run inside git's sandbox, where the only way
// out is the relay's socket (named by SHELLDON_GIT_RELAY). They are
// plumbing: each check that matters is the relay's, in the daemon.

// NetMain is `shelldon be-child git-net -- git args...`: it serves a
// SOCKS5 proxy on the sandbox's own loopback, each connection handed to
// the relay, and runs git with that proxy; it returns git's exit status.
func NetMain(args []string, stderr io.Writer) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(stderr, "shelldon be-child git-net: usage: git-net -- git args...")
		return 2
	}
	sock := os.Getenv(envRelay)
	if sock == "" {
		fmt.Fprintln(stderr, "shelldon be-child git-net: no relay")
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "shelldon be-child git-net: %v\n", err)
		return 2
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go socks(c, sock, stderr)
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	argv := append([]string{"-c", "http.proxy=socks5h://127.0.0.1:" + strconv.Itoa(port)}, args[2:]...)
	cmd := exec.Command(args[1], argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return max(ee.ExitCode(), 1)
		}
		fmt.Fprintf(stderr, "shelldon be-child git-net: %v\n", err)
		return 127
	}
	return 0
}

// socks serves one SOCKS5 CONNECT (no authentication; the only client is
// git on the sandbox's own loopback) by asking the relay for it.
func socks(c net.Conn, sock string, stderr io.Writer) {
	defer c.Close()
	host, port, err := socksRequest(c)
	if err != nil {
		fmt.Fprintf(stderr, "shelldon git relay: %v\n", err)
		return
	}
	up, err := ask(sock, "tcp "+host+" "+strconv.Itoa(port))
	if err != nil {
		fmt.Fprintf(stderr, "shelldon git relay: %v\n", err)
		// 2: connection not allowed by ruleset.
		_, _ = c.Write([]byte{5, 2, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	if _, err := c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		return
	}
	splice(c, up)
}

// socksRequest reads a SOCKS5 greeting and CONNECT request.
func socksRequest(c net.Conn) (string, int, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[0] != 5 {
		return "", 0, errors.New("not a SOCKS5 client")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", 0, err
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return "", 0, err
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return "", 0, err
	}
	if req[0] != 5 || req[1] != 1 {
		_, _ = c.Write([]byte{5, 7, 0, 1, 0, 0, 0, 0, 0, 0})
		return "", 0, errors.New("a SOCKS5 request other than CONNECT")
	}
	var host string
	switch req[3] {
	case 1, 4:
		ip := make([]byte, net.IPv4len)
		if req[3] == 4 {
			ip = make([]byte, net.IPv6len)
		}
		if _, err := io.ReadFull(c, ip); err != nil {
			return "", 0, err
		}
		host = net.IP(ip).String()
	case 3:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", 0, err
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", 0, err
		}
		host = string(name)
	default:
		return "", 0, errors.New("a SOCKS5 address of an unknown type")
	}
	var p [2]byte
	if _, err := io.ReadFull(c, p[:]); err != nil {
		return "", 0, err
	}
	if strings.ContainsAny(host, " \n\r\x00") || host == "" {
		return "", 0, fmt.Errorf("a bad host %q", clip(host))
	}
	return host, int(binary.BigEndian.Uint16(p[:])), nil
}

// ask sends a request line to the relay and returns the connection once
// the relay said ok; its refusal is the error.
func ask(sock, request string) (net.Conn, error) {
	if strings.ContainsAny(request, "\n\r\x00") {
		return nil, errors.New("a request with a line break")
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("the relay: %w", err)
	}
	if _, err := io.WriteString(c, request+"\n"); err != nil {
		c.Close()
		return nil, fmt.Errorf("the relay: %w", err)
	}
	answer, err := readLine(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the relay: %w", err)
	}
	if answer != "ok" {
		c.Close()
		return nil, errors.New(strings.TrimPrefix(answer, "no "))
	}
	return c, nil
}

// readLine reads one short line a byte at a time, so that nothing after
// it is taken from the stream.
func readLine(c net.Conn) (string, error) {
	var b [1]byte
	var line []byte
	for len(line) < maxRequest {
		if _, err := c.Read(b[:]); err != nil {
			return "", err
		}
		if b[0] == '\n' {
			return string(line), nil
		}
		line = append(line, b[0])
	}
	return "", errors.New("an answer too long")
}

// SSHMain is git's ssh command inside the sandbox: git runs it as
// `ssh [-o SendEnv=GIT_PROTOCOL] [-p port] [user@]host <command>`. The
// destination is the relay's to know (the remote's own); only the command
// is passed on, and the relay checks it. Exit 255 is ssh's own failure.
func SSHMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "shelldon be-child git-ssh: usage: git-ssh [options] host command")
		return 255
	}
	c, err := ask(os.Getenv(envRelay), "ssh "+args[len(args)-1])
	if err != nil {
		fmt.Fprintf(stderr, "shelldon: ssh: %v\n", err)
		return 255
	}
	defer c.Close()
	go func() {
		_, _ = io.Copy(c, stdin)
		if uc, ok := c.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}()
	if _, err := io.Copy(stdout, c); err != nil {
		fmt.Fprintf(stderr, "shelldon: ssh: %v\n", err)
		return 255
	}
	return 0
}

// CredMain is git's credential helper inside the sandbox (`git-cred get`
// with git's request on stdin): it asks the relay for the token of the
// protocol and host git names, and answers nothing when the relay refuses.
func CredMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "get" {
		return 0 // store and erase: shelldon keeps no credential of git's
	}
	var proto, host string
	sc := bufio.NewScanner(io.LimitReader(stdin, 64<<10))
	for sc.Scan() && sc.Text() != "" {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "protocol":
			proto = v
		case "host":
			host = v
		}
	}
	if proto == "" || host == "" {
		return 0
	}
	c, err := ask(os.Getenv(envRelay), "cred "+proto+" "+host)
	if err != nil {
		fmt.Fprintf(stderr, "shelldon: no credential: %v\n", err)
		return 0
	}
	defer c.Close()
	_, _ = io.Copy(stdout, io.LimitReader(c, maxRequest))
	return 0
}
