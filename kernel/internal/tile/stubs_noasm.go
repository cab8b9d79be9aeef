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
