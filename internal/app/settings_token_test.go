package app

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// TestSettingsReplaceAPITokenLive: a SHELLDON_API_TOKEN replaced through
// the settings API is the running daemon's from the next request on (the
// CLI, which reads .env, and the daemon agree again without a restart);
// the old token is refused and every browser signed in with it is signed
// out. Clearing it falls back to the token file in the home.
func TestSettingsReplaceAPITokenLive(t *testing.T) {
	home, environ := testHome(t)
	environ = environ[:2] // no SHELLDON_API_TOKEN in the process environment
	const oldToken, newToken = "old-token-from-dotenv-0123456789", "new-token-from-settings-9876543210"
	if err := os.WriteFile(filepath.Join(home, config.FileEnv), []byte(config.EnvAPIToken+"=\""+oldToken+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, d := serveHome(t, home, environ)
	base := "http://" + d.Addr().String()

	// A browser signs in with the old token.
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(url.Values{"token": {oldToken}}.Encode()))
	req.Header.Set("Origin", base)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "shelldon_session" {
			session = c
		}
	}
	if session == nil {
		t.Fatalf("login: %d, no session cookie", resp.StatusCode)
	}
	browser := func() int {
		req, _ := http.NewRequest("GET", base+"/api/audit", nil)
		req.AddCookie(session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := browser(); code != 200 {
		t.Fatalf("the signed-in browser: %d", code)
	}

	post := func(token, body string) (int, string) {
		req, _ := http.NewRequest("POST", base+"/api/settings", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post(oldToken, `{"secrets":{"SHELLDON_API_TOKEN":"`+newToken+`"}}`)
	if code != 200 || !strings.Contains(body, web.TokenReplaced) || strings.Contains(body, newToken) {
		t.Fatalf("replace: %d %s", code, body)
	}
	if code, _ := get(t, base+"/api/tools", oldToken); code != 401 {
		t.Errorf("the old token after the change: %d, want 401", code)
	}
	if code, _ := get(t, base+"/api/tools", newToken); code != 200 {
		t.Errorf("the new token: %d, want 200", code)
	}
	if code := browser(); code != 401 {
		t.Errorf("a browser signed in with the old token: %d, want 401", code)
	}
	// What the CLI reads is what the daemon serves.
	cfg, err := config.Load(home, environ)
	if err != nil {
		t.Fatal(err)
	}
	if tok, _, _ := APIToken(cfg); tok != newToken {
		t.Errorf("the CLI would send another token")
	}

	// Cleared: the token file's (generated now if there is none) serves.
	code, body = post(newToken, `{"clear_secrets":["SHELLDON_API_TOKEN"]}`)
	if code != 200 || !strings.Contains(body, "secret SHELLDON_API_TOKEN: cleared") {
		t.Fatalf("clear: %d %s", code, body)
	}
	fileToken, err := os.ReadFile(filepath.Join(home, tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, base+"/api/tools", newToken); code != 401 {
		t.Errorf("the cleared token: %d, want 401", code)
	}
	if code, _ := get(t, base+"/api/tools", strings.TrimSpace(string(fileToken))); code != 200 {
		t.Errorf("the token file's token: %d, want 200", code)
	}
}
