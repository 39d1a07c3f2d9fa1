package app

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/config"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// into dir, and returns the pool that trusts it.
func writeCert(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "shelldon test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return pool
}

// TestDaemonServesTLS: with server.tls_cert and server.tls_key (relative to
// the home) the daemon serves HTTPS only, and a browser's session cookie
// is Secure there.
func TestDaemonServesTLS(t *testing.T) {
	home, environ := testHome(t)
	pool := writeCert(t, home)
	cfg, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	cfg = append(cfg, "server:\n  tls_cert: cert.pem\n  tls_key: key.pem\n"...)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	_, d := serveHome(t, home, environ)
	addr := d.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("HTTPS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("HTTPS healthz: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP answered on the HTTPS port")
		}
	}

	req, _ := http.NewRequest("POST", "https://"+addr+"/login", strings.NewReader(url.Values{"token": {testToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://"+addr)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var found bool
	for _, c := range resp.Cookies() {
		if c.Name == "shelldon_session" {
			found = true
			if !c.Secure || !c.HttpOnly {
				t.Errorf("session cookie over HTTPS: %+v, want Secure and HttpOnly", c)
			}
		}
	}
	if resp.StatusCode != http.StatusSeeOther || !found {
		t.Fatalf("login over HTTPS: %d, cookie %v", resp.StatusCode, found)
	}
}

// TestDoctorServer: doctor says how the API is reached, and warns (without
// failing) when it is reachable beyond loopback over plain HTTP.
func TestDoctorServer(t *testing.T) {
	dir := t.TempDir()
	writeCert(t, dir)
	for _, tt := range []struct {
		name   string
		server config.ServerConfig
		want   string
		failed int
	}{
		{"loopback", config.ServerConfig{Listen: "127.0.0.1:7433"}, "✓ server     127.0.0.1:7433, this machine only", 0},
		{"localhost", config.ServerConfig{Listen: "localhost:7433"}, "✓ server     localhost:7433, this machine only", 0},
		{"every address, plain", config.ServerConfig{Listen: "0.0.0.0:7433"}, "! server     0.0.0.0:7433 is reachable beyond this machine over plain HTTP", 0},
		{"a LAN address, plain", config.ServerConfig{Listen: "192.168.1.20:7433"}, "! server     192.168.1.20:7433 is reachable", 0},
		{"HTTPS", config.ServerConfig{Listen: "0.0.0.0:7433", TLSCert: filepath.Join(dir, "cert.pem"), TLSKey: filepath.Join(dir, "key.pem")},
			"✓ server     0.0.0.0:7433 over HTTPS", 0},
		{"HTTPS, key missing", config.ServerConfig{Listen: "0.0.0.0:7433", TLSCert: filepath.Join(dir, "cert.pem"), TLSKey: filepath.Join(dir, "none.pem")},
			"✗ server     0.0.0.0:7433 over HTTPS, but the certificate does not load", 1},
	} {
		var out bytes.Buffer
		d := &doctor{w: &out}
		d.checkServer(&config.Config{Server: tt.server})
		if !strings.HasPrefix(out.String(), tt.want) || d.failed != tt.failed {
			t.Errorf("%s: %q, %d failed; want %q, %d", tt.name, out.String(), d.failed, tt.want, tt.failed)
		}
	}
}
