package gitserve

import (
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"testing"
)

// TokenUser is the user name HTTP expects with the token, the one shelldon
// sends by default.
const TokenUser = "x-access-token"

// HTTP serves the repositories under root with git http-backend (fetch,
// and push where a repository sets http.receivepack) behind a check of
// token, sent as TokenUser's password. pre, when set, sees each request
// first and answers it itself when it returns true (a redirect, a count).
// The server closes at the end of the test.
func HTTP(t testing.TB, root, token string, pre func(http.ResponseWriter, *http.Request) bool) *httptest.Server {
	t.Helper()
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "REMOTE_USER=" + TokenUser}}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(TokenUser+":"+token))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pre != nil && pre(w, r) {
			return
		}
		if root == "" || r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="t"`)
			http.Error(w, "auth", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
