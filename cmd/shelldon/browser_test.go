//go:build browser

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// The web UI in a real browser: a headless Chromium (browser_driver_test.go)
// against a real `shelldon serve` with a fake provider. These tests need
// the build tag browser and a chromium on PATH:
//
//	go test -tags browser -count=1 -run '^TestBrowser' -v ./cmd/shelldon/
//
// They write the screenshots in docs/screenshots and log each page's
// weight and first paint as "page NAME bytes N fcp-ms X".

// browserScript is the fake model of the browser test: it greets, asks
// for a RISKY shell command, proposes a tool, names the model it was asked
// with, and reports the tool results it gets.
func browserScript(r brokertest.Recorded) brokertest.Reply {
	last := r.Request.Messages[len(r.Request.Messages)-1]
	if last.Role == contracts.RoleUser {
		switch last.Text {
		case "hello there":
			return brokertest.Reply{Text: "Hello from the fake model."}
		case "say hi in the shell":
			return brokertest.Reply{Text: "Running it.", ToolCalls: []contracts.ToolCall{
				{ID: "call_shell", Name: "run_shell", Arguments: `{"command":"echo hi"}`},
			}}
		case "make me a word counter":
			args, _ := json.Marshal(map[string]string{"name": "word_count", "code": wordCountStar, "test": wordCountStarTest, "language": "starlark"})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "p1", Name: "propose_tool", Arguments: string(args)}}}
		case "delete the notes":
			return brokertest.Reply{Text: "Deleting.", ToolCalls: []contracts.ToolCall{
				{ID: "call_rm", Name: "run_shell", Arguments: `{"command":"rm notes.txt"}`},
			}}
		case "count lines too":
			args, _ := json.Marshal(map[string]string{"name": "word_count", "code": wordCountStarV2, "test": wordCountStarTest, "language": "starlark"})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "p2", Name: "propose_tool", Arguments: string(args)}}}
		case "write a watering skill":
			args, _ := json.Marshal(map[string]string{"name": "water-plants", "description": "Water the plants on Mondays.", "body": "1. Check the soil.\n2. Water."})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "s1", Name: "create_skill", Arguments: string(args)}}}
		case "which model?":
			return brokertest.Reply{Text: "Asked with model " + r.Model + "."}
		}
		return brokertest.Reply{Text: "I was not told what to say to " + last.Text}
	}
	var parts []string
	for _, tr := range last.ToolResults {
		parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, strings.TrimSpace(tr.Content)))
	}
	return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | ")}
}

// wordCountStarV2 is word_count's second version: the same tool, worded
// apart, so that its page shows a diff and a rollback.
const wordCountStarV2 = `DESCRIPTION = "Count the words in a text, version two."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}

def run(text):
    words = text.split()
    return str(len(words))
`

// TestBrowserUI walks the web UI as its owner would: signs in, chats (the
// reply streams in), approves a RISKY call from the chat page and denies
// another, reads the audit, approves a tool shelldon wrote on its approval
// request's page and finds it among the tools, approves its second version,
// rolls it back, quarantines and restores it, approves a skill the agent
// drafted, switches the provider and the model in the settings (the next
// turn's request goes where the switch says, with the key the secrets form
// set). Each page is checked for console errors, one <main> and labelled
// inputs, measured and photographed (browser.check).
func TestBrowserUI(t *testing.T) {
	srv := brokertest.NewServer(t, "openai", browserScript)
	second := brokertest.NewServer(t, "openai", browserScript)
	h := home(t, "openai", srv.BaseURL(), "  stream: true\nfallback:\n  - name: second\n    kind: openai\n    base_url: "+second.BaseURL()+
		"\n    model: second-model\n    api_key_env: \"\"\n")
	d := startServe(t, h)
	b := newBrowser(t, "http://"+d.addr)

	// Signed out, the daemon's root sends the browser to the login form.
	b.do("open /", chromedp.Navigate(b.base+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	if u := b.url(); u != b.base+"/login" {
		t.Fatalf("signed out, / landed on %s", u)
	}
	b.check("login", false)
	b.mark()
	b.do("sign in",
		chromedp.SendKeys(chromedp.CSS("#token"), d.token),
		chromedp.Click(chromedp.CSS("form.login button[type=submit]")),
	)
	b.waitNewPage("main h1", "Chat")
	if u := b.url(); u != b.base+"/chat" {
		t.Fatalf("signed in, landed on %s", u)
	}

	// A message: the reply streams into the page, which then reloads and
	// shows the conversation as the daemon keeps it.
	b.say("hello there")
	b.waitNewPage("#conversation", "Hello from the fake model.")
	if got := b.streamed(); !strings.Contains(got, "Hello from the fake model.") {
		t.Errorf("the reply was not streamed into the page before its reload: %q", got)
	}
	if got := b.text("#conversation"); !strings.Contains(got, "hello there") {
		t.Errorf("the conversation lacks the message: %q", got)
	}
	b.check("chat", true)

	// A RISKY call: the turn parks, the chat page shows the request with
	// its buttons; approving runs it and the turn goes on.
	b.say("say hi in the shell")
	b.waitNewPage("section[aria-labelledby=waiting] .card pre", "echo hi")
	if got := b.text("section[aria-labelledby=waiting] .card pre"); !strings.Contains(got, "run_shell") {
		t.Errorf("the approval card lacks the tool: %q", got)
	}
	if got := b.text("#conversation"); !strings.Contains(got, "say hi in the shell") {
		t.Errorf("the message of the waiting turn is not on the page: %q", got)
	}
	b.check("chat-approval", false)
	b.mark()
	b.do("approve", chromedp.Click(chromedp.CSS("section[aria-labelledby=waiting] .card button.primary")))
	b.waitNewPage("#conversation", "run_shell ok=true")
	if got := b.text("#conversation"); !strings.Contains(got, "say hi in the shell") || !strings.Contains(got, "RESULTS: run_shell ok=true exit status 0\nstdout:\nhi") {
		t.Errorf("the turn's result is not on the page: %q", got)
	}
	if n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll("section[aria-labelledby=waiting]").length`)); err != nil || n != 0 {
		t.Errorf("the decided request is still shown (%d, %v)", n, err)
	}

	// Another: denied from the chat page, it never runs.
	b.say("delete the notes")
	b.waitNewPage("section[aria-labelledby=waiting] .card pre", "rm notes.txt")
	b.mark()
	b.do("deny", chromedp.Click(chromedp.CSS("section[aria-labelledby=waiting] .card button.danger")))
	b.waitNewPage("#conversation", "run_shell ok=false")
	if got := b.text("#conversation"); !strings.Contains(got, "denied") {
		t.Errorf("the denied call's result does not say so: %q", got)
	}

	// The audit shows the call.
	b.visit("/audit")
	b.waitText("main", "run_shell")
	b.check("audit", false)
	// Filtered by kind: only the denial.
	b.mark()
	b.do("filter the audit", chromedp.Evaluate[chromedp.Void](`(() => {
	  const k = document.getElementById("kind");
	  k.value = "approval_denied";
	  k.form.requestSubmit();
	})()`))
	b.waitNewPage("main table", "approval_denied")
	// The arguments are folded in a <details>: textContent has them.
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("main table").textContent`))
	if err != nil || !strings.Contains(got, "rm notes.txt") || strings.Contains(got, "echo hi") || !strings.Contains(b.url(), "kind=approval_denied") {
		t.Errorf("the audit filtered by kind shows %q at %s (%v)", got, b.url(), err)
	}

	// A tool shelldon writes waits on the approvals page; approving it
	// there makes it live among the tools, with a page of its own.
	b.visit("/chat")
	b.say("make me a word counter")
	b.waitNewPage("#conversation", "propose_tool ok=true")
	b.visit("/approvals")
	// Its card links to the request's own page, which has the buttons too.
	b.approveOnRequestPage("word_count", "def run(text):", true)
	if state, _ := toolState(t, d, "word_count"); state != "live" {
		t.Fatalf("after approving on /approvals the tool is %q\n%s", state, b.dump())
	}

	b.visit("/tools")
	b.waitText("main", "word_count")
	b.check("tools", false)
	b.mark()
	b.do("open word_count", chromedp.Click(chromedp.CSS(`main a[href="/tools/word_count"]`)))
	b.waitNewPage("main", "Count the words in a text.")
	b.check("tool", false)

	// A second version, approved the same way, then rolled back on the
	// tool's page (behind a confirm step): version 1 is live again.
	b.visit("/chat")
	b.say("count lines too")
	b.waitNewPage("#conversation", "propose_tool ok=true")
	b.visit("/approvals")
	b.approveOnRequestPage("word_count", "version two", false)
	if state, v := toolState(t, d, "word_count"); state != "live" || v != 2 {
		t.Fatalf("after approving version 2: %q v%v", state, v)
	}
	b.visit("/tools/word_count")
	b.waitText("main", "version two")
	b.click("roll back…", `main form[action="/tools/word_count"]:has(input[value=rollback]) button`, "main .confirm", "back to its version before this one?")
	b.click("confirm the rollback", `main form[action="/tools/word_count/rollback"] button`, "main .note", "Rolled back.")
	if state, v := toolState(t, d, "word_count"); state != "live" || v != 1 {
		t.Errorf("after the rollback: %q v%v", state, v)
	}
	b.click("quarantine", `main form[action="/tools/word_count/quarantine"] button`, "main .note", "Quarantined.")
	if state, _ := toolState(t, d, "word_count"); state != "quarantined" {
		t.Errorf("after quarantine: %q", state)
	}
	b.click("restore", `main form[action="/tools/word_count/restore"] button`, "main .note", "Restored.")
	if state, _ := toolState(t, d, "word_count"); state != "live" {
		t.Errorf("after restore: %q", state)
	}

	// The skills: the bundled ones are there.
	b.visit("/skills")
	b.waitText("main", "make-a-tool")
	b.check("skills", false)
	b.mark()
	b.do("open make-a-tool", chromedp.Click(chromedp.CSS(`main a[href="/skills/make-a-tool"]`)))
	b.waitNewPage("main h1", "make-a-tool")
	b.check("skill", false)

	// A skill the agent drafts waits for the owner; approved on its
	// request's page, it is among the skills.
	b.visit("/chat")
	b.say("write a watering skill")
	b.waitNewPage("#conversation", "create_skill ok=true")
	b.visit("/skills")
	b.waitText("main", "water-plants")
	b.visit("/approvals")
	b.approveOnRequestPage("water-plants", "Check the soil.", false)
	b.visit("/skills/water-plants")
	b.waitText("main", "Check the soil.")

	// The settings: switch the model; the next turn asks with it.
	b.visit("/settings")
	b.check("settings", false)
	b.setModel("other-model")
	b.visit("/chat")
	b.say("which model?")
	b.waitNewPage("#conversation", "Asked with model other-model.")
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].Model; got != "other-model" {
		t.Errorf("the turn after the switch asked with %q", got)
	}
	// Switch the provider: the next turn goes to the second endpoint.
	b.visit("/settings")
	b.pickProvider("second")
	b.visit("/chat")
	b.say("which model?")
	b.waitNewPage("#conversation", "Asked with model second-model.")
	if n := len(second.Requests()); n == 0 {
		t.Error("the second provider got no request after the switch")
	}
	// A new key from the write-only field, then the first provider back:
	// its next request carries the new key, and no page shows it.
	const newKey = "sk-browser-set-key-0123456789"
	b.visit("/settings")
	b.mark()
	b.do("set the key",
		chromedp.SendKeys(chromedp.CSS(`form.secret:has(input[value=TEST_PROVIDER_KEY]) input[type=password]`), newKey),
		chromedp.Click(chromedp.CSS(`form.secret:has(input[value=TEST_PROVIDER_KEY]) button`)),
	)
	b.waitNewPage("main .note", "Saved.")
	if html := b.dump(); strings.Contains(html, newKey) {
		t.Error("the settings page shows the key it set")
	}
	// Clearing the key the chain needs is refused, in words.
	b.click("clear the key", `form.secret-clear:has(input[value=TEST_PROVIDER_KEY]) button`, "main [role=alert]", "Nothing was changed")
	b.consoleExpected("status of 400")
	b.pickProvider("openai")
	before := len(srv.Requests())
	b.visit("/chat")
	b.say("which model?")
	b.waitNewPage("#conversation", "Asked with model other-model.")
	reqs = srv.Requests()
	if len(reqs) == before || reqs[len(reqs)-1].Header.Get("Authorization") != "Bearer "+newKey {
		t.Errorf("the first provider's next request does not carry the key set on the page")
	}
	b.consoleClean("chat")
	// What the daemon holds with a browser connected, after every page.
	rss, anon := procRSS(t, d.cmd.Process.Pid)
	t.Logf("daemon with a browser VmRSS-MB %.2f RssAnon-MB %.2f", rss, anon)
}
