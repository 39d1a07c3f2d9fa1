package contracts

// ScheduleRequest is an approved schedule call's request to the daemon,
// which keeps the schedules (in its store, outside the worker's view) and
// accepts it only as the exact call the owner approved. Its answer is the
// text for the model (a string).
type ScheduleRequest struct {
	When   string `json:"when"`   // as the model wrote it; see package schedule
	Prompt string `json:"prompt"` // the message each run sends as a turn
}

// MaxSchedulePrompt bounds a schedule's prompt, so that the owner's card
// shows it whole.
const MaxSchedulePrompt = 2000
