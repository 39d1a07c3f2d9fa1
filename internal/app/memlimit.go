package app

import (
	"log/slog"
	"runtime/debug"
)

// daemonMemoryLimit is the Go runtime's soft memory limit for a daemon
// (serve, and chat, which is its own daemon): the garbage collector works
// harder as the heap nears it, so a burst (a large history, many approvals
// at once) is given back instead of raising the process's footprint for
// good. The daemon's whole RSS is meant to stay under ~100 MiB on a 416 MB
// Raspberry Pi; its Go heap is a few MiB at rest.
const daemonMemoryLimit = 64 << 20

// memoryLimit is the limit a daemon sets at start: daemonMemoryLimit,
// unless GOMEMLIMIT in environ says otherwise (the runtime has then read
// it already). ok is false when the daemon should leave the limit alone.
func memoryLimit(environ []string) (limit int64, ok bool) {
	if lookupEnv(environ, "GOMEMLIMIT") != "" {
		return 0, false
	}
	return daemonMemoryLimit, true
}

// setMemoryLimit sets the daemon's soft memory limit (memoryLimit) and
// logs it at debug level.
func setMemoryLimit(environ []string, log *slog.Logger) {
	if limit, ok := memoryLimit(environ); ok {
		debug.SetMemoryLimit(limit)
		log.Debug("memory limit", "bytes", limit)
	}
}
