package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// listedTool is a tool as one of the owner's lists shows it.
type listedTool struct{ Name, Tier, Runs, Source string }

// lineTools reads the rows "name tier runs source state ..." of a
// text list (`shelldon tools list`, Telegram's /tools).
func lineTools(text string) []listedTool {
	var out []listedTool
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && (f[3] == "builtin" || f[3] == "self") {
			out = append(out, listedTool{f[0], f[1], f[2], f[3]})
		}
	}
	return out
}

// TestToolsListedEverywhere: the tools the model is offered, `shelldon
// tools list`, GET /api/tools and Telegram's /tools all show the
// catalogue's built-in tools, with their tiers and where each runs, and
// the live self-coded tool: the same list everywhere.
func TestToolsListedEverywhere(t *testing.T) {
	t.Parallel()
	bot := newFakeBotAPI(t)
	srv := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Text: "hello"}
	})
	h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("telegram:\n  api_base: %s\n  allowed_users: [42]\n", bot.srv.URL))
	os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY="+apiKey+"\nTELEGRAM_BOT_TOKEN="+botToken+"\n"), 0o600)
	dir, err := selfcode.Open(filepath.Join(h, "tools"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.Stage("word_count", selfcode.Starlark, wordCountStar, wordCountStarTest,
		selfcode.Meta{Description: "Count the words in a text.", ParamsSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}, "passed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Promote("word_count", m.Hash, "owner"); err != nil {
		t.Fatal(err)
	}

	var want []listedTool
	for _, b := range contracts.BuiltinTools() {
		want = append(want, listedTool{b.Name, string(b.Tier), string(b.Runs), "builtin"})
	}
	want = append(want, listedTool{"word_count", "free", "sandbox", "self"})
	names := func(list []listedTool) []string {
		var out []string
		for _, l := range list {
			out = append(out, l.Name)
		}
		slices.Sort(out)
		return out
	}

	d := startServe(t, h)
	if status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "hi"}); status != 200 {
		t.Fatalf("chat: %d %v", status, out)
	}
	var offered []string
	for _, spec := range srv.Requests()[0].Request.Tools {
		offered = append(offered, spec.Name)
	}
	slices.Sort(offered)
	// find_tools is offered only with more self-coded tools than a turn offers.
	wantOffered := slices.DeleteFunc(names(want), func(n string) bool { return n == contracts.ToolFindTools })
	if diff := cmp.Diff(wantOffered, offered); diff != "" {
		t.Errorf("the model was offered (-want +got):\n%s", diff)
	}

	status, out := d.do(t, "GET", "/api/tools", d.token, nil)
	if status != 200 {
		t.Fatalf("GET /api/tools: %d %v", status, out)
	}
	var api []listedTool
	for _, raw := range out["tools"].([]any) {
		v := raw.(map[string]any)
		api = append(api, listedTool{fmt.Sprint(v["name"]), fmt.Sprint(v["tier"]), fmt.Sprint(v["runs"]), fmt.Sprint(v["source"])})
		for _, k := range []string{"name", "tier", "runs", "source", "state"} {
			if _, ok := v[k]; !ok {
				t.Errorf("GET /api/tools: %v lacks %q", v, k)
			}
		}
	}
	if diff := cmp.Diff(want, api); diff != "" {
		t.Errorf("GET /api/tools (-want +got):\n%s", diff)
	}

	bot.waitFor(t, "setMyCommands", func(c botCall) bool { return c.Method == "setMyCommands" })
	bot.message(1, 42, "/tools")
	msg := bot.waitFor(t, "the tools", func(c botCall) bool {
		return c.Method == "sendMessage" && strings.Contains(fmt.Sprint(c.Body["text"]), "word_count")
	})
	html := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(fmt.Sprint(msg.Body["text"]), "\n")
	if diff := cmp.Diff(want, lineTools(html)); diff != "" {
		t.Errorf("Telegram's /tools (-want +got):\n%s", diff)
	}

	stdout, stderr, code := run(t, h, "", "tools", "list")
	if code != 0 {
		t.Fatalf("tools list: exit %d\n%s", code, stderr)
	}
	if diff := cmp.Diff(want, lineTools(stdout)); diff != "" {
		t.Errorf("shelldon tools list (-want +got):\n%s", diff)
	}
}
