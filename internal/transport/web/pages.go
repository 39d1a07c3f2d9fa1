package web

import "net/http"

// The UI's pages are HTML the daemon writes itself (ui.go): html/template
// escapes every value, and the Content-Security-Policy allows no inline
// script or style, no foreign origin and no framing.

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
