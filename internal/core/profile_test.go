package core_test

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
)

// lockedBuffer is a log destination for a logger used from several
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTurnProfile: a turn logs, at debug level, where its time went: the
// daemon's steps in the order they happen, with the worker's marks placed
// among them, each with the milliseconds since the step before.
func TestTurnProfile(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var logs lockedBuffer
		u := newUnit(t, func(o *core.Options) {
			o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		})
		u.model.Script(coretest.Reply("", coretest.Call("c0", "echo", `{"text":"x"}`)), coretest.Reply("done"))
		if _, err := u.core.Send(context.Background(), "c", "hi", core.Events{}); err != nil {
			t.Fatal(err)
		}
		line := ""
		for l := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(l, `msg="turn profile"`) {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("no turn profile logged:\n%s", logs.String())
		}
		steps := regexp.MustCompile(`steps="([^"]*)"`).FindStringSubmatch(line)
		if steps == nil {
			t.Fatalf("no steps in %q", line)
		}
		var daemon []string
		worker := 0
		for item := range strings.SplitSeq(steps[1], ", ") {
			name, ms, ok := strings.Cut(item, " +")
			if !ok || !regexp.MustCompile(`^\d+\.\d\d$`).MatchString(ms) {
				t.Fatalf("item %q is not \"step +ms\"", item)
			}
			if strings.HasPrefix(name, "worker: ") {
				worker++
				continue
			}
			daemon = append(daemon, name)
		}
		// The facts are read beside the history and the turn's beginning.
		i := slices.Index(daemon, "memory read")
		if i < 0 || i > slices.Index(daemon, "worker spawned") {
			t.Fatalf("memory read missing or after the worker's spawn: %q", daemon)
		}
		daemon = slices.Delete(daemon, i, i+1)
		want := []string{"worker slot taken", "history read", "turn begun", "tools selected",
			"worker spawned", "job sent",
			"model request received", "model answered", "usage recorded",
			"model request received", "model answered", "usage recorded",
			"result received", "turn committed"}
		if strings.Join(daemon, "|") != strings.Join(want, "|") {
			t.Errorf("daemon steps:\n got %q\nwant %q", daemon, want)
		}
		if worker == 0 {
			t.Errorf("no worker marks in %q", steps[1])
		}
	})
}
