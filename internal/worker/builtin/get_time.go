package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed get_time.md
var getTimeDescription string

// getTimeArgs is empty: get_time takes no parameters.
type getTimeArgs struct{}

func getTimeTool(env Env) (*worker.Tool, error) {
	return worker.NewBuiltin(contracts.ToolGetTime, getTimeDescription,
		func(_ context.Context, _ getTimeArgs) (string, error) {
			return formatTime(env.Now(), env.Location), nil
		})
}

// formatTime renders now in loc, with the zone's name and the weekday, and
// in UTC.
func formatTime(now time.Time, loc *time.Location) string {
	local := now.In(loc)
	zone, _ := local.Zone()
	return fmt.Sprintf("local: %s (%s)\nweekday: %s\nutc: %s",
		local.Format(time.RFC3339), zone, local.Weekday(), now.UTC().Format(time.RFC3339))
}
