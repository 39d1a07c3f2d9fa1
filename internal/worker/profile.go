package worker

import (
	"strconv"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// MaxMarks caps a turn's profile (contracts.Result.Profile): a turn of many
// tool calls keeps its first marks and its last, "result ready".
const MaxMarks = 64

// The steps of a turn's profile (contracts.Result.Profile), in the order
// they end; a turn repeats the request, answer and tool marks.
const (
	StepJobDecoded  = "job decoded"
	StepToolsBuilt  = "tools built"
	StepPromptBuilt = "prompt built"
	StepResultReady = "result ready"
)

// stepRequestSent is the mark of the nth model request handed to the model
// (in the worker, to the daemon's pipe, which encodes and writes it).
func stepRequestSent(n int) string { return "request " + strconv.Itoa(n) + " sent" }

// stepAnswerReceived is the mark of the nth model request's answer (or
// failure), decoded.
func stepAnswerReceived(n int) string { return "answer " + strconv.Itoa(n) + " received" }

// stepToolRan is the mark of a call of the registered tool called name
// ("?" for a name the turn does not have: the model's words are not logged).
func stepToolRan(name string) string { return "tool " + name + " ran" }

// profile collects where a turn's time went in the worker: each mark names
// a step that had just ended, with the time since the worker read its job.
// It costs an append a mark; a nil profile marks nothing.
type profile struct {
	start time.Time
	marks []contracts.Mark
}

func newProfile(start time.Time) *profile {
	return &profile{start: start, marks: make([]contracts.Mark, 0, 16)}
}

// mark records that step has just ended. Once the profile holds
// MaxMarks-1 marks, only the last mark (done) gets in.
func (p *profile) mark(step string) {
	if p == nil || len(p.marks) >= MaxMarks-1 {
		return
	}
	p.add(step)
}

// done records the last mark and returns the profile.
func (p *profile) done(step string) []contracts.Mark {
	if p == nil {
		return nil
	}
	p.add(step)
	return p.marks
}

func (p *profile) add(step string) {
	p.marks = append(p.marks, contracts.Mark{Step: step, Micros: time.Since(p.start).Microseconds()})
}
