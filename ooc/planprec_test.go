package ooc_test

import (
	"testing"

	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/precond"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// TestPlanFloat32ByLambda: with the precision left to choose, the plan
// stores the Cholesky preconditioner in float32 where it gives float64's
// fit (precond.Float32Suffices: λ ≥ 10 × the float32 jitter), without a
// memory note, and keeps float64 below that or when the Config says so.
func TestPlanFloat32ByLambda(t *testing.T) {
	x, y := synth(1000, 3, 7)
	src := stream.NewMemSource(x, 3, y, 1, 500)
	for _, c := range []struct {
		name string
		cfg  ooc.Config
		want precond.Precision
	}{
		{"large λ", ooc.Config{Centers: 200, Lambda: 2e-4}, precond.Float32},
		{"default λ", ooc.Config{Centers: 200}, precond.Float64},
		{"λ below 10ε", ooc.Config{Centers: 200, Lambda: 9e-5}, precond.Float64},
		{"explicit cholesky", ooc.Config{Centers: 200, Lambda: 2e-4, Preconditioner: precond.MethodCholesky}, precond.Float32},
		{"larger jitter", ooc.Config{Centers: 200, Lambda: 2e-4, Jitter: 1e-4}, precond.Float64},
		{"explicit float64", ooc.Config{Centers: 200, Lambda: 2e-4, PrecondPrecision: precond.Float64}, precond.Float64},
	} {
		p, err := ooc.Plan(src, c.cfg, ooc.RunOptions{Workers: 2, MaxMemory: -1})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := p.Config.PrecondPrecision; got != c.want || p.Config.Preconditioner != precond.MethodCholesky {
			t.Errorf("%s: %s %s, want cholesky %s", c.name, p.Config.Preconditioner, got, c.want)
		}
		if mp := p.MemoryPlan; mp != nil && (mp.Reduced || mp.Note != "") {
			t.Errorf("%s: plan %+v, want no reduction or note", c.name, mp)
		}
	}
}
