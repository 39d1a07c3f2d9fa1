// Package sshkey reads the SSH host keys the owner pins in config.yaml
// (git.remotes[].host_key): config checks them when it loads, and
// gitremote accepts a server only when it proves it holds exactly that key.
// It is apart so that config need not link the git runner.
package sshkey

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// hostTypes are the host key types accepted in host_key.
var hostTypes = []string{
	ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521, ssh.KeyAlgoRSA,
}

// ParseHost parses a pinned host key: a line as ssh-keyscan prints it
// ("host ssh-ed25519 AAAA...") or as a .pub file holds it ("ssh-ed25519
// AAAA... [comment]"). Only plain ed25519, ecdsa and rsa keys are taken
// (no certificates, no known_hosts markers).
func ParseHost(s string) (ssh.PublicKey, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("the host key is empty: paste the line `ssh-keyscan -t ed25519 HOST` prints")
	}
	if strings.ContainsAny(s, "\n\r\x00") {
		return nil, errors.New("the host key must be one line (one key)")
	}
	fields := strings.Fields(s)
	if strings.HasPrefix(fields[0], "@") {
		return nil, fmt.Errorf("a known_hosts marker (%.20q) is not taken: give the plain key", fields[0])
	}
	typ, rest := fields[0], fields[1:]
	if !slices.Contains(hostTypes, typ) && len(rest) > 0 && LooksLikeType(rest[0]) {
		// ssh-keyscan's form: the host first (which may itself start
		// with "ssh-").
		typ, rest = rest[0], rest[1:]
	}
	if !LooksLikeType(typ) {
		return nil, errors.New("the host key must read `ssh-ed25519 AAAA...` (or `HOST ssh-ed25519 AAAA...` as ssh-keyscan prints it)")
	}
	if !slices.Contains(hostTypes, typ) {
		return nil, fmt.Errorf("a %.40q host key is not taken: give the server's ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa key (ssh-keyscan -t ed25519 HOST)", typ)
	}
	if len(rest) == 0 {
		return nil, fmt.Errorf("the host key has its type (%s) but no key after it", typ)
	}
	blob, err := base64.StdEncoding.DecodeString(rest[0])
	if err != nil {
		return nil, fmt.Errorf("the %s host key is not valid base64", typ)
	}
	key, err := ssh.ParsePublicKey(blob)
	if err != nil {
		return nil, fmt.Errorf("the %s host key does not parse: %v", typ, err)
	}
	if key.Type() != typ {
		return nil, fmt.Errorf("the host key line says %s but the key is %s", typ, key.Type())
	}
	return key, nil
}

// LooksLikeType reports whether a field reads like an SSH key type,
// supported or not.
func LooksLikeType(f string) bool {
	return strings.HasPrefix(f, "ssh-") || strings.HasPrefix(f, "ecdsa-") || strings.HasPrefix(f, "sk-") ||
		strings.HasSuffix(f, "@openssh.com")
}
