package web

import (
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/inert"
)

// The UI's HTML is written by Go code with a small builder, not by
// html/template: text/template's reflection (it looks methods up by name)
// makes the linker keep every exported method of every type in the
// binary, which cost this binary 3.5 MB and every process that starts
// from it (the daemon, each worker and sandbox helper) 1.7 MiB of
// resident memory and 2 ms of initialisation (issue 16).
//
// The builder has two ways in. m writes markup, and takes only a markup:
// a constant string converts to one by itself, but a string variable does
// not, so text from outside (the model's, a tool's, a request's) cannot
// become markup without a conversion that TestMarkupOnlyFromConstants
// looks for. Everything else goes through t (text, made inert and
// escaped for an element's content or a quoted attribute's value), n (a
// number) or the helpers built on them.

// markup is HTML that the daemon's own code wrote.
type markup string

// page builds one HTML page.
type page struct{ b strings.Builder }

// m writes markup.
func (p *page) m(s markup) *page {
	p.b.WriteString(string(s))
	return p
}

// t writes s as text: inert first (internal/inert.Text: control,
// bidirectional, zero-width and other invisible characters and invalid
// bytes shown as escapes, so nothing the model wrote reorders or hides
// what the owner reads), then escaped for an element's content and for
// an attribute value in double quotes.
func (p *page) t(s string) *page {
	s = inert.Text(s)
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		default:
			continue
		}
		p.b.WriteString(s[last:i])
		p.b.WriteString(esc)
		last = i + 1
	}
	p.b.WriteString(s[last:])
	return p
}

// n writes an integer.
func (p *page) n(v int64) *page {
	p.b.WriteString(strconv.FormatInt(v, 10))
	return p
}

// el writes <tag class="cls">text</tag>; cls may be "".
func (p *page) el(tag markup, cls, text string) *page {
	p.m("<").m(tag)
	if cls != "" {
		p.m(` class="`).t(cls).m(`"`)
	}
	return p.m(">").t(text).m("</").m(tag).m(">")
}

// link writes <a href="href">text</a>; href is a path the daemon built
// (escaped here as an attribute, so it cannot end the attribute).
func (p *page) link(href, text string) *page {
	return p.m(`<a href="`).t(href).m(`">`).t(text).m(`</a>`)
}

// hidden writes a hidden input.
func (p *page) hidden(name markup, value string) *page {
	return p.m(`<input type="hidden" name="`).m(name).m(`" value="`).t(value).m(`">`)
}

// csrfField is the hidden CSRF field every form of a signed-in page has.
func (p *page) csrfField(csrf string) *page { return p.hidden("csrf", csrf) }

// button writes a form that posts to action (a path the daemon built)
// with the CSRF token, the extra hidden fields (name, value pairs) and
// one button.
func (p *page) button(action, csrf string, label string, cls string, fields ...string) *page {
	p.m(`<form method="post" action="`).t(action).m(`">`).csrfField(csrf)
	for i := 0; i+1 < len(fields); i += 2 {
		p.m(`<input type="hidden" name="`).t(fields[i]).m(`" value="`).t(fields[i+1]).m(`">`)
	}
	p.m(`<button type="submit"`)
	if cls != "" {
		p.m(` class="`).t(cls).m(`"`)
	}
	return p.m(`>`).t(label).m(`</button></form>`)
}

func (p *page) String() string { return p.b.String() }
