package core

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// maxMarks bounds a turn's profile: the worker's marks come from outside
// the daemon, and a long turn's tool calls add more.
const maxMarks = 128

// maxStep bounds the name of a worker's step in the log.
const maxStep = 64

// stepJobSent is the daemon's mark the worker's marks count from.
const stepJobSent = "job sent"

// turnProfile is where one turn's time went: the daemon's own steps and,
// placed after the job was sent, the worker's (contracts.Result.Profile).
// It is logged at debug level when the turn ends ("turn profile"), and
// the benchmarks read it from there for docs/PERFORMANCE.md. It costs a
// few appends per turn. The model call marks it from its own goroutine.
type turnProfile struct {
	start   time.Time
	mu      sync.Mutex
	jobSent int64 // µs since start, when sent
	sent    bool
	marks   []contracts.Mark
}

type profileKey struct{}

// withProfile returns ctx carrying a new profile that starts now, unless
// ctx carries one already.
func withProfile(ctx context.Context) context.Context {
	if profileOf(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, profileKey{}, &turnProfile{start: time.Now(), marks: make([]contracts.Mark, 0, 24)})
}

// profileOf is ctx's profile, or nil; a nil profile ignores its marks.
func profileOf(ctx context.Context) *turnProfile {
	p, _ := ctx.Value(profileKey{}).(*turnProfile)
	return p
}

// mark notes that step has just ended.
func (p *turnProfile) mark(step string) {
	if p == nil {
		return
	}
	us := time.Since(p.start).Microseconds()
	p.mu.Lock()
	defer p.mu.Unlock()
	if step == stepJobSent {
		p.jobSent, p.sent = us, true
	}
	if len(p.marks) < maxMarks {
		p.marks = append(p.marks, contracts.Mark{Step: step, Micros: us})
	}
}

// worker adds the worker's marks, whose times count from at, when it read
// its job (µs since the Unix epoch; the worker runs on this machine's
// clock), or, without at or with one that makes no sense, from when the
// daemon sent the job.
func (p *turnProfile) worker(marks []contracts.Mark, at int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.sent {
		return
	}
	offset := p.jobSent
	if d := at - p.start.UnixMicro(); at > 0 && d >= p.jobSent && d <= time.Since(p.start).Microseconds() {
		offset = d
	}
	for _, m := range marks {
		if len(p.marks) >= maxMarks {
			break
		}
		step := m.Step
		if len(step) > maxStep {
			step = step[:maxStep]
		}
		p.marks = append(p.marks, contracts.Mark{Step: "worker: " + step, Micros: offset + m.Micros})
	}
}

// String is the profile as "step +ms" items in time order, each with the
// time since the item before it: "history read +0.71, turn begun +0.52".
func (p *turnProfile) String() string {
	p.mu.Lock()
	ms := slices.Clone(p.marks)
	p.mu.Unlock()
	slices.SortStableFunc(ms, func(a, b contracts.Mark) int { return int(a.Micros - b.Micros) })
	var b strings.Builder
	var last int64
	for i, m := range ms {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.Step)
		b.WriteString(" +")
		b.WriteString(millis(m.Micros - last))
		last = m.Micros
	}
	return b.String()
}

// log writes the profile at debug level.
func (p *turnProfile) log(log *slog.Logger, chat string, turn int64) {
	if p == nil || !log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	log.Debug("turn profile", "chat", chat, "turn", turn, "ms", millis(time.Since(p.start).Microseconds()), "steps", p.String())
}

func millis(us int64) string { return strconv.FormatFloat(float64(us)/1000, 'f', 2, 64) }
