package ooc

import (
	"testing"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// TestExactPrecision checks the one memory check of the exact
// preconditioner (fits and searches) route by route: what fits, whether
// λ allows float32 first, and whether a disk route exists and fits.
func TestExactPrecision(t *testing.T) {
	f64, f32 := precond.Float64, precond.Float32
	for _, c := range []struct {
		asked            precond.Precision
		fit64, fit32     bool
		f32ok            bool
		disk             int // 0: no disk route, 1: fits, -1: does not
		prec             precond.Precision
		onDisk, ok, used bool // used: the disk route was tried
	}{
		{"", true, true, true, 1, f64, false, true, false},
		{"", false, true, true, 1, f32, false, true, false},   // λ allows float32: it comes first
		{"", false, true, false, 1, f64, true, true, true},    // λ does not: the factors on disk
		{"", false, true, false, -1, f32, false, true, true},  // no room on disk: float32 after all
		{"", false, true, false, 0, f32, false, true, false},  // a search: no disk route
		{"", false, false, true, -1, f32, false, false, true}, // nothing fits
		{f64, false, true, true, 1, f64, true, true, true},    // float64 asked: on disk, never float32
		{f64, false, true, true, -1, f64, false, false, true},
		{f32, false, false, true, 1, f32, false, false, false}, // float32 asked: never the disk (float64)
		{f32, false, true, false, 1, f32, false, true, false},
	} {
		used := false
		var disk func() bool
		if c.disk != 0 {
			disk = func() bool { used = true; return c.disk > 0 }
		}
		fits := func(p precond.Precision) bool { return p == f64 && c.fit64 || p == f32 && c.fit32 }
		prec, onDisk, ok := exactPrecision(c.asked, fits, c.f32ok, disk)
		if prec != c.prec || onDisk != c.onDisk || ok != c.ok || used != c.used {
			t.Errorf("%+v: got %s, disk %v, ok %v, disk tried %v", c, prec, onDisk, ok, used)
		}
	}
}
