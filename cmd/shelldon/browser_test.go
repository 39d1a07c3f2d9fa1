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

// TestBrowserUI walks the web UI as its owner would: signs in, chats (the
// reply streams in), approves a RISKY call from the chat page, reads the
// audit, approves a tool shelldon wrote on its approval request's page and
// finds it among the tools, looks at the skills, and switches the model in
// the settings, which the next turn's request to the provider uses. Each
// page is checked for console errors, one <main> and labelled inputs,
// measured and photographed (browser.check).
func TestBrowserUI(t *testing.T) {
	srv := brokertest.NewServer(t, "openai", browserScript)
	h := home(t, "openai", srv.BaseURL(), "  stream: true\n")
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

	// The audit shows the call.
	b.visit("/audit")
	b.waitText("main", "run_shell")
	b.check("audit", false)

	// A tool shelldon writes waits on the approvals page; approving it
	// there makes it live among the tools, with a page of its own.
	b.visit("/chat")
	b.say("make me a word counter")
	b.waitNewPage("#conversation", "propose_tool ok=true")
	b.visit("/approvals")
	b.waitText("main", "word_count")
	b.check("approvals", false)
	// Its card links to the request's own page, which has the buttons too.
	href, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(() => {
	  for (const card of document.querySelectorAll("main .card")) {
	    const a = card.querySelector('a[href^="/approvals/"]');
	    if (a && card.innerText.includes("New tool: word_count")) return a.getAttribute("href");
	  }
	  return "";
	})()`))
	if err != nil || href == "" {
		t.Fatalf("no card with a link for word_count on /approvals (%v)\n%s", err, b.dump())
	}
	b.mark()
	b.do("open the request", chromedp.Click(chromedp.CSS(fmt.Sprintf(`main .card a[href=%q]`, href))))
	b.waitNewPage("main", "def run(text):")
	b.check("approval", false)
	b.mark()
	b.do("approve the tool", chromedp.Click(chromedp.CSS(fmt.Sprintf(`main form[action=%q] button`, href+"/approve"))))
	b.waitNewPage("main .note", "Approved.")
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

	// The skills: the bundled ones are there.
	b.visit("/skills")
	b.waitText("main", "make-a-tool")
	b.check("skills", false)
	b.mark()
	b.do("open make-a-tool", chromedp.Click(chromedp.CSS(`main a[href="/skills/make-a-tool"]`)))
	b.waitNewPage("main h1", "make-a-tool")
	b.check("skill", false)

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
	b.consoleClean("chat")
	// What the daemon holds with a browser connected, after every page.
	rss, anon := procRSS(t, d.cmd.Process.Pid)
	t.Logf("daemon with a browser VmRSS-MB %.2f RssAnon-MB %.2f", rss, anon)
}
