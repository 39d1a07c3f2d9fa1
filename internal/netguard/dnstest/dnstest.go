// Package dnstest serves DNS from a table, on 127.0.0.1, for tests: the
// resolver it returns asks only that server, so no test ever reaches a real
// DNS server, and the server keeps the names it was asked, so a test can
// show that a name was never looked up. It is for tests only; nothing the binary is built from
// imports it (repo_test.go).
package dnstest

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// Start runs a DNS server on 127.0.0.1 (UDP) answering A and AAAA
// queries from records (name without trailing dot → addresses; IPv4 answers
// as A, everything else as AAAA) and NXDOMAIN for anything else. The
// returned resolver sends every query there, whatever /etc/resolv.conf
// says, so tests never reach a real DNS server.
func Start(t *testing.T, records map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	return Listen(t, "127.0.0.1:0", records).Resolver()
}

// Server is a DNS server answering from a table, which keeps the name of
// every query it gets.
type Server struct {
	pc      net.PacketConn
	records map[string][]netip.Addr

	mu      sync.Mutex
	queries []string
}

// Listen runs a Server on the UDP address addr, as Start does, until the
// test ends. A test that owns a network namespace can listen on
// 127.0.0.1:53 and name it in a resolv.conf of its own, so that whatever
// resolves names in that namespace (net.DefaultResolver, a child process)
// asks this server and nothing else. records must not change afterwards.
func Listen(t *testing.T, addr string, records map[string][]netip.Addr) *Server {
	t.Helper()
	pc, err := net.ListenPacket("udp4", addr)
	if err != nil {
		t.Fatalf("dnstest: listen on %s: %v", addr, err)
	}
	s := &Server{pc: pc, records: records}
	t.Cleanup(func() { pc.Close() })
	go s.serve()
	return s
}

// serve answers queries until the connection closes. Each query is logged
// before its reply is sent, so a lookup that has returned is in the log.
func (s *Server) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		name, resp := answer(buf[:n], s.records)
		if resp == nil {
			continue
		}
		s.mu.Lock()
		s.queries = append(s.queries, name)
		s.mu.Unlock()
		s.pc.WriteTo(resp, from)
	}
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.pc.LocalAddr().String() }

// Resolver returns a resolver that sends every query to s.
func (s *Server) Resolver() *net.Resolver {
	addr := s.Addr()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp4", addr)
		},
	}
}

// Queries returns the name of each query answered so far, in order:
// lower-case, without the trailing dot, one entry per query (a lookup
// usually asks for A and AAAA, and may try search domains).
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// answer builds the reply to one query and returns the name asked, or a
// nil reply for garbage.
func answer(q []byte, records map[string][]netip.Addr) (string, []byte) {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return "", nil
	}
	var labels []string
	off := 12
	for {
		if off >= len(q) {
			return "", nil
		}
		l := int(q[off])
		off++
		if l == 0 {
			break
		}
		if l > 63 || off+l > len(q) {
			return "", nil
		}
		labels = append(labels, string(q[off:off+l]))
		off += l
	}
	if off+4 > len(q) {
		return "", nil
	}
	qtype := binary.BigEndian.Uint16(q[off:])
	question := q[12 : off+4]
	name := strings.ToLower(strings.Join(labels, "."))
	addrs, known := records[name]
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case a.Is4() && qtype == 1:
			b := a.As4()
			answers = append(answers, b[:])
		case !a.Is4() && qtype == 28:
			b := a.As16()
			answers = append(answers, b[:])
		}
	}
	flags := uint16(0x8000 | 0x0400 | 0x0080) // QR, AA, RA
	flags |= binary.BigEndian.Uint16(q[2:]) & 0x0100
	if !known {
		flags |= 3 // NXDOMAIN
	}
	resp := make([]byte, 12, 512)
	copy(resp, q[:2])
	binary.BigEndian.PutUint16(resp[2:], flags)
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[6:], uint16(len(answers)))
	resp = append(resp, question...)
	for _, rdata := range answers {
		resp = append(resp, 0xc0, 12) // name: pointer to the question
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, 1) // IN
		resp = binary.BigEndian.AppendUint32(resp, 60)
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return name, resp
}
