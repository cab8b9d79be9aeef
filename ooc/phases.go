package ooc

import (
	"time"

	"github.com/falkon-ooc/falkon-ooc/internal/procstat"
)

// Phase is the time and memory one phase of a fit or a search took: its
// wall-clock and CPU seconds (the whole process's CPU, all threads, so a
// phase that keeps two cores busy shows about twice its wall time) and
// the process's peak resident memory when it ended.
type Phase struct {
	// Name is sample, kmm (computing K_MM), factorise (the Cholesky
	// factorisations and T Tᵀ), rhs (the right-hand side's pass),
	// iteration (one CG pass), validation (scoring the validation rows),
	// calibration, and in Tune also ard and precond_rhs (the
	// factorisations beside the right-hand side's pass).
	Name string `json:"name"`
	// Iteration is the CG iteration of an iteration or validation phase.
	Iteration  int     `json:"iteration,omitempty"`
	Wall       float64 `json:"wall_seconds"`
	CPU        float64 `json:"cpu_seconds"`
	PeakRSS    int64   `json:"peak_rss_bytes,omitempty"`
	startWall  time.Time
	startCPU   float64
	inProgress bool
}

// phaseClock records consecutive phases: start ends the one running, if
// any, and begins the next.
type phaseClock struct{ phases []Phase }

func (c *phaseClock) start(name string, iteration int) {
	c.end()
	c.phases = append(c.phases, Phase{Name: name, Iteration: iteration, startWall: time.Now(),
		startCPU: procstat.CPUSeconds(), inProgress: true})
}

// end closes the running phase, if any.
func (c *phaseClock) end() {
	if n := len(c.phases); n > 0 && c.phases[n-1].inProgress {
		p := &c.phases[n-1]
		p.Wall = time.Since(p.startWall).Seconds()
		p.CPU = procstat.CPUSeconds() - p.startCPU
		p.PeakRSS = procstat.PeakRSS()
		p.inProgress = false
	}
}

// done closes the running phase and returns the phases recorded.
func (c *phaseClock) done() []Phase {
	c.end()
	return c.phases
}
