package fileutil

import (
	"os"
	"strconv"
	"sync"
)

// Owner identifies the process that made a temporary name.
type Owner struct {
	PID   int
	Start uint64 // start time in clock ticks since boot; 0 if unknown
}

var self = sync.OnceValue(func() Owner {
	pid := os.Getpid()
	start, _ := startTime(pid)
	return Owner{PID: pid, Start: start}
})

// Self returns this process as an Owner.
func Self() Owner { return self() }

func selfTag() string {
	o := Self()
	return strconv.Itoa(o.PID) + "-" + strconv.FormatUint(o.Start, 10)
}

// Alive reports whether o may still be running. It is true unless the
// process is shown gone: no process with that id, or one that started at
// another time (its id was reused).
func (o Owner) Alive() bool {
	if o.PID <= 0 {
		return true
	}
	if o == Self() {
		return true
	}
	start, state := startTime(o.PID)
	switch state {
	case procGone:
		return false
	case procFound:
		return o.Start == 0 || start == o.Start
	default:
		return true
	}
}

type procState int

const (
	procUnknown procState = iota // cannot tell
	procGone                     // no such process
	procFound                    // running, start time returned (0 if unknown)
)
