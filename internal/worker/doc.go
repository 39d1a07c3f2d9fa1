// Package worker runs one turn of the agent in a child process: it builds the
// tool registry, runs the bounded agentic loop against a model reached only
// through the daemon (it holds no credential), runs the FREE tools, and
// returns a contracts.Result. A tool failure is a result for the model; only
// a broken system is a Go error.
package worker
