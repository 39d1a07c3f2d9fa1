package web

import (
	"html/template"
	"net/http"
	"strings"
)

// The UI's pages are HTML the daemon writes itself: html/template escapes
// every value, the Content-Security-Policy allows no inline script, no
// foreign origin and no framing, and nothing on a page comes from a URL.

// pageSecurity are the headers of every HTML page.
func pageSecurity(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// writePage writes html as an HTML page.
func writePage(w http.ResponseWriter, status int, html string) {
	armWrite(w)
	pageSecurity(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(html))
}

var pages = template.Must(template.New("pages").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>shelldon</title></head><body>{{end}}

{{define "login"}}{{template "head"}}
<main>
<h1>shelldon</h1>
<form method="post" action="/login">
<p><label for="token">API token</label><br>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus></p>
{{if .}}<p role="alert">{{.}}</p>{{end}}
<p><button type="submit">Sign in</button></p>
</form>
<p>The token is in <code>SHELLDON_API_TOKEN</code>, or else in the file <code>api_token</code> in shelldon's home.</p>
</main></body></html>{{end}}

{{define "home"}}{{template "head"}}
<main>
<h1>shelldon</h1>
<p>You are signed in.</p>
<form method="post" action="/logout">
<input type="hidden" name="csrf" value="{{.}}">
<p><button type="submit">Sign out</button></p>
</form>
</main></body></html>{{end}}
`))

// loginPage is the login form, with msg (if any) said above its button.
func loginPage(msg string) string { return render("login", msg) }

// homePage is the signed-in browser's first page; csrf is its session's
// CSRF token, for its forms.
func homePage(csrf string) string { return render("home", csrf) }

func render(name string, data any) string {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return "<!doctype html><title>shelldon</title><p>This page could not be shown."
	}
	return b.String()
}
