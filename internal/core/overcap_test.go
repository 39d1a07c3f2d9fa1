package core_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
)

// overCap stands for the broker's error for a reply over one of its caps
// (provider.Error with OverCap set), which core knows only by its method.
type overCap struct{ msg string }

func (e overCap) Error() string      { return e.msg }
func (e overCap) ReplyOverCap() bool { return true }

// TestModelReplyOverCapReachesTheOwner follows a reply over its caps from
// the model call through the complete handler and the worker's loop to the
// turn's reply: the owner reads the cause, not that the worker exited
// without a result, and the daemon's log says it at warn level.
func TestModelReplyOverCapReachesTheOwner(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var logged bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
		m := &coretest.Model{}
		m.Script(func(context.Context, contracts.Request) (contracts.Completion, error) {
			return contracts.Completion{}, overCap{"broker: every provider failed: anthropic:m (1 attempt): anthropic:m: the model's reply exceeded 1 MiB of text"}
		})
		sp := &coretest.Spawner{Build: coretest.Builder(coretest.Echo("echo"))}
		c, err := core.New(core.Options{Store: coretest.Store(t), Model: m, Spawner: sp, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Send(context.Background(), "c", "talk a lot", core.Events{})
		if err != nil {
			t.Fatal(err)
		}
		want := "the model's reply exceeded 1 MiB of text; the turn was stopped"
		if out.Stopped != contracts.StopError || !strings.Contains(out.Reply, want) {
			t.Errorf("outcome %+v, want a reply saying %q", out, want)
		}
		if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "exceeded 1 MiB of text") {
			t.Errorf("the log does not say it at warn level:\n%s", logged.String())
		}
	})
}
