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
