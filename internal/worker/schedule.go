package worker

import (
	"context"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// Schedule asks the daemon to create the schedule the owner approved (the
// schedule tool, package scheduletools) and returns its answer for the
// model.
func (m *daemonClient) Schedule(ctx context.Context, req contracts.ScheduleRequest) (string, error) {
	var out string
	if err := m.calls.Call(ctx, wire.MethodSchedule, req, &out); err != nil {
		return "", err
	}
	return out, nil
}
