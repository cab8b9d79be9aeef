//go:build !linux || !amd64 || noasm

package tile

// Without assembly there is no AMX path; GramBF16 runs GramBF16Generic.
const hasAMX = false

func gramBF16AMX(dst []float32, ldd int, a []uint16, rows, kc int, b []uint16, np, p0, ncols int) {
	panic("tile: no AMX")
}
