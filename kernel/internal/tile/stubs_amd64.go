//go:build amd64 && !noasm

package tile

func available() []Variant { return []Variant{Generic} }

func variantImpl(v Variant) (impl, bool) {
	if v == Generic {
		return generic, true
	}
	return impl{}, false
}
