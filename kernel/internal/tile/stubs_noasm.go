//go:build !amd64 || noasm

package tile

// Without assembly only the pure-Go reference loops (generic.go) exist;
// each one's doc comment states the loop it implements.

func available() []Variant { return []Variant{Generic} }

func variantImpl(v Variant) (impl, bool) {
	if v == Generic {
		return generic, true
	}
	return impl{}, false
}

// PeakFMA does nothing without assembly and returns 0.
func PeakFMA(v Variant, n int) int { return 0 }

func kernelBF16AMX(dst []float32, ldd int, a []uint16, rows, kc int, b []uint16, p0, ncols int, xn, cn []float32, p *DistParams, mode int) {
	panic("tile: no AMX")
}
