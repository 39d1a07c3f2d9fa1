package store

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
)

// decodeMessage decodes a stored message body (messages.body) as
// json.Unmarshal into a contracts.Message does. The bodies are what
// json.Marshal wrote (appendMessages): quickMessage reads exactly that
// form, about five times faster than encoding/json (which scans the body
// twice and matches each key by reflection); a History reads some
// hundred bodies a turn. Any other body, or anything in one that
// quickMessage does not know, is left to json.Unmarshal.
func decodeMessage(body []byte) (contracts.Message, error) {
	if m, ok := quickMessage(body); ok {
		return m, nil
	}
	var m contracts.Message
	err := json.Unmarshal(body, &m)
	return m, err
}

// quickMessage reads a body of json.Marshal's form: the fields of
// contracts.Message in their order, empty ones left out, no space:
//
//	{"role":S[,"text":S][,"tool_calls":[{"id":S,"name":S,"arguments":S},...]][,"tool_results":[{"call_id":S,"name":S,"ok":B,"content":S},...]]}
//
// ok is false for any other body: then it decodes nothing, and
// json.Unmarshal decides. FuzzQuickMessage checks that whatever it
// accepts, json.Unmarshal reads the same.
func quickMessage(b []byte) (m contracts.Message, ok bool) {
	q := quick{b: b}
	var role string
	if !q.lit(`{"role":`) || !q.str(&role) {
		return contracts.Message{}, false
	}
	m.Role = contracts.Role(role)
	if q.lit(`,"text":`) && !q.str(&m.Text) {
		return contracts.Message{}, false
	}
	if q.lit(`,"tool_calls":[`) {
		for {
			var c contracts.ToolCall
			if !q.lit(`{"id":`) || !q.str(&c.ID) || !q.lit(`,"name":`) || !q.str(&c.Name) ||
				!q.lit(`,"arguments":`) || !q.str(&c.Arguments) || !q.lit(`}`) {
				return contracts.Message{}, false
			}
			m.ToolCalls = append(m.ToolCalls, c)
			if !q.lit(`,`) {
				break
			}
		}
		if !q.lit(`]`) {
			return contracts.Message{}, false
		}
	}
	if q.lit(`,"tool_results":[`) {
		for {
			var r contracts.ToolResult
			if !q.lit(`{"call_id":`) || !q.str(&r.CallID) || !q.lit(`,"name":`) || !q.str(&r.Name) || !q.lit(`,"ok":`) {
				return contracts.Message{}, false
			}
			switch {
			case q.lit(`true`):
				r.OK = true
			case q.lit(`false`):
			default:
				return contracts.Message{}, false
			}
			if !q.lit(`,"content":`) || !q.str(&r.Content) || !q.lit(`}`) {
				return contracts.Message{}, false
			}
			m.ToolResults = append(m.ToolResults, r)
			if !q.lit(`,`) {
				break
			}
		}
		if !q.lit(`]`) {
			return contracts.Message{}, false
		}
	}
	if !q.lit(`}`) || q.i != len(b) {
		return contracts.Message{}, false
	}
	return m, true
}

// quick is quickMessage's position in a body.
type quick struct {
	b []byte
	i int
}

// lit consumes s if the body goes on with it.
func (q *quick) lit(s string) bool {
	if len(q.b)-q.i < len(s) || string(q.b[q.i:q.i+len(s)]) != s {
		return false
	}
	q.i += len(s)
	return true
}

// str consumes a JSON string into *out. It refuses (false) what
// encoding/json would read differently or not at all, and what it does
// not bother with: a control character, an escape it does not know, a
// surrogate escape, bytes that are not UTF-8 (encoding/json would put
// U+FFFD in their place).
func (q *quick) str(out *string) bool {
	b := q.b
	if q.i >= len(b) || b[q.i] != '"' {
		return false
	}
	start := q.i + 1
	i := start
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= ' ' {
		i++
	}
	if i < len(b) && b[i] == '"' { // no escape: the common case
		s := b[start:i]
		if !utf8.Valid(s) {
			return false
		}
		*out, q.i = string(s), i+1
		return true
	}
	buf := make([]byte, 0, i-start+64)
	buf = append(buf, b[start:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return false
			}
			*out, q.i = string(buf), i+1
			return true
		case c < ' ':
			return false
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return false
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(b[i+2:])
			if !ok || utf16.IsSurrogate(r) {
				return false
			}
			buf = utf8.AppendRune(buf, r)
			i += 4
		default:
			return false
		}
		i += 2
	}
	return false
}

// hex4 reads the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
