package scheduletools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

// daemon records what it was asked to create.
type daemon struct {
	worker.Daemon // the other methods are never called here
	got           []contracts.ScheduleRequest
}

func (d *daemon) Schedule(_ context.Context, req contracts.ScheduleRequest) (string, error) {
	d.got = append(d.got, req)
	return "Schedule 1 is set", nil
}

func TestCheck(t *testing.T) {
	t.Parallel()
	good := []Args{
		{When: "every 30m", Prompt: "water the plants"},
		{When: "30 8 * * 1-5", Prompt: "summarise the news\n\tin three lines"},
		{When: "every day at 08:00", Prompt: strings.Repeat("x", contracts.MaxSchedulePrompt)},
	}
	for _, in := range good {
		if err := Check(in); err != nil {
			t.Errorf("Check(%+v) = %v", in, err)
		}
	}
	bad := []struct {
		in   Args
		want string
	}{
		{Args{When: "every 1m", Prompt: "x"}, "too often"},
		{Args{When: "tomorrow morning", Prompt: "x"}, "is not a schedule"},
		{Args{When: "0 0 30 2 *", Prompt: "x"}, "never fires"},
		{Args{When: "every 30m", Prompt: "  \n"}, "the prompt is empty"},
		{Args{When: "every 30m", Prompt: strings.Repeat("x", contracts.MaxSchedulePrompt+1)}, "the limit is 2000"},
		{Args{When: "every 30m", Prompt: "water \u202ethe plants"}, "U+202E"},
		{Args{When: "every 30m", Prompt: "water\x1b[2Jthe plants"}, "control character"},
	}
	for _, tc := range bad {
		if err := Check(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v; want %q", tc.in, err, tc.want)
		}
	}
}

func TestTool(t *testing.T) {
	t.Parallel()
	reg := worker.NewRegistry()
	d := &daemon{}
	if err := Register(reg, d); err != nil {
		t.Fatal(err)
	}
	tool, ok := reg.Get(contracts.ToolSchedule)
	if !ok || tool.Tier != contracts.TierRisky || tool.Guard != Guard || tool.Check == nil {
		t.Fatalf("tool = %+v, %v", tool, ok)
	}
	ctx := context.Background()
	if err := tool.Check(ctx, json.RawMessage(`{"when":"every 2m","prompt":"x"}`)); err == nil {
		t.Error("Check let a too frequent schedule reach the owner")
	}
	if err := tool.Check(ctx, json.RawMessage(`{"when":5}`)); err == nil {
		t.Error("Check accepted arguments that do not fit")
	}
	out, err := tool.Run(ctx, json.RawMessage(`{"when":"every 2h","prompt":"water the plants"}`))
	if err != nil || out != "Schedule 1 is set" || len(d.got) != 1 || d.got[0] != (contracts.ScheduleRequest{When: "every 2h", Prompt: "water the plants"}) {
		t.Errorf("Run = %q, %v; asked %+v", out, err, d.got)
	}
	// A daemon that cannot create schedules fails the call, not the turn.
	reg = worker.NewRegistry()
	if err := Register(reg, nil); err != nil {
		t.Fatal(err)
	}
	tool, _ = reg.Get(contracts.ToolSchedule)
	if _, err := tool.Run(ctx, json.RawMessage(`{"when":"every 2h","prompt":"x"}`)); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("Run without a daemon = %v", err)
	}
}
