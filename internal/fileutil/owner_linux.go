//go:build linux

package fileutil

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// startTime reads field 22 of /proc/PID/stat: the start time in clock
// ticks since boot.
func startTime(pid int) (uint64, procState) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, procGone
	}
	if err != nil {
		return 0, procUnknown
	}
	// The command name in field 2 is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, procUnknown
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, procUnknown
	}
	if len(f[0]) == 1 && (f[0][0] == 'Z' || f[0][0] == 'X') {
		return 0, procGone // a zombie has finished: its files are leftovers
	}
	v, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, procUnknown
	}
	return v, procFound
}
