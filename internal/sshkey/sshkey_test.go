package sshkey

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestParseHost(t *testing.T) {
	t.Parallel()
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	ed, _ := ssh.NewPublicKey(edPub)
	ecPriv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec, _ := ssh.NewPublicKey(&ecPriv.PublicKey)
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := ssh.NewPublicKey(&rsaPriv.PublicKey)
	line := func(k ssh.PublicKey) string { return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))) }
	edB64 := strings.Fields(line(ed))[1]

	for _, tt := range []struct {
		in   string
		want ssh.PublicKey
	}{
		{line(ed), ed},
		{line(ed) + " me@laptop extra words", ed},
		{"  " + line(ed) + "\n", ed},
		{"github.com " + line(ed), ed},
		{"[git.lan]:2222 " + line(ed), ed},
		{"|1|c2FsdA==|aGFzaA== " + line(ed), ed},
		{"ssh-server.lan " + line(ed), ed},
		{"192.168.1.2 " + line(ec), ec},
		{line(rs), rs},
	} {
		got, err := ParseHost(tt.in)
		if err != nil || !bytes.Equal(got.Marshal(), tt.want.Marshal()) {
			t.Errorf("ParseHost(%.60q) = %v, %v", tt.in, got, err)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"", "empty"},
		{"  \n ", "empty"},
		{line(ed) + "\n" + line(ec), "one line"},
		{"ssh-ed25519 " + edB64 + "\x00", "one line"},
		{"@cert-authority *.lan " + line(ed), "marker"},
		{"@revoked host " + line(ed), "marker"},
		{"ssh-dss AAAAB3NzaC1kc3M=", "not taken"},
		{"ssh-ed25519-cert-v01@openssh.com AAAA", "not taken"},
		{"sk-ssh-ed25519@openssh.com AAAA", "not taken"},
		{"host ssh-dss AAAA", "not taken"},
		{"ssh-ed25519", "no key after"},
		{"host ssh-ed25519", "no key after"},
		{"ssh-ed25519 !!notbase64", "base64"},
		{"ssh-ed25519 " + "aGVsbG8=", "does not parse"},
		{"ssh-ed25519 " + strings.Fields(line(rs))[1], "says ssh-ed25519 but the key is ssh-rsa"},
		{"ecdsa-sha2-nistp384 " + strings.Fields(line(ec))[1], "but the key is ecdsa-sha2-nistp256"},
		{"github.com", "must read"},
		{"github.com AAAA", "must read"},
		{"SHA256:abcdefabcdef", "must read"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----", "must read"},
	} {
		if got, err := ParseHost(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseHost(%.60q) = %v, %v; want an error with %q", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseHost(f *testing.F) {
	f.Add("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE0Z4R0d3C6o2pF0bPz2vI6Yt8o9VjJk2n8rXq0bH9Qm c")
	f.Add("host ssh-rsa AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseHost(s)
		if err == nil && !slices.Contains(hostTypes, k.Type()) {
			t.Fatalf("%q gave a %s key", s, k.Type())
		}
	})
}
