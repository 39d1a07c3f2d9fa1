package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// inbox is an Inboxer of fixed items that records what was marked read.
type inbox struct {
	items  []core.InboxItem
	marked []int64
}

func (i *inbox) Inbox(_ context.Context, unreadOnly bool) ([]core.InboxItem, error) {
	if !unreadOnly {
		panic("the chat shows unread items only")
	}
	return i.items, nil
}

func (i *inbox) MarkInboxRead(_ context.Context, upTo int64) (int, error) {
	i.marked = append(i.marked, upTo)
	return len(i.items), nil
}

// TestChatShowsTheInbox: the interactive chat starts by showing what
// scheduled runs said, inert, and marks it read; with nothing unread it
// says nothing.
func TestChatShowsTheInbox(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)
	in := &inbox{items: []core.InboxItem{
		{ID: 4, Schedule: 1, Turn: 9, Text: "⏰ Schedule 1 (every 30m), due 08:00:\n\nwatered \x1b[31mred\x1b[0m", CreatedAt: at},
		{ID: 6, Schedule: 2, Turn: 11, Text: "second\u202e line", CreatedAt: at},
	}}
	var out bytes.Buffer
	term := &Terminal{Chat: &fakeChat{}, In: strings.NewReader(""), Out: &out, Err: &out, Inbox: in, Interrupts: make(chan os.Signal)}
	if err := term.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"While you were away, scheduled runs said (2):", "schedule 1, turn 9]", "  | ⏰ Schedule 1 (every 30m), due 08:00:", "  | watered", "schedule 2, turn 11]"} {
		if !strings.Contains(s, want) {
			t.Errorf("the chat's start lacks %q:\n%s", want, s)
		}
	}
	if bad := inert.Raw(s, false); bad != "" {
		t.Errorf("raw %s on the terminal:\n%q", bad, s)
	}
	if len(in.marked) != 1 || in.marked[0] != 6 {
		t.Errorf("marked read up to %v, want [6]", in.marked)
	}

	empty := &inbox{}
	out.Reset()
	term = &Terminal{Chat: &fakeChat{}, In: strings.NewReader(""), Out: &out, Err: &out, Inbox: empty, Interrupts: make(chan os.Signal)}
	if err := term.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "While you were away") || len(empty.marked) != 0 {
		t.Errorf("an empty inbox: %q, marked %v", out.String(), empty.marked)
	}
}
