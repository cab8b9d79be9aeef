package tile

// MR is the number of rows the Gram micro-kernel processes at once.
const MR = 4

// NR64 and NR32 are the panel widths (centres per panel) for float64 and
// float32 centres.
const (
	NR64 = 16
	NR32 = 32
)

// DistParams selects the distance kernel computed by ApplyDist and
// KernelDist. With r² = max(xn + cn_j − 2·g_j, 0) (the data already scaled
// so that the kernel's constant is folded in), s = r² (Sqrt false) or
// s = √r² (Sqrt true) and
//
//	out_j = (1 + s·(C1 + C2·s))·exp(−s).
//
// The kinds, with data scaled by √a/σ:
//
//	Gaussian:   a = 1/2, Sqrt = false, C1 = C2 = 0
//	Laplacian:  a = 1,   Sqrt = true,  C1 = C2 = 0
//	Matérn 3/2: a = 3,   Sqrt = true,  C1 = 1, C2 = 0
//	Matérn 5/2: a = 5,   Sqrt = true,  C1 = 1, C2 = 1/3
//
// Build it with NewDistParams; it is read-only afterwards.
type DistParams struct {
	C1, C2 float64
	Sqrt   bool
	pc64   [8]float64  // C1 ×4, C2 ×4 for the assembly
	pc32   [16]float32 // C1 ×8, C2 ×8
}

// NewDistParams returns the parameters of a distance kernel.
func NewDistParams(sqrt bool, c1, c2 float64) *DistParams {
	p := &DistParams{C1: c1, C2: c2, Sqrt: sqrt}
	for i := 0; i < 4; i++ {
		p.pc64[i], p.pc64[4+i] = c1, c2
	}
	for i := 0; i < 8; i++ {
		p.pc32[i], p.pc32[8+i] = float32(c1), float32(c2)
	}
	return p
}

// DotParams are the parameters of ApplyDot.
type DotParams struct {
	Gamma, Coef0 float64
	Degree       int
}

// Variant names an implementation.
type Variant int

const (
	Generic Variant = iota // pure Go
	AVX2                   // AVX2 + FMA, 256-bit
	AVX512                 // AVX-512F, 512-bit
)

func (v Variant) String() string {
	switch v {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "unknown"
}

// impl is the table of routines of one variant.
type impl struct {
	gram64      func(dst []float64, ldd int, x []float64, rows, d int, cp []float64, ncols int)
	gram32      func(dst []float32, ldd int, x []float32, rows, d int, cp []float32, ncols int)
	norms64     func(dst []float64, x []float64, rows, d int)
	norms32     func(dst []float32, x []float32, rows, d int)
	kern64      func(dst []float64, ldd int, x, xn []float64, rows, d int, cp, cn []float64, ncols int, p *DistParams)
	kern32      func(dst []float32, ldd int, x, xn []float32, rows, d int, cp, cn []float32, ncols int, p *DistParams)
	applyDist64 func(g []float64, xn float64, cn []float64, p *DistParams)
	applyDist32 func(g []float32, xn float32, cn []float32, p *DistParams)
	applyDot64  func(g []float64, p *DotParams)
	applyDot32  func(g []float32, p *DotParams)
	dot64       func(a, b []float64) float64
	dot32       func(a []float32, b []float64) float64
	axpy64      func(alpha float64, x, y []float64)
	axpy32      func(alpha float64, x []float32, y []float64)
	dot4x64     func(a []float64, lda int, b []float64, out *[4]float64)
	dot4x32     func(a []float32, lda int, b []float64, out *[4]float64)
	axpy4x64    func(alpha *[4]float64, x []float64, ldx int, y []float64)
	axpy4x32    func(alpha *[4]float64, x []float32, ldx int, y []float64)
	gram1x64    func(dst, x []float64, d int, cp []float64, ncols int)
	gram1x32    func(dst, x []float32, d int, cp []float32, ncols int)
	dot1x64     func(a, b []float64) float64
	dot1x32     func(a []float32, b []float64) float64
}

var generic = impl{
	gram64:      Gram64Generic,
	kern64:      KernelDist64Generic,
	kern32:      KernelDist32Generic,
	gram32:      Gram32Generic,
	norms64:     Norms64Generic,
	norms32:     Norms32Generic,
	applyDist64: ApplyDist64Generic,
	applyDist32: ApplyDist32Generic,
	applyDot64:  ApplyDot64Generic,
	applyDot32:  ApplyDot32Generic,
	dot64:       Dot64Generic,
	dot32:       Dot32Generic,
	axpy64:      Axpy64Generic,
	axpy32:      Axpy32Generic,
	dot4x64:     Dot4x64Generic,
	dot4x32:     Dot4x32Generic,
	axpy4x64:    Axpy4x64Generic,
	axpy4x32:    Axpy4x32Generic,
	gram1x64:    Gram1x64Generic,
	gram1x32:    Gram1x32Generic,
	dot1x64:     Dot1x64Generic,
	dot1x32:     Dot1x32Generic,
}

var (
	cur    = generic
	curVar = Generic
)

// Selected reports the variant in use.
func Selected() Variant { return curVar }

// Available lists the variants this build and CPU can run, best last.
func Available() []Variant { return available() }

// Use selects a variant and reports whether it is available. It is not safe
// to call concurrently with the routines; tests and benchmarks call it
// between runs.
func Use(v Variant) bool {
	t, ok := variantImpl(v)
	if !ok {
		return false
	}
	cur, curVar = t, v
	return true
}

// Gram64 sets dst[i*ldd+c] = x_i · centre_c for i < rows, c < ncols, where
// the centres are packed in panels (see package doc) starting at cp. rows is
// a multiple of MR and ncols of NR64.
func Gram64(dst []float64, ldd int, x []float64, rows, d int, cp []float64, ncols int) {
	cur.gram64(dst, ldd, x, rows, d, cp, ncols)
}

// Gram32 is Gram64 in float32 with panels of NR32.
func Gram32(dst []float32, ldd int, x []float32, rows, d int, cp []float32, ncols int) {
	cur.gram32(dst, ldd, x, rows, d, cp, ncols)
}

// KernelDist64 sets dst[i*ldd+c] to the distance kernel (see DistParams)
// between row i of x, whose squared norm is xn[i], and centre c, whose
// squared norm is cn[c]: Gram64 and ApplyDist64 fused, so that the block
// never leaves the registers between the two. rows is a multiple of MR and
// ncols of NR64.
func KernelDist64(dst []float64, ldd int, x, xn []float64, rows, d int, cp, cn []float64, ncols int, p *DistParams) {
	cur.kern64(dst, ldd, x, xn, rows, d, cp, cn, ncols, p)
}

// KernelDist32 is KernelDist64 in float32 with panels of NR32.
func KernelDist32(dst []float32, ldd int, x, xn []float32, rows, d int, cp, cn []float32, ncols int, p *DistParams) {
	cur.kern32(dst, ldd, x, xn, rows, d, cp, cn, ncols, p)
}

// Norms64 sets dst[i] = x_i · x_i for i < rows, accumulated like Gram64.
func Norms64(dst []float64, x []float64, rows, d int) { cur.norms64(dst, x, rows, d) }

// Norms32 sets dst[i] = x_i · x_i for i < rows, accumulated like Gram32.
func Norms32(dst []float32, x []float32, rows, d int) { cur.norms32(dst, x, rows, d) }

// ApplyDist64 replaces the dot products g by the distance-kernel values (see
// DistParams) in place. len(cn) ≥ len(g); len(g) is a multiple of 16.
func ApplyDist64(g []float64, xn float64, cn []float64, p *DistParams) {
	cur.applyDist64(g, xn, cn, p)
}

// ApplyDist32 is ApplyDist64 in float32; len(g) is a multiple of 32.
func ApplyDist32(g []float32, xn float32, cn []float32, p *DistParams) {
	cur.applyDist32(g, xn, cn, p)
}

// ApplyDot64 replaces g_j by (Gamma·g_j + Coef0)^Degree in place; len(g) is
// a multiple of 16.
func ApplyDot64(g []float64, p *DotParams) { cur.applyDot64(g, p) }

// ApplyDot32 is ApplyDot64 in float32; len(g) is a multiple of 32.
func ApplyDot32(g []float32, p *DotParams) { cur.applyDot32(g, p) }

// Dot64 returns Σ a_j b_j over len(a) (a multiple of 16; len(b) ≥ len(a)).
func Dot64(a, b []float64) float64 { return cur.dot64(a, b) }

// Dot32 returns Σ float64(a_j) b_j over len(a) (a multiple of 32).
func Dot32(a []float32, b []float64) float64 { return cur.dot32(a, b) }

// Axpy64 sets y_j += alpha·x_j over len(x) (a multiple of 16).
func Axpy64(alpha float64, x, y []float64) { cur.axpy64(alpha, x, y) }

// Axpy32 sets y_j += alpha·float64(x_j) over len(x) (a multiple of 32).
func Axpy32(alpha float64, x []float32, y []float64) { cur.axpy32(alpha, x, y) }

// Dot4x64 sets out[r] = Σ_j a[r*lda+j]·b[j] for the four rows r < 4 of a
// and j < len(b) (a multiple of 16).
func Dot4x64(a []float64, lda int, b []float64, out *[4]float64) { cur.dot4x64(a, lda, b, out) }

// Dot4x32 is Dot4x64 with float32 rows, converted to float64.
func Dot4x32(a []float32, lda int, b []float64, out *[4]float64) { cur.dot4x32(a, lda, b, out) }

// Axpy4x64 sets y_j += Σ_r alpha[r]·x[r*ldx+j] for j < len(y) (a multiple
// of 16), adding the rows in order r = 0..3.
func Axpy4x64(alpha *[4]float64, x []float64, ldx int, y []float64) { cur.axpy4x64(alpha, x, ldx, y) }

// Axpy4x32 is Axpy4x64 with float32 rows, converted to float64.
func Axpy4x32(alpha *[4]float64, x []float32, ldx int, y []float64) { cur.axpy4x32(alpha, x, ldx, y) }

// Gram1x64 sets dst[c] = x · centre_c for c < ncols (a multiple of NR64)
// for the one row x (d values): a row of Gram64, bit for bit, computed
// without the MR − 1 rows Gram64 would pad it with.
func Gram1x64(dst, x []float64, d int, cp []float64, ncols int) { cur.gram1x64(dst, x, d, cp, ncols) }

// Gram1x32 is Gram1x64 in float32 (a row of Gram32, bit for bit), ncols a
// multiple of NR32.
func Gram1x32(dst, x []float32, d int, cp []float32, ncols int) { cur.gram1x32(dst, x, d, cp, ncols) }

// Dot1x64 returns Σ_j a_j b_j over len(a) (a multiple of 16; len(b) ≥
// len(a)), summed as Dot4x64 sums each of its rows, bit for bit.
func Dot1x64(a, b []float64) float64 { return cur.dot1x64(a, b) }

// Dot1x32 is Dot1x64 with a float32 row, converted to float64 (Dot4x32's
// sum of a row).
func Dot1x32(a []float32, b []float64) float64 { return cur.dot1x32(a, b) }

// distMode is the assembly mode of the kernel function p, shared by the
// AVX kernels and the fused AMX routine: 0 the Gaussian, 1 the general
// form with the square root, -1 none (the general form without it, which
// no kernel kind uses, takes the generic loop).
func distMode(p *DistParams) int {
	switch {
	case p.Sqrt:
		return 1
	case p.C1 == 0 && p.C2 == 0:
		return 0
	}
	return -1
}
