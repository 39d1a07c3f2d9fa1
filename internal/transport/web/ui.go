package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// The web UI (issue 16) is HTML the daemon writes itself (html.go): a
// function per page writes its content inside the layout, and one
// stylesheet and, for the chat alone, one script are embedded
// (ui/static/). Every page reads without JavaScript; an action is a form
// that posts with the session's CSRF token and comes back to a page
// (303). Every string from outside is written as text (page.t), so what
// the model or a tool wrote shows as text, never as markup.

//go:embed ui/static
var uiFS embed.FS

// pageData is what the layout of every page shows.
type pageData struct {
	Nav   string // the nav entry that is current: "chat", "approvals", ...
	CSRF  string // the session's CSRF token, for the page's forms; "" when signed out
	Note  string // a message from note, picked by the ?note= of a redirect
	Error string // what went wrong, written by the daemon
}

// note is the message a redirect may ask a page to show (?note=KEY): a
// fixed text, so a link cannot make a page say anything else; "" for an
// unknown key.
func note(key string) string {
	switch key {
	case "approved":
		return "Approved."
	case "denied":
		return "Denied."
	case "done":
		return "Done."
	case "saved":
		return "Saved."
	case "signed-out":
		return "You are signed out."
	case "quarantined":
		return "Quarantined."
	case "restored":
		return "Restored."
	case "rolled-back":
		return "Rolled back."
	case "removed":
		return "Removed."
	case "reverted":
		return "Reverted: config.yaml's value (or the default) applies again."
	case "cleared":
		return "Cleared."
	case "token-replaced":
		return "The API token was replaced and every browser signed out: sign in with the new token."
	}
	return ""
}

// navItems are the UI's pages, in the nav's order.
var navItems = []struct{ Key, Path, Label string }{
	{"chat", "/chat", "Chat"},
	{"approvals", "/approvals", "Approvals"},
	{"tools", "/tools", "Tools"},
	{"skills", "/skills", "Skills"},
	{"settings", "/settings", "Settings"},
	{"audit", "/audit", "Audit"},
}

// show writes a page: the layout (the nav when signed in, the title,
// d's note and error) around what content writes.
func (s *Server) show(w http.ResponseWriter, status int, title string, d pageData, content func(p *page)) {
	var p page
	p.m(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`).t(title).m(` · shelldon</title>
<link rel="stylesheet" href="/static/app.css">
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header>
<span class="brand">shelldon</span>
`)
	if d.CSRF != "" {
		p.m(`<nav aria-label="Pages"><ul>
`)
		for _, it := range navItems {
			p.m(`<li><a href="`).t(it.Path).m(`"`)
			if it.Key == d.Nav {
				p.m(` aria-current="page"`)
			}
			p.m(`>`).t(it.Label).m("</a></li>\n")
		}
		p.m(`</ul></nav>
<form class="signout" method="post" action="/logout">`).csrfField(d.CSRF).m(`<button type="submit">Sign out</button></form>`)
	}
	p.m(`
</header>
<main id="main">
<h1>`).t(title).m("</h1>\n")
	if d.Note != "" {
		p.m(`<p class="note" role="status">`).t(d.Note).m("</p>\n")
	}
	if d.Error != "" {
		p.m(`<p class="error" role="alert">`).t(d.Error).m("</p>\n")
	}
	content(&p)
	p.m(`
</main>
</body>
</html>
`)
	writePage(w, status, p.String())
}

// uiPage serves a page to a signed-in browser, and sends any other to the
// login form.
func (s *Server) uiPage(h func(w http.ResponseWriter, r *http.Request, d pageData)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.session(w, r)
		if err != nil {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		h(w, r, pageData{CSRF: sess.CSRF, Note: note(r.URL.Query().Get("note"))})
	}
}

// uiAction serves a form's post from a signed-in browser: from the
// daemon's own origin, with the session's CSRF token (sessionOnly).
func (s *Server) uiAction(h http.HandlerFunc) http.HandlerFunc { return s.sessionOnly(h) }

// back sends the browser to path, showing the note key (note).
func back(w http.ResponseWriter, r *http.Request, path, note string) {
	if note != "" {
		path += "?note=" + note
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// serveStatic serves the UI's stylesheet and script.
func serveStatic() http.Handler {
	sub, err := fs.Sub(uiFS, "ui/static")
	if err != nil {
		panic(err) // the directory is embedded
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, max-age=3600")
		http.StripPrefix("/static", files).ServeHTTP(w, r)
	})
}

// pageSecurity are the headers of every HTML page.
func pageSecurity(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with its own forms, and sameOrigin refuses them.
	h.Set("Referrer-Policy", "same-origin")
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
