package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress writes progress lines to stderr: on a terminal one line
// rewritten in place (at most ten times a second), otherwise a line at
// each step and at most one every few seconds within a step; nothing when
// quiet.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	quiet    bool
	last     time.Time
	lastStep string
	width    int
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// update reports the state of step; force prints even when throttled
// (the end of a step).
func (p *progress) update(step, msg string, force bool) {
	if p == nil || p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	newStep := step != p.lastStep
	interval := 5 * time.Second
	if p.tty {
		interval = 100 * time.Millisecond
	}
	if !force && !newStep && now.Sub(p.last) < interval {
		return
	}
	p.last, p.lastStep = now, step
	line := step + ": " + msg
	if p.tty {
		pad := max(p.width-len(line), 0)
		fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
		p.width = len(line)
		if force {
			fmt.Fprintln(p.w)
			p.width = 0
		}
		return
	}
	fmt.Fprintln(p.w, line)
}

// printf writes a whole line (not throttled).
func (p *progress) printf(format string, a ...any) {
	if p == nil || p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
	}
	fmt.Fprintf(p.w, format+"\n", a...)
}

// bar draws a text bar for a fraction in [0, 1].
func bar(frac float64) string {
	const n = 20
	k := int(frac*n + 0.5)
	k = min(max(k, 0), n)
	return "[" + strings.Repeat("=", k) + strings.Repeat(" ", n-k) + "]"
}

// eta formats the expected remaining time after done of total in elapsed.
func eta(done, total float64, elapsed time.Duration) string {
	if done <= 0 || total <= done {
		return ""
	}
	rem := time.Duration(float64(elapsed) * (total - done) / done)
	return " ETA " + rem.Round(time.Second).String()
}
