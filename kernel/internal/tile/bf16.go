package tile

import "math"

// The bfloat16 cross term. A bfloat16 is the upper half of a float32 (8
// bits of significand); the AMX unit multiplies tiles of them at about
// eight times the float32 FMA rate of AVX-512 and accumulates in float32.
// One bfloat16 term holds x to a relative 2⁻⁹, too coarse for
// r² = ‖x‖² + ‖c‖² − 2x·c; with the split x = hi + lo (hi = bf16(x),
// lo = bf16(x − hi)) three products hi·hi' + hi·lo' + lo·hi' hold x·c to
// about 2⁻¹⁶ of Σ|xⱼcⱼ| (the dropped lo·lo' and the rounding of lo).
//
// Layout: a row of x becomes KB-element chunks of K' = d (one term) or 3d
// (three: hi, hi, lo) bfloat16, zero-padded to a multiple of KB; a centre
// becomes the matching (hi; or hi, lo, hi). Centres are packed in panels
// of NRB: for panel p and chunk k, a 16 × 32 bfloat16 block (1 KiB) at
// element (p·kc + k)·512 whose row t holds, for each centre q of the
// panel, its elements 2t and 2t+1 of the chunk (the "VNNI" pairs the AMX
// dot product consumes). Panel-major order makes the kc KiB of a panel
// contiguous: the AMX loop streams a pair of panels once per call and
// keeps them in L1 across the row blocks.
const (
	KB  = 32 // bfloat16 elements per chunk (one 64-byte tile row)
	NRB = 16 // centres per bfloat16 panel
	RB  = 16 // rows per AMX row block
)

// BF16Terms is 1 (x·c from bf16(x)·bf16(c)) or 3 (the hi/lo split).
type BF16Terms int

// Chunks returns the number of KB-element chunks of d features.
func (t BF16Terms) Chunks(d int) int { return (int(t)*d + KB - 1) / KB }

// ToBF16 rounds f to the nearest bfloat16, ties to even (finite f).
func ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// FromBF16 widens a bfloat16 to float32 exactly.
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// split returns hi = bf16(v) and lo = bf16(v − hi).
func split(v float32) (hi, lo uint16) {
	hi = ToBF16(v)
	return hi, ToBF16(v - FromBF16(hi))
}

// PackRowsBF16 writes rows × d row-major x as bfloat16 rows of
// t.Chunks(d)·KB elements (hi for one term; hi, hi, lo for three),
// zero-padded. dst has at least rows·t.Chunks(d)·KB elements.
func PackRowsBF16(dst []uint16, x []float32, rows, d int, t BF16Terms) {
	kp := t.Chunks(d) * KB
	for i := 0; i < rows; i++ {
		r := dst[i*kp : (i+1)*kp]
		for j, v := range x[i*d : i*d+d] {
			hi, lo := split(v)
			r[j] = hi
			if t == 3 {
				r[d+j], r[2*d+j] = hi, lo
			}
		}
		clear(r[int(t)*d:])
	}
}

// PackCentersBF16 packs m × d row-major centres c into dst (npanels =
// mpad/NRB panels, mpad ≥ m a multiple of NRB; centres from m on are
// zero): the layout above, with centre elements hi (one term) or hi, lo,
// hi (three). dst has at least t.Chunks(d)·npanels·512 elements.
func PackCentersBF16(dst []uint16, c []float32, m, mpad, d int, t BF16Terms) {
	kc, np := t.Chunks(d), mpad/NRB
	clear(dst[:kc*np*NRB*KB])
	for q := 0; q < m; q++ {
		p, qq := q/NRB, q%NRB
		for j, v := range c[q*d : q*d+d] {
			hi, lo := split(v)
			put := func(e int, h uint16) {
				k, off := e/KB, e%KB
				dst[(p*kc+k)*NRB*KB+(off/2)*2*NRB+2*qq+off%2] = h
			}
			put(j, hi)
			if t == 3 {
				put(d+j, lo)
				put(2*d+j, hi)
			}
		}
	}
}

// GramBF16Generic is the reference for GramBF16: for i < rows, c < ncols
// (c counting from panel p0 of np),
//
//	dst[i*ldd+c] = Σ_k Σ_{e<KB} a[i*kc*KB + k*KB + e] · b'(k, c, e)
//
// with the bfloat16 operands widened to float32 (their products are
// exact in float32) and summed pairwise per chunk element pair, in
// float32: acc += float32(a₀b₀ + a₁b₁) — the AMX dot product rounds each
// step too, in an order of its own, so the two agree to rounding.
func GramBF16Generic(dst []float32, ldd int, a []uint16, rows, kc int, b []uint16, np, p0, ncols int) {
	for i := 0; i < rows; i++ {
		ar := a[i*kc*KB : (i+1)*kc*KB]
		for c := 0; c < ncols; c++ {
			p, q := p0+c/NRB, c%NRB
			var acc float32
			for k := 0; k < kc; k++ {
				blk := b[(p*kc+k)*NRB*KB:]
				for t := 0; t < KB/2; t++ {
					a0, a1 := FromBF16(ar[k*KB+2*t]), FromBF16(ar[k*KB+2*t+1])
					b0, b1 := FromBF16(blk[t*2*NRB+2*q]), FromBF16(blk[t*2*NRB+2*q+1])
					acc += float32(float64(a0*b0) + float64(a1*b1))
				}
			}
			dst[i*ldd+c] = acc
		}
	}
}

// checkBF16 panics on a bad shape of GramBF16.
func checkBF16(ndst, ldd, na, rows, kc, nb, np, p0, ncols int) {
	if rows%RB != 0 || ncols%(2*NRB) != 0 || kc < 1 || ldd < ncols || p0 < 0 || p0+ncols/NRB > np ||
		na < rows*kc*KB || nb < kc*np*NRB*KB || (rows > 0 && ndst < (rows-1)*ldd+ncols) {
		panic("tile: GramBF16: bad shape")
	}
}

// GramBF16 sets dst[i*ldd+c] to the dot product of bfloat16 row i of a
// (kc chunks, PackRowsBF16) and centre p0·NRB + c of b (np panels,
// PackCentersBF16), accumulated in float32: on the AMX unit when
// HasAMX, else by GramBF16Generic. rows is a multiple of RB, ncols of
// 2·NRB.
func GramBF16(dst []float32, ldd int, a []uint16, rows, kc int, b []uint16, np, p0, ncols int) {
	checkBF16(len(dst), ldd, len(a), rows, kc, len(b), np, p0, ncols)
	if rows == 0 || ncols == 0 {
		return
	}
	if useAMX {
		kernelBF16AMX(dst, ldd, a, rows, kc, b, p0, ncols, nil, nil, nil, amxDot)
		return
	}
	GramBF16Generic(dst, ldd, a, rows, kc, b, np, p0, ncols)
}

// KernelDistBF16 sets dst[i*ldd+c], for i < rows and c < ncols, to the
// distance kernel value (DistParams) of r² = xn[i] + cn[c] − 2·g, g the
// dot product GramBF16 gives row i and centre p0·NRB + c: the values of
// GramBF16 followed by ApplyDist32 on each row, bit for bit where the
// current variant is AVX512. On the AMX unit the two are fused: each
// 32 × 32 block of products is turned into kernel values (the AVX-512
// exp) while it is in L1, and the block is written once. Shapes as
// GramBF16; len(xn) ≥ rows, len(cn) ≥ ncols.
func KernelDistBF16(dst []float32, ldd int, a []uint16, rows, kc int, b []uint16, np, p0, ncols int, xn, cn []float32, p *DistParams) {
	checkBF16(len(dst), ldd, len(a), rows, kc, len(b), np, p0, ncols)
	if len(xn) < rows || len(cn) < ncols {
		panic("tile: KernelDistBF16: bad shape")
	}
	if rows == 0 || ncols == 0 {
		return
	}
	if mode := distMode(p); useAMX && mode >= 0 {
		kernelBF16AMX(dst, ldd, a, rows, kc, b, p0, ncols, xn, cn, p, mode)
		return
	}
	GramBF16(dst, ldd, a, rows, kc, b, np, p0, ncols)
	for i := 0; i < rows; i++ {
		ApplyDist32(dst[i*ldd:i*ldd+ncols], xn[i], cn[:ncols], p)
	}
}

// amxDot is the mode of the AMX routine that stores the dot products.
const amxDot = 2

// useAMX says whether GramBF16 runs on the AMX unit.
var useAMX = hasAMX

// HasAMX reports whether this CPU and OS run AMX-BF16 tiles (the CPU
// flags, and the kernel granting the tile data state to the process).
func HasAMX() bool { return hasAMX }

// UseAMX selects the AMX (true, if HasAMX) or the generic (false) GramBF16
// and reports whether the choice took effect. Like Use, it must not run
// concurrently with the routines.
func UseAMX(on bool) bool {
	if on && !hasAMX {
		return false
	}
	useAMX = on
	return true
}
