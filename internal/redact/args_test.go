package redact

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSONArgs(t *testing.T) {
	t.Parallel()
	r := New("MYSECRETVALUE", "12345678")
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"harmless object", `{"path":"a.txt","n":3}`, `{"path":"a.txt","n":3}`},
		{"pretty printed becomes compact", "{\n  \"path\": \"a.txt\",\n  \"deep\": [1, 2]\n}\n", `{"path":"a.txt","deep":[1,2]}`},
		{"key order kept", `{"z":1,"a":2,"m":3}`, `{"z":1,"a":2,"m":3}`},
		{"duplicate keys kept", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{"sensitive key", `{"password":"hunter22","user":"bob"}`, `{"password":"[redacted]","user":"bob"}`},
		{"secret in nested arrays", `{"items":[[{"x":["a MYSECRETVALUE b"]}],[]]}`, `{"items":[[{"x":["a [redacted] b"]}],[]]}`},
		{"mixed-case header names", `{"headers":{"X-Api-Key":"k","Accept":"json","Set-Cookie":"s=1"}}`,
			`{"headers":{"X-Api-Key":"[redacted]","Accept":"json","Set-Cookie":"[redacted]"}}`},
		{"sensitive composite value", `{"credentials":{"user":"a","pw":["b",{"c":1}]},"n":1}`, `{"credentials":"[redacted]","n":1}`},
		{"sensitive array value then more", `[{"tokens":[1,[2]],"k":"v"},"x"]`, `[{"tokens":"[redacted]","k":"v"},"x"]`},
		{"sensitive non-strings", `{"token":null,"secret":false,"api_key":42}`, `{"token":"[redacted]","secret":"[redacted]","api_key":"[redacted]"}`},
		{"auth but not author", `{"author":"Ann","auth":"x","OAuth_Token":"y"}`, `{"author":"Ann","auth":"[redacted]","OAuth_Token":"[redacted]"}`},
		{"secret as a number", `{"pin":12345678,"n":1.5e3}`, `{"pin":"[redacted]","n":1.5e3}`},
		{"secret as a key", `{"12345678":1}`, `{"[redacted]":1}`},
		{"secret as a key that says secret", `{"MYSECRETVALUE":1}`, `{"[redacted]":"[redacted]"}`},
		{"top-level array of shapes", `["` + openai + `", true, null, "Bearer abcdefgh1234"]`, `["[redacted]",true,null,"Bearer [redacted]"]`},
		{"no HTML escaping", `{"cmd":"a<b && c>d"}`, `{"cmd":"a<b && c>d"}`},
		{"escapes kept", `{"s":"line\nquote\" tab\t \u2603 \u0001"}`, `{"s":"line\nquote\" tab\t ☃ \u0001"}`},
		{"unicode", `{"msg":"héllo ☃ MYSECRETVALUE 日本"}`, `{"msg":"héllo ☃ [redacted] 日本"}`},
		{"env assignment in a command", `{"command":"PGPASSWORD=hunter22 psql -h db"}`, `{"command":"PGPASSWORD=[redacted] psql -h db"}`},
		{"url password in a value", `{"url":"https://bob:pw1@host/x"}`, `{"url":"https://bob:[redacted]@host/x"}`},
		{"JSON inside a string", `{"command":"curl -d '{\"password\":\"x\"}' http://h"}`, `{"command":"curl -d '{\"password\":\"[redacted]\"}' http://h"}`},
		{"already redacted", `{"password":"[redacted]","s":"Bearer [redacted]"}`, `{"password":"[redacted]","s":"Bearer [redacted]"}`},
		{"not JSON", `ls -la /tmp`, `ls -la /tmp`},
		{"not JSON with credentials", `password=hunter22 and Bearer abcdefgh123 MYSECRETVALUE`, `password=[redacted] and Bearer [redacted] [redacted]`},
		{"broken JSON", `{"password": "hunter22", "path": "a`, `{"password": "[redacted]", "path": "a`},
		{"broken JSON, value cut", `{"api_key": "abc\"def`, `{"api_key": "[redacted]`},
		{"JSON string scalar", `"MYSECRETVALUE"`, `"[redacted]"`},
		{"JSON number scalar", `12345678`, `[redacted]`},
		{"trailing garbage", `{"a":1} {"b":2}`, `{"a":1} {"b":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := r.JSONArgs(tc.in)
			if got != tc.want {
				t.Errorf("JSONArgs(%q)\n got %s\nwant %s", tc.in, got, tc.want)
			}
			if again := r.JSONArgs(got); again != got {
				t.Errorf("not idempotent: %s -> %s", got, again)
			}
		})
	}
}

func TestJSONArgsNil(t *testing.T) {
	t.Parallel()
	var r *Redactor
	if got, want := r.JSONArgs(`{"password":"x","k":"`+ghp+`"}`), `{"password":"[redacted]","k":"[redacted]"}`; got != want {
		t.Errorf("nil Redactor: got %s, want %s", got, want)
	}
}

func TestJSONArgsCap(t *testing.T) {
	t.Parallel()
	r := New("MYSECRETVALUE")
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"ascii object", `{"content":"` + strings.Repeat("a", 10000) + `"}`},
		{"multibyte", `{"content":"` + strings.Repeat("é☃", 3000) + `"}`},
		{"text", strings.Repeat("日本語 ", 2000)},
		{"secret at the end", `["` + strings.Repeat("x", 5000) + `","MYSECRETVALUE"]`},
		{"four-byte runes", strings.Repeat("𝄞", 1025)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := r.JSONArgs(tc.in)
			if len(got) > MaxArgs {
				t.Errorf("%d bytes, cap %d", len(got), MaxArgs)
			}
			if !utf8.ValidString(got) {
				t.Error("cut inside a character")
			}
			i := strings.LastIndex(got, "…[truncated ")
			if i < 0 || !strings.HasSuffix(got, " bytes]") {
				t.Fatalf("no truncation marker: ...%q", got[max(0, len(got)-40):])
			}
			n, err := strconv.Atoi(strings.TrimSuffix(got[i+len("…[truncated "):], " bytes]"))
			if err != nil {
				t.Fatal(err)
			}
			// The cut text plus what it says it dropped is the whole output.
			if uncapped := uncappedLen(r, tc.in); i+n != uncapped {
				t.Errorf("kept %d + dropped %d != %d", i, n, uncapped)
			}
			if len(got) < MaxArgs-8 {
				t.Errorf("only %d bytes kept", len(got))
			}
		})
	}
}

// uncappedLen is the length JSONArgs would return without its cap.
func uncappedLen(r *Redactor, in string) int {
	if out, ok := r.walkJSON(in); ok {
		return len(out)
	}
	return len(r.text(in))
}

func TestJSONArgsDeepNesting(t *testing.T) {
	t.Parallel()
	const depth = 50000
	in := strings.Repeat("[", depth) + `{"password":"hunter22"}` + strings.Repeat("]", depth)
	got := New().JSONArgs(in)
	if strings.Contains(got, "hunter22") {
		t.Errorf("password leaked from deeply nested JSON")
	}
	shallow := strings.Repeat("[", 500) + `{"password":"hunter22"}` + strings.Repeat("]", 500)
	if got := New().JSONArgs(shallow); strings.Contains(got, "hunter22") || !json.Valid([]byte(got)) {
		t.Errorf("nested JSON: %q", got)
	}
}

func FuzzJSONArgs(f *testing.F) {
	for _, seed := range []struct{ args, secret string }{
		{`{"path":"a.txt"}`, "hunter22"},
		{`{"password":"hunter22","nested":[{"x":"hunter22"}]}`, "hunter22"},
		{`{"hunter22":["hunter22",1,null,true]}`, "hunter22"},
		{`["d]abcdabcd"]`, "d]abcd"},
		{`{"a":1}`, `"a":1}`},
		{`{"s":"\u0068unter22"}`, "hunter22"},
		{"password=hunter22 Bearer abcdefgh123", "hunter22"},
		{"https://u:hunter22@host", "hunter22"},
		{`{"cmd":"` + strings.Repeat("ab", 3000) + `hunter22"}`, "hunter22"},
		{"-----BEGIN PRIVATE KEY-----\nhunter22", "hunter22"},
		{`{"k":12345678}`, "12345678"},
		{strings.Repeat("x", 4090) + "hunter22", "4 bytes]"},
	} {
		f.Add(seed.args, seed.secret)
	}
	f.Fuzz(func(t *testing.T, args, secret string) {
		r := New(secret, "static-secret-1")
		out := r.JSONArgs(args)
		if len(out) > MaxArgs {
			t.Fatalf("output is %d bytes", len(out))
		}
		for _, s := range r.secrets {
			if strings.Contains(out, s) {
				t.Fatalf("output %q holds secret %q", out, s)
			}
		}
		if utf8.ValidString(args) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input: %q", out)
		}
		if s := r.String(args); r.leaks(s) {
			t.Fatalf("String(%q) = %q holds a secret", args, s)
		}
	})
}
