package provider

import (
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzErrorBodyText: whatever a server answers, the message of the error
// built from it is bounded, valid UTF-8, one line and without a control
// character, and building it does not panic.
func FuzzErrorBodyText(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"m","type":"t","code":"c"}}`, `{"error":"x"}`, `{"detail":[{"loc":["a",1],"msg":"m"}]}`,
		`[{"error":{"message":"m"}}]`, `{"errors":[{"message":"m"}]}`, `{"title":"T","detail":"d"}`,
		"<html><title>502 &amp; Bad</title></html>", "<p>a<b>b</b></p><script>x</script>", "\x1b[2Jplain\x00\xff",
		`{"error":{"error":{"error":{"error":{"error":{"message":"deep"}}}}}}`, "[[[[[[[[[[", `"just a string"`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e := StatusError("p", &http.Response{StatusCode: 502, Header: http.Header{}}, []byte(body))
		m := e.Message
		if len(m) > MaxMessage+len("…") || !utf8.ValidString(m) || strings.ContainsFunc(m, unicode.IsControl) {
			t.Fatalf("message %q from body %q", m, body)
		}
	})
}
