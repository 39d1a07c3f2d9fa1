package store

import (
	"os"
	"strconv"
	"strings"
)

// processStart is the start time of process pid in clock ticks after boot
// (field 22 of /proc/<pid>/stat), which tells a process from a later one
// that reuses its id.
func processStart(pid int) (int64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after it start past the last ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 { // field 22 is the 20th after the name
		return 0, false
	}
	st, err := strconv.ParseInt(fields[19], 10, 64)
	return st, err == nil
}
