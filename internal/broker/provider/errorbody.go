package provider

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/lazy"
)

// maxExcerpt bounds, in bytes, the excerpt of an error body shown when no
// message can be found in it (before Clean escapes and trims it).
const maxExcerpt = 200

// ErrorBodyText extracts a readable message from an error body of any of
// the shapes servers answer with: the OpenAI and Anthropic
// {"error":{"type","message","code"}}, Ollama's and TGI's {"error":"..."},
// vLLM's and proxies' {"message":"..."}, FastAPI's {"detail":"..."} and
// {"detail":[{"loc","msg"}]}, {"errors":[{"message"}]}, RFC 7807's
// {"title","detail"}, a JSON array of any of these (Gemini), an HTML page
// (its title, else its text), or plain text. A body with none of these
// gives a short excerpt of itself. code is the error's code or type, if it
// has one. The text is hostile: the caller passes it through Clean (NewError
// does) before anyone reads it.
func ErrorBodyText(body []byte) (msg, code string) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return "", ""
	}
	var v any
	if (t[0] == '{' || t[0] == '[') && json.Unmarshal(t, &v) == nil {
		if msg, code := jsonMessage(v, 0); msg != "" {
			return msg, code
		}
		return excerpt(string(t)), ""
	}
	if t[0] == '<' {
		if text := htmlText(string(t)); text != "" {
			return excerpt(text), ""
		}
	}
	return excerpt(string(t)), ""
}

// ErrorValueText is ErrorBodyText for the value of an "error" field found
// inside a reply (a 200 whose body or stream event is an error): an object
// in one of the shapes above, or a string.
func ErrorValueText(raw json.RawMessage) (msg, code string) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return excerpt(strings.TrimSpace(string(raw))), ""
	}
	if msg, code := errorValue(v, 0); msg != "" {
		return msg, code
	}
	return "", ""
}

// maxDepth bounds how deep jsonMessage looks for a message.
const maxDepth = 4

// jsonMessage finds the message of a decoded JSON error body.
func jsonMessage(v any, depth int) (msg, code string) {
	if depth > maxDepth {
		return "", ""
	}
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v), ""
	case []any:
		for _, e := range v {
			if msg, code := jsonMessage(e, depth+1); msg != "" {
				return msg, code
			}
		}
	case map[string]any:
		if e, ok := v["error"]; ok {
			if msg, code := errorValue(e, depth+1); msg != "" {
				return msg, code
			}
		}
		for _, k := range []string{"message", "msg", "error_message", "errorMessage"} {
			if s, ok := v[k].(string); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s), ""
			}
		}
		if d, ok := v["detail"]; ok {
			msg := detailText(d, depth+1)
			if title, ok := v["title"].(string); ok && title != "" && msg != "" && msg != title {
				msg = title + ": " + msg
			}
			if msg != "" {
				return msg, ""
			}
		}
		if e, ok := v["errors"]; ok {
			if msg, code := jsonMessage(e, depth+1); msg != "" {
				return msg, code
			}
		}
		if s, ok := v["title"].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s), ""
		}
	}
	return "", ""
}

// errorValue reads the value of an "error" field: a string, or an object
// whose message comes with its type ("invalid_request_error: ...") and
// whose code (a string code, else the type) is returned as code.
func errorValue(e any, depth int) (msg, code string) {
	obj, ok := e.(map[string]any)
	if !ok {
		return jsonMessage(e, depth)
	}
	typ, _ := obj["type"].(string)
	code = typ
	if c, ok := obj["code"].(string); ok && c != "" {
		code = c
	}
	msg, _ = jsonMessage(obj, depth+1)
	switch {
	case msg == "" && code != "":
		return code, code
	case msg != "" && typ != "":
		return typ + ": " + msg, code
	}
	return msg, code
}

// detailText reads a "detail": a string, FastAPI's list of validation
// errors ({"loc":[...],"msg":"..."}, joined with "; "), or anything else
// a message can be found in.
func detailText(d any, depth int) string {
	list, ok := d.([]any)
	if !ok {
		msg, _ := jsonMessage(d, depth)
		return msg
	}
	var parts []string
	for _, e := range list {
		item, ok := e.(map[string]any)
		if !ok {
			if s, _ := jsonMessage(e, depth+1); s != "" {
				parts = append(parts, s)
			}
			continue
		}
		m, _ := item["msg"].(string)
		if m == "" {
			m, _ = jsonMessage(item, depth+1)
		}
		if m == "" {
			continue
		}
		if loc, ok := item["loc"].([]any); ok && len(loc) > 0 {
			var at []string
			for _, l := range loc {
				b, _ := json.Marshal(l)
				at = append(at, strings.Trim(string(b), `"`))
			}
			m = strings.Join(at, ".") + ": " + m
		}
		parts = append(parts, m)
		if len(parts) == 3 {
			break
		}
	}
	return strings.Join(parts, "; ")
}

// htmlPatterns are the regexps htmlText reads a page with, built by its
// first call (see ansiSequence).
type htmlPatterns struct{ title, hidden, tag, comment *regexp.Regexp }

var htmlRe lazy.Value[htmlPatterns]

func htmlPats() htmlPatterns {
	return htmlRe.Get(func() htmlPatterns {
		return htmlPatterns{
			title:   regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`),
			hidden:  regexp.MustCompile(`(?is)<(script|style|head)[^>]*>.*?</(script|style|head)>`),
			tag:     regexp.MustCompile(`(?s)<[^>]*>`),
			comment: regexp.MustCompile(`(?s)<!--.*?-->`),
		}
	})
}

// htmlText is what an HTML error page says: its title, else its text
// without the markup, entities decoded.
func htmlText(page string) string {
	re := htmlPats()
	if m := re.title.FindStringSubmatch(page); m != nil {
		if title := strings.TrimSpace(html.UnescapeString(re.tag.ReplaceAllString(m[1], " "))); title != "" {
			return title
		}
	}
	text := re.comment.ReplaceAllString(page, " ")
	text = re.hidden.ReplaceAllString(text, " ")
	text = re.tag.ReplaceAllString(text, " ")
	return strings.Join(strings.Fields(html.UnescapeString(text)), " ")
}

// excerpt is the start of s, at most maxExcerpt bytes, cut on a character
// boundary and marked when cut.
func excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return s
	}
	cut := maxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
