package config

import (
	"strings"
	"testing"
)

// TestHostName: what a Host header names, normalized; anything that is not
// a plain host name or IP address is refused.
func TestHostName(t *testing.T) {
	good := map[string]string{
		"localhost":             "localhost",
		"Pi.Local":              "pi.local",
		"pi.local.":             "pi.local",
		"127.0.0.1":             "127.0.0.1",
		"::1":                   "::1",
		"[::1]":                 "::1",
		"[0:0:0:0:0:0:0:1]":     "::1",
		"::ffff:127.0.0.1":      "127.0.0.1",
		"192.168.1.20":          "192.168.1.20",
		"xn--pi-6kc.example":    "xn--pi-6kc.example",
		"a-b.c":                 "a-b.c",
		strings.Repeat("a", 63): strings.Repeat("a", 63),
	}
	for in, want := range good {
		if got, ok := HostName(in); !ok || got != want {
			t.Errorf("HostName(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", ".", "pi.local:7433", "[::1]:7433", "http://pi.local", "pi.local/x", "*.local", "pi..local",
		"-pi.local", "pi-.local", "аpi.example", "pi local", "pi\x00.local", "pi.local\n", "[127.0.0.1]",
		"fe80::1%eth0", "[fe80::1%25eth0]", "pi_local", strings.Repeat("a", 64), strings.Repeat("a.", 127) + "a",
		"user@pi.local", "[::1", "::1]",
	} {
		if got, ok := HostName(in); ok {
			t.Errorf("HostName(%q) = %q, accepted", in, got)
		}
	}
}
