package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// The chat page: the conversation of the chat "web" so far, a box to
// write in, and the requests its turns parked, each with its approve and
// deny buttons. Without JavaScript the form posts, the turn runs, and the
// page comes back with the reply (303). With it (ui/static/chat.js), the
// form posts to /chat/stream instead, which answers with Server-Sent
// Events as the turn runs: the model's words as they come, each tool's
// start and end, and the outcome; the script then reloads the page.
// A turn parked on a RISKY call keeps its messages with its request until
// the owner's decision is carried out: until then the page shows the
// owner's message of it after the history, marked as waiting.

// Conversations reads a chat's messages (core.Reader.Conversation) and
// its turns parked on a request, whose messages the history gets only
// when the owner's decision is carried out (core.Reader.Parked).
type Conversations interface {
	Conversation(ctx context.Context, chat string, chars int) ([]contracts.Message, error)
	Parked(ctx context.Context, chat string) ([]core.ParkedTurn, error)
}

var _ Conversations = (*core.Core)(nil)

const (
	// uiChat is the chat the web UI talks in.
	uiChat = "web"
	// chatShown is how much of the conversation the page shows, in
	// characters of whole turns, newest last.
	chatShown = 40_000
)

// chatLine is one message as the page shows it.
type chatLine struct {
	Who   string   // "you", "shelldon"
	Text  string   // what was said
	Tools []string // the tools an assistant message called
	// Waiting is, for the owner's message of a turn parked on a request,
	// the request's state ("pending" until the owner decides); "" for a
	// message of the history.
	Waiting string
}

type chatPage struct {
	Lines   []chatLine
	Pending []core.ApprovalView // this chat's requests waiting for the owner
}

func (s *Server) routeChat(mux *http.ServeMux) {
	mux.HandleFunc("GET /chat", s.uiPage(s.getChatPage))
	mux.HandleFunc("POST /chat", s.uiAction(s.postChatPage))
	mux.HandleFunc("POST /chat/stream", s.uiAction(s.postChatStream))
}

func (s *Server) getChatPage(w http.ResponseWriter, r *http.Request, d pageData) {
	data, err := s.chatPage(r.Context())
	if err != nil {
		s.log.Error("web: chat page", "err", err)
		d.Error = "The conversation could not be read; see the daemon's log."
	}
	s.showChat(w, http.StatusOK, d, data)
}

// showChat writes the chat page.
func (s *Server) showChat(w http.ResponseWriter, status int, d pageData, data chatPage) {
	d.Nav = "chat"
	s.show(w, status, "Chat", d, func(p *page) {
		p.m(`<section aria-label="Conversation" class="chat" id="conversation">
`)
		for _, l := range data.Lines {
			cls, who := markup("bot"), "shelldon"
			if l.Who == "you" {
				cls, who = "you", "You"
			}
			if l.Waiting != "" {
				cls += " waiting"
			}
			p.m(`<div class="msg `).m(cls).m(`">
<p class="who">`).t(who).m("</p>\n")
			if l.Text != "" {
				p.m(`<pre class="text">`).t(l.Text).m("</pre>\n")
			}
			switch l.Waiting {
			case "":
			case "pending":
				p.m(`<p class="muted">Waiting for your decision below; shelldon goes on once you decide.</p>
`)
			default:
				p.m(`<p class="muted">Your decision is being carried out.</p>
`)
			}
			if len(l.Tools) > 0 {
				p.m(`<p class="muted">Used: `)
				for i, t := range l.Tools {
					if i > 0 {
						p.m(", ")
					}
					p.el("code", "", t)
				}
				p.m("</p>\n")
			}
			p.m("</div>\n")
		}
		if len(data.Lines) == 0 {
			p.m(`<p class="muted">Nothing said yet.</p>
`)
		}
		p.m("</section>\n")
		if len(data.Pending) > 0 {
			p.m(`<section aria-labelledby="waiting">
<h2 id="waiting">Waiting for you</h2>
`)
			for _, a := range data.Pending {
				path := "/approvals/" + url.PathEscape(a.ID)
				p.m(`<div class="card">
<pre>`).t(a.Summary).m(`</pre>
<div class="actions">
`)
				p.button(path+"/approve", d.CSRF, "Approve", "primary", "from", "chat")
				p.button(path+"/deny", d.CSRF, "Deny", "danger", "from", "chat")
				p.link(path, "The full request").m(`
</div>
</div>
`)
			}
			p.m("</section>\n")
		}
		p.m(`<form method="post" action="/chat" id="say" class="say">
`).csrfField(d.CSRF).m(`
<p><label for="text">Message</label>
<textarea id="text" name="text" rows="3" required></textarea></p>
<p class="actions"><button type="submit" class="primary">Send</button> <span id="progress" class="muted" role="status" aria-live="polite"></span></p>
</form>
<script src="/static/chat.js" defer></script>
`)
	})
}

// chatPage reads what the chat page shows.
func (s *Server) chatPage(ctx context.Context) (chatPage, error) {
	var page chatPage
	if s.conv != nil {
		msgs, err := s.conv.Conversation(ctx, uiChat, chatShown)
		if err != nil {
			return page, err
		}
		page.Lines = chatLines(msgs)
		// Read after the history: a parked turn's messages reach the
		// history in the transaction that closes its request, so none is
		// shown twice (core.Reader.Parked).
		parked, err := s.conv.Parked(ctx, uiChat)
		if err != nil {
			return page, err
		}
		page.Lines = append(page.Lines, parkedLines(parked)...)
	}
	if s.appr != nil {
		list, err := s.appr.Approvals(ctx)
		if err != nil {
			return page, err
		}
		for _, a := range list {
			if a.Chat == uiChat {
				page.Pending = append(page.Pending, a)
			}
		}
	}
	return page, nil
}

// chatLines are msgs as the page shows them: the owner's words and
// shelldon's, with the tools it called; tool results are not shown.
func chatLines(msgs []contracts.Message) []chatLine {
	var out []chatLine
	for _, m := range msgs {
		switch m.Role {
		case contracts.RoleUser:
			if m.Text != "" {
				out = append(out, chatLine{Who: "you", Text: m.Text})
			}
		case contracts.RoleAssistant:
			l := chatLine{Who: "shelldon", Text: m.Text}
			for _, c := range m.ToolCalls {
				l.Tools = append(l.Tools, c.Name)
			}
			if l.Text != "" || len(l.Tools) > 0 {
				out = append(out, l)
			}
		}
	}
	return out
}

// parkedLines are the owner's messages of the parked turns, marked as
// waiting: the history holds them only once the decision is carried out,
// and until then the owner still sees what they asked.
func parkedLines(parked []core.ParkedTurn) []chatLine {
	var out []chatLine
	for _, t := range parked {
		for _, m := range t.Messages {
			if m.Role == contracts.RoleUser && m.Text != "" {
				out = append(out, chatLine{Who: "you", Text: m.Text, Waiting: t.State})
			}
		}
	}
	return out
}

// chatText is the message of a chat form, or what is wrong with it, for
// the owner.
func chatText(r *http.Request) (text, problem string) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxChatBody)
	if err := r.ParseForm(); err != nil {
		return "", "The message could not be read: " + err.Error()
	}
	text = r.PostForm.Get("text")
	switch {
	case strings.TrimSpace(text) == "":
		return "", "Write a message first."
	case len(text) > core.MaxInput:
		return "", fmt.Sprintf("The message is %d bytes; the limit is %d.", len(text), core.MaxInput)
	}
	return text, ""
}

// postChatPage runs a turn from the form (no JavaScript) and shows the
// page again.
func (s *Server) postChatPage(w http.ResponseWriter, r *http.Request) {
	text, problem := chatText(r)
	if problem == "" {
		if _, err := s.chat.Send(r.Context(), uiChat, text, core.Events{}); err != nil {
			s.log.Error("web chat turn failed", "err", err)
			problem = "The turn failed: " + err.Error()
		}
	}
	if problem != "" {
		data, _ := s.chatPage(r.Context())
		s.showChat(w, http.StatusBadRequest, pageData{CSRF: r.PostForm.Get("csrf"), Error: problem}, data)
		return
	}
	back(w, r, "/chat", "")
}

// maxStreamed caps how much of the model's text one stream sends: the
// reply itself is capped by the broker, and the page shows the rest after
// its reload.
const maxStreamed = 1 << 20

// postChatStream runs a turn and answers with its events as they come:
// "text" (a piece of the reply), "tool" (a tool call's start or end: its
// name, phase and, at its end, whether it went well), and at the end
// "done" (the reply, whether it stopped, and the requests it parked) or
// "error". Each event's data is JSON, its text already inert (the script
// puts it on the page as text, which would not stop a bidirectional
// override from reordering it).
func (s *Server) postChatStream(w http.ResponseWriter, r *http.Request) {
	text, problem := chatText(r)
	if problem != "" {
		writeError(w, http.StatusBadRequest, "bad_request", problem)
		return
	}
	flusher := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // a proxy in front must not hold the events back
	w.WriteHeader(http.StatusOK)
	var (
		mu   sync.Mutex
		sent int
		shut bool
	)
	send := func(event string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if shut {
			return
		}
		armWrite(w)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			shut = true
			return
		}
		_ = flusher.Flush()
	}
	ev := core.Events{
		Text: func(delta string) {
			mu.Lock()
			over := sent+len(delta) > maxStreamed
			sent += len(delta)
			mu.Unlock()
			if !over {
				send("text", inert.Text(delta))
			}
		},
		Tool: func(e contracts.ToolEvent) {
			send("tool", map[string]any{"phase": e.Phase, "tool": inert.Text(e.Tool), "ok": e.OK})
		},
	}
	out, err := s.chat.Send(r.Context(), uiChat, text, ev)
	if err != nil && out.Turn == 0 {
		s.log.Error("web chat turn failed", "err", err)
		send("error", map[string]string{"message": "The turn could not run: " + err.Error()})
	} else {
		parked := make([]map[string]string, 0, len(out.Approvals))
		for _, a := range out.Approvals {
			parked = append(parked, map[string]string{"id": a.ID, "summary": inert.Text(a.Summary)})
		}
		send("done", map[string]any{"reply": inert.Text(out.Reply), "stopped": out.Stopped, "approvals": parked})
	}
	mu.Lock()
	shut = true // a late event (none should come) is not written after the handler
	mu.Unlock()
}
