package toolbox

import (
	"context"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Strike counts a failed call te of a self-coded tool offered to job's
// turn; at the threshold the version is quarantined, and the note returned
// is for that turn's reply. A call of any other tool is not a strike.
func (t *Toolbox) Strike(ctx context.Context, job contracts.Job, te contracts.ToolEvent) (note string) {
	var st *contracts.SelfTool
	for i := range job.SelfTools {
		if job.SelfTools[i].Name == te.Tool {
			st = &job.SelfTools[i]
		}
	}
	if st == nil || t.dir == nil {
		return ""
	}
	n, err := t.st.AddStrike(context.WithoutCancel(ctx), st.Name, st.Version, te.Summary, t.now())
	if err != nil {
		t.log.Error("strike", "tool", st.Name, "err", err)
		return ""
	}
	t.mu.Lock()
	limit := t.strikes
	t.mu.Unlock()
	t.record(ctx, job.Chat, job.Turn, auditStrike, st.Name, "", fmt.Sprintf("v%d strike %d of %d: %s", st.Version, n, limit, te.Summary), false)
	if n < limit {
		return ""
	}
	if err := t.dir.Quarantine(st.Name); err != nil {
		t.log.Error("quarantine", "tool", st.Name, "err", err)
		return ""
	}
	t.Invalidate()
	t.record(ctx, job.Chat, job.Turn, auditQuarantined, st.Name, "", fmt.Sprintf("v%d after %d failed calls", st.Version, n), true)
	t.log.Warn("self-coded tool quarantined", "tool", st.Name, "version", st.Version, "strikes", n)
	return fmt.Sprintf("Note from shelldon: the tool %s (version %d) failed %d times and was quarantined; `shelldon tools restore %s` brings it back.", st.Name, st.Version, n, st.Name)
}
