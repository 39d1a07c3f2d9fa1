package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Credential-shaped test values, assembled so that secret scanners do not
// flag this file.
var (
	openai    = "sk-" + strings.Repeat("aB3d", 12)
	openaiPrj = "sk-" + "proj-" + strings.Repeat("Xy_9-", 8)
	anthropic = "sk-" + "ant-api03-" + strings.Repeat("Qw3_rT-", 10)
	ghp       = "gh" + "p_" + strings.Repeat("a1B2", 9)
	ghs       = "gh" + "s_" + strings.Repeat("z9Y8", 9)
	ghPAT     = "github" + "_pat_" + "11ABCDEFG0" + strings.Repeat("_x1Y2", 8)
	slack     = "xo" + "xb-" + "1234567890-abcdefghij-KLMNOP"
	aws       = "AKIA" + "IOSFODNN7EXAMPLE"
	telegram  = "123456789" + ":" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	jwt       = "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxIn0" + ".dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)

func TestStringShapes(t *testing.T) {
	t.Parallel()
	same := "\x00same" // want: the input unchanged
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello world: nothing to see", same},
		{"empty", "", same},
		{"openai", "key=" + openai + " end", "key=[redacted] end"},
		{"openai project", openaiPrj, Marker},
		{"anthropic", "x-api-key: " + anthropic, "x-api-key: [redacted]"},
		{"sk- inside a word", "the task-force-alignment-meeting-notes-2024", same},
		{"sk- too short", "sk-short", same},
		{"github classic", "token " + ghp + ".", "token [redacted]."},
		{"github app", ghs, Marker},
		{"github fine-grained", "GH=" + ghPAT, "GH=[redacted]"},
		{"slack", "slack " + slack, "slack [redacted]"},
		{"aws", "id " + aws + " ok", "id [redacted] ok"},
		{"aws too long is something else", aws + "X", same},
		{"telegram", "bot token " + telegram, "bot token [redacted]"},
		{"telegram api url", "https://api.telegram.org/bot" + telegram + "/getMe", "https://api.telegram.org/bot[redacted]/getMe"},
		{"bearer", "Authorization: Bearer abc.def-ghi_123", "Authorization: Bearer [redacted]"},
		{"bearer any case", "bearer xyzxyzxyz12==", "bearer [redacted]"},
		{"basic", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [redacted]"},
		{"jwt", "cookie " + jwt + ".", "cookie [redacted]."},
		{"jwt alg none", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", Marker},
		{"url password", "postgres://admin:hunter2@db:5432/app?x=1", "postgres://admin:[redacted]@db:5432/app?x=1"},
		{"url password with @", "https://u:p@ss@host/x", "https://u:[redacted]@host/x"},
		{"url empty user", "redis://:s3cret@cache:6379", "redis://:[redacted]@cache:6379"},
		{"url in quotes", `"http://a:b@c" and 'x@y'`, `"http://a:[redacted]@c" and 'x@y'`},
		{"url user only", "ssh://git@github.com/o/r.git", same},
		{"url no userinfo", "see https://example.com:8443/a@b", "see https://example.com:8443/a@b"},
		{"pem", "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\ny",
			"x\n-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----\ny"},
		{"pem cut off", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk",
			"key: -----BEGIN OPENSSH PRIVATE KEY-----\n[redacted]\n-----END OPENSSH PRIVATE KEY-----"},
		{"pem two blocks", "-----BEGIN PRIVATE KEY-----\na\n-----END PRIVATE KEY-----\nmid\n-----BEGIN EC PRIVATE KEY-----\nb\n-----END EC PRIVATE KEY-----",
			"-----BEGIN PRIVATE KEY-----\n[redacted]\n-----END PRIVATE KEY-----\nmid\n-----BEGIN EC PRIVATE KEY-----\n[redacted]\n-----END EC PRIVATE KEY-----"},
		{"public key kept", "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----", same},
		{"already redacted", "Bearer [redacted] postgres://a:[redacted]@h [redacted] -----BEGIN PRIVATE KEY-----\n[redacted]\n-----END PRIVATE KEY-----", same},
		{"unicode around", "ключ ☃" + openai + "☃ ok", "ключ ☃[redacted]☃ ok"},
		{"several", openai + "\n" + ghp + "\t" + aws, "[redacted]\n[redacted]\t[redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := tc.want
			if want == same {
				want = tc.in
			}
			for name, r := range map[string]*Redactor{"nil": nil, "empty": New(), "with secrets": New("unrelated-secret")} {
				got := r.String(tc.in)
				if got != want {
					t.Errorf("%s: String(%q)\n got %q\nwant %q", name, tc.in, got, want)
				}
				if again := r.String(got); again != got {
					t.Errorf("%s: not idempotent: %q -> %q", name, got, again)
				}
			}
		})
	}
}

func TestStringSecrets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		secrets  []string
		in, want string
	}{
		{"each occurrence", []string{"hunter2-secret"}, "a hunter2-secret b hunter2-secretc", "a [redacted] b [redacted]c"},
		{"too short is ignored", []string{"abc12"}, "abc12 abc12", "abc12 abc12"},
		{"six characters", []string{"äöü123"}, "xäöü123x", "x[redacted]x"},
		{"trimmed", []string{"  padded-secret\n"}, "padded-secret", Marker},
		{"longest wins", []string{"secret", "secret-longer"}, "secret-longer", Marker},
		{"part of the marker is ignored", []string{"redacted", "[redacted]"}, "redacted text", "redacted text"},
		{"adjacent overlapping secrets", []string{"abcdef123", "123456xyz"}, "abcdef123456xyz", "[redacted]456xyz"},
		{"replacement completes the secret", []string{"d]abcd"}, "d]abcdabcd", "[redacte[redacted]"},
		{"inside JSON text", []string{"MYSECRETVALUE"}, `{"k":"MYSECRETVALUE"}`, `{"k":"[redacted]"}`},
		{"unicode secret", []string{"пароль-☃-123"}, "x пароль-☃-123 y", "x [redacted] y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := New(tc.secrets...)
			got := r.String(tc.in)
			if got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
			for _, s := range r.secrets {
				if strings.Contains(got, s) {
					t.Errorf("output %q holds secret %q", got, s)
				}
			}
			if again := r.String(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestStringHuge(t *testing.T) {
	t.Parallel()
	r := New("the-one-secret")
	in := strings.Repeat("lorem ipsum ☃ dolor: sit=amet, ", 1<<15) + "the-one-secret " + openai
	got := r.String(in)
	if strings.Contains(got, "the-one-secret") || strings.Contains(got, openai) {
		t.Error("secret left in a huge input")
	}
	if !strings.HasSuffix(got, "[redacted] [redacted]") || !utf8.ValidString(got) {
		t.Errorf("huge input mangled: ...%q", got[len(got)-60:])
	}
}

func TestSensitiveKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"password": true, "PassWord": true, "db_passwd": true, "client_secret": true, "access_token": true,
		"X-Api-Key": true, "api_key": true, "APIKEY": true, "Authorization": true, "auth": true, "oauth": true,
		"Set-Cookie": true, "credentials": true, "private_key": true, "Private-Key": true, "passphrase": true,
		"author": false, "authors": false, "path": false, "content": false, "url": false, "key": false, "": false,
	} {
		if got := SensitiveKey(key); got != want {
			t.Errorf("SensitiveKey(%q) = %v, want %v", key, got, want)
		}
	}
}
