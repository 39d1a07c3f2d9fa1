package cli

import (
	"context"
	"fmt"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// Inboxer keeps what scheduled runs said while no one was there to read
// it (no Telegram): the interactive chat shows the unread items when it
// starts and marks them read.
type Inboxer interface {
	Inbox(ctx context.Context, unreadOnly bool) ([]core.InboxItem, error)
	MarkInboxRead(ctx context.Context, upTo int64) (int, error)
}

// showInbox prints the unread inbox, each item's text inert behind a
// gutter, then marks what it showed read.
func (t *Terminal) showInbox(ctx context.Context) {
	if t.Inbox == nil {
		return
	}
	items, err := t.Inbox.Inbox(ctx, true)
	if err != nil {
		fmt.Fprintf(t.Err, "The inbox of scheduled runs could not be read: %s\n", inert.Text(err.Error()))
		return
	}
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(t.Out, "\nWhile you were away, scheduled runs said (%d):\n", len(items))
	for _, it := range items {
		fmt.Fprintf(t.Out, "\n[%s, schedule %d, turn %d]\n%s\n", it.CreatedAt.Local().Format("Mon 2 Jan 15:04"), it.Schedule, it.Turn, inert.Block(it.Text, "  | "))
	}
	fmt.Fprintln(t.Out)
	if _, err := t.Inbox.MarkInboxRead(ctx, items[len(items)-1].ID); err != nil {
		fmt.Fprintf(t.Err, "The inbox could not be marked read: %s\n", inert.Text(err.Error()))
	}
}
