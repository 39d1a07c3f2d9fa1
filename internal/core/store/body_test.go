package store

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
)

// bodyMessages are messages of every shape a turn stores, with text that
// json.Marshal escapes (quotes, backslashes, newlines, HTML, control
// characters, U+2028) and text it does not (accents, emoji).
var bodyMessages = []contracts.Message{
	{Role: contracts.RoleUser, Text: "hello"},
	{Role: contracts.RoleUser},
	{Role: contracts.RoleAssistant, Text: "Line one\nline \"two\"\t<b>bold</b> & C:\\path\r\n\u2028\u2029 \x00\x01\x1f\x7f é 日本 🌱 \\u0041 /slash/"},
	{Role: contracts.RoleAssistant, Text: "let me look", ToolCalls: []contracts.ToolCall{
		{ID: "call_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
		{ID: "call_2", Name: "run_shell", Arguments: "not json at all\n"},
	}},
	{Role: contracts.RoleAssistant, ToolCalls: []contracts.ToolCall{{ID: "", Name: "", Arguments: ""}}},
	{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{
		{CallID: "call_1", Name: "read_file", OK: true, Content: "the garden\n<needs> water & light"},
		{CallID: "call_2", Name: "run_shell", OK: false, Content: ""},
	}},
	{Role: "odd role \"quoted\""},
}

// TestQuickMessageReadsWhatMarshalWrites: every body appendMessages
// writes is read by quickMessage, not left to encoding/json, and reads
// back as the message it was.
func TestQuickMessageReadsWhatMarshalWrites(t *testing.T) {
	t.Parallel()
	for _, m := range bodyMessages {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := quickMessage(b)
		if !ok {
			t.Errorf("quickMessage refused %s", b)
			continue
		}
		if diff := cmp.Diff(m, got); diff != "" {
			t.Errorf("quickMessage(%s) (-want +got):\n%s", b, diff)
		}
	}
}

// TestDecodeMessageFallsBack: a body of another form (spaces, another
// key order, keys in other cases, a surrogate pair, bytes that are not
// UTF-8, a key quickMessage does not know) is still read, by
// encoding/json, and a broken one is an error.
func TestDecodeMessageFallsBack(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body string
		want contracts.Message
	}{
		{`{ "role": "user", "text": "hi" }`, contracts.Message{Role: "user", Text: "hi"}},
		{`{"text":"hi","role":"user"}`, contracts.Message{Role: "user", Text: "hi"}},
		{`{"Role":"user","TEXT":"hi"}`, contracts.Message{Role: "user", Text: "hi"}},
		{`{"role":"user","text":"\ud83c\udf31 \ud800"}`, contracts.Message{Role: "user", Text: "🌱 \ufffd"}},
		{"{\"role\":\"user\",\"text\":\"a\xffb\"}", contracts.Message{Role: "user", Text: "a\ufffdb"}},
		{`{"role":"user","text":"hi","extra":1}`, contracts.Message{Role: "user", Text: "hi"}},
		{`{"role":"assistant","tool_calls":[]}`, contracts.Message{Role: "assistant", ToolCalls: []contracts.ToolCall{}}},
	} {
		if _, ok := quickMessage([]byte(tt.body)); ok {
			t.Errorf("quickMessage took %s", tt.body)
		}
		got, err := decodeMessage([]byte(tt.body))
		if err != nil {
			t.Errorf("decodeMessage(%s): %v", tt.body, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("decodeMessage(%s) (-want +got):\n%s", tt.body, diff)
		}
	}
	for _, bad := range []string{``, `{`, `{"role":"user"`, `{"role":"user","text":"a` + "\n" + `"}`, `{"role":"user","text":"\q"}`, `{"role":"user"}x`} {
		if m, err := decodeMessage([]byte(bad)); err == nil {
			t.Errorf("decodeMessage(%q) = %+v, want an error", bad, m)
		}
	}
}

// FuzzQuickMessage: whatever quickMessage accepts, encoding/json reads
// the same.
func FuzzQuickMessage(f *testing.F) {
	for _, m := range bodyMessages {
		b, _ := json.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte(`{"role":"user","text":"\u00e9\u0000\/\b\f"}`))
	f.Add([]byte(`{"role":"tool","tool_results":[{"call_id":"a","name":"b","ok":true,"content":"c"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := quickMessage(body)
		if !ok {
			return
		}
		var want contracts.Message
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("quickMessage took %q, which encoding/json refuses: %v", body, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("quickMessage(%q) (-encoding/json +quick):\n%s", body, diff)
		}
	})
}
