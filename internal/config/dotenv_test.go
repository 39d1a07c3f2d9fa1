package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDotenv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     map[string]string
	}{
		{"plain", "A=1\nB=two words\n", map[string]string{"A": "1", "B": "two words"}},
		{"export", "export A=1\nexport\tB=2\nexported=3\n", map[string]string{"A": "1", "B": "2", "exported": "3"}},
		{"comments and blanks", "# c\n\n   \n  # indented\nA=1 # trailing\nB=pa#ss\n", map[string]string{"A": "1", "B": "pa#ss"}},
		{"single quotes are literal", `A='x\ny "z" # not a comment'`, map[string]string{"A": `x\ny "z" # not a comment`}},
		{"double quotes with escapes", `A="line1\nline2\t\"q\" \\ \$HOME \x"`, map[string]string{"A": "line1\nline2\t\"q\" \\ $HOME \\x"}},
		{"quotes then comment", "A=\"v\" # c\nB='w'   \n", map[string]string{"A": "v", "B": "w"}},
		{"spaces around =", "A = 1\n  B\t=\t2  \n", map[string]string{"A": "1", "B": "2"}},
		{"empty values", "A=\nB=''\nC=\"\"\n", map[string]string{"A": "", "B": "", "C": ""}},
		{"CRLF and BOM", "\uFEFFA=1\r\nB=\"2\"\r\n", map[string]string{"A": "1", "B": "2"}},
		{"later wins", "A=1\nA=2\n", map[string]string{"A": "2"}},
		{"value with =", "A=b=c\n", map[string]string{"A": "b=c"}},
		{"no expansion", "A=${HOME}\n", map[string]string{"A": "${HOME}"}},
		{"empty file", "", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseDotenv("/h/.env", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDotenvErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		line     int
		key, msg string
	}{
		{"no equals", "A=1\nsecretsecret\n", 2, "", msgEnvNoEquals},
		{"bad name", "1A=secretsecret", 1, "", msgEnvBadName},
		{"name with dash", "MY-KEY=secretsecret", 1, "", msgEnvBadName},
		{"unterminated double", "K=\"secretsecret", 1, "K", msgEnvUnterm},
		{"unterminated single", "\n\nK='secretsecret", 3, "K", msgEnvUnterm},
		{"text after quote", "K='secret'secret", 1, "K", msgEnvAfterQuote},
		{"NUL", "K=secret\x00secret", 1, "K", msgEnvNUL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseDotenv("/h/.env", []byte(tt.in))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			want := &Error{File: "/h/.env", Line: tt.line, Key: tt.key, Msg: tt.msg}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the value", err)
			}
		})
	}
}

var envMsgs = []string{msgEnvNoEquals, msgEnvBadName, msgEnvUnterm, msgEnvAfterQuote, msgEnvNUL}

// FuzzParseDotenv checks that the parser never panics, yields only valid
// names, and fails only with one of its fixed messages, so that no part of
// a line (a secret) can reach an error.
func FuzzParseDotenv(f *testing.F) {
	for _, s := range []string{"A=1", "export B='x'", "C=\"a\\nb\" # c", "# c\n\nD=", "bad line", "E=\"open", "\uFEFFF=1\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := parseDotenv("/h/.env", []byte(in))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !slices.Contains(envMsgs, e.Msg) || e.Key != "" && !validEnvName(e.Key) {
				t.Fatalf("unexpected error %#v", err)
			}
			return
		}
		for k := range m {
			if !validEnvName(k) {
				t.Fatalf("invalid name %q", k)
			}
		}
	})
}
