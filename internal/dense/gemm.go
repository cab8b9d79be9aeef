package dense

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Float is the element type of stored matrices: float64, or float32 for
// FALKON's half-size preconditioner. It is also the precision P of the
// packed operands and of the micro-kernel's sums (see doc.go for which
// routine accumulates in which).
type Float interface{ float32 | float64 }

// as64 returns s itself as []float64 when E is float64, and nil otherwise.
func as64[E Float](s []E) []float64 { return asP[E, float64](s) }

// asP returns s itself as []P when E and P are the same type, and nil
// otherwise.
func asP[E, P Float](s []E) []P {
	var z E
	var zp P
	if unsafe.Sizeof(z) != unsafe.Sizeof(zp) || len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*P)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// scratch is one worker's packing buffers, in the kernel's precision P.
type scratch[P Float] struct {
	a, b, tile []P
}

// workspace carries the kernel and one scratch per worker through a call.
type workspace[P Float] struct {
	k microKernel[P]
	s []*scratch[P]
}

func newWorkspace[P Float](k microKernel[P], workers int) *workspace[P] {
	if workers < 1 {
		workers = 1
	}
	ws := &workspace[P]{k: k, s: make([]*scratch[P], workers)}
	pool := poolOf[P]()
	for i := range ws.s {
		s, _ := pool.Get().(*scratch[P])
		if s == nil {
			s = new(scratch[P])
		}
		s.tile = grow(s.tile, k.mr*k.nr)
		ws.s[i] = s
	}
	return ws
}

// scratchPool and scratchPool32 (float32) keep packing buffers between
// calls: a factorisation's first GEMM would otherwise allocate (and the
// runtime zero) up to 8 MiB of packed B, once per call; a search
// factorises dozens of M × M matrices in a row (bench/TUNE.md, round 4). Packing writes every
// element it later reads, so stale contents are harmless.
var scratchPool, scratchPool32 sync.Pool

// poolOf is the pool of *scratch[P].
func poolOf[P Float]() *sync.Pool {
	var z P
	if unsafe.Sizeof(z) == 4 {
		return &scratchPool32
	}
	return &scratchPool
}

// release returns the workspace's buffers to their pool; ws must not be
// used after it.
func (ws *workspace[P]) release() {
	pool := poolOf[P]()
	for i, s := range ws.s {
		pool.Put(s)
		ws.s[i] = nil
	}
}

func grow[P Float](s []P, n int) []P {
	if cap(s) < n {
		return make([]P, n)
	}
	return s[:n]
}

// gemmArgs describes C += alpha op(A) op(B), op(A) m×k, op(B) k×n, all
// row-major. op(A)[i][p] is a[i*lda+p], or a[p*lda+i] when tA.
// op(B)[p][j] is b[p*ldb+j], or b[j*ldb+p] when tB.
type gemmArgs[E Float] struct {
	m, n, k int
	alpha   float64
	a       []E
	lda     int
	tA      bool
	b       []E
	ldb     int
	tB      bool
	c       []E
	ldc     int
	// upper restricts the update to c[i][j] with j ≥ i; with strict, to
	// j > i (the diagonal is left alone).
	upper, strict bool
	// tri treats op(A)[i][p] as zero when p+triD < i and op(B)[p][j] as
	// zero when p+triD < j: both operands are column slices of one upper
	// triangular matrix whose lower triangle may hold anything.
	tri  bool
	triD int
}

// gemm runs g with up to one goroutine per scratch in ss, the operands
// packed into and multiplied in precision P, in the blocking below.
func gemm[E, P Float](ws *workspace[P], g *gemmArgs[E], ss []*scratch[P]) {
	if g.m <= 0 || g.n <= 0 || g.k <= 0 || g.alpha == 0 {
		return
	}
	// When E is P the micro-kernel adds into C directly rather than
	// through a tile.
	gemmRows(ws, g, asP[E, P](g.c), ss)
}

// Cache blocking (after Goto & van de Geijn, "Anatomy of high-performance
// matrix multiplication", ACM TOMS 34(3), 2008, with the roles of the two
// operands reversed): a 12 × kc sliver of op(A) is reused from L1 across
// a kc × ncRows block of op(B) packed per worker into its own L2
// (kc · ncRows · size = 1 MiB of the 2 MiB), and an mcRows × kc block of
// op(A), packed once for all workers, streams through L3 and memory (one
// 24 KiB sliver per 16 float32 12×32 or 32 float64 12×16 kernel calls).
// kc is kcBytes of the precision: 512 floats, 256 doubles. mcRows is large (32 MiB of packed A) because every
// B block is packed again for each block of A: with 4096 rows an M = 10⁴
// X Xᵀ packed each B block three times, 7 % of its time (round 9). The
// micro-kernel thus walks along a band of 12 rows of C, 128 contiguous
// bytes of each row per call, which the hardware prefetchers follow, and
// a kc of 512 floats halves the passes over C against 256. On pre-packed
// operands with an M = 10⁴ C in memory, one core, this order ran the
// float32 12×32 kernel at 174–178 GFLOP/s against 161–164 for the Goto
// order (round 8, issue #22), and the float64 set-up (BenchmarkPacked)
// in 0.77 × its time in the Goto order (kc 256, mc 192, nc 4096) on one
// core and 0.81 × on two (round 11).
const (
	kcBytes = 2048
	ncRows  = 512
	mcRows  = 16384 // rounded down to a multiple of mr
)

// kcOf is the k-slice of the GEMM in precision P: kcBytes of it.
func kcOf[P Float]() int {
	var z P
	return kcBytes / int(unsafe.Sizeof(z))
}

// PackBytes bounds the packing buffers that one call of this package
// on m × m operands with the given worker count holds (in either
// precision): the shared block of packed A (at most mcRows rows of
// kcBytes), one packed B block (kcBytes × ncRows, 1 MiB, or m columns
// when fewer) per worker, and one more worker's for the float64 diagonal
// blocks of a float32 Cholesky. They are kept in a pool between calls.
func PackBytes(m, workers int) int64 {
	m = max(m, 0)
	a := int64(min(m, mcRows)+16) * kcBytes
	b := int64(min(m+32, ncRows)) * kcBytes
	return a + int64(max(workers, 1)+1)*b
}

// gemmRows is gemm in the blocking above: for each kc slice of k and
// mcRows block of rows, the op(A) block is packed (in parallel) into
// ss[0].a, and the workers take the kc × ncRows blocks of op(B) in turn
// (and rows of them when there are fewer blocks than twice the workers),
// each packing its own into its scratch's b. cd is C as []P when E is P,
// else nil.
func gemmRows[E, P Float](ws *workspace[P], g *gemmArgs[E], cd []P, ss []*scratch[P]) {
	mr, nr := ws.k.mr, ws.k.nr
	mc := max(mr, mcRows/mr*mr)
	kc := kcOf[P]()
	workers := len(ss)
	if 2*g.m*g.n*g.k < 1<<22 {
		workers = 1
	}
	diagOff := 0
	if g.strict {
		diagOff = 1
	}
	for pc := 0; pc < g.k; pc += kc {
		kb := min(kc, g.k-pc)
		for ic := 0; ic < g.m; ic += mc {
			mb := min(mc, g.m-ic)
			if g.upper {
				// Rows at or below the last column take no update.
				mb = min(mb, max(0, g.n-diagOff-ic))
			}
			if mb <= 0 {
				break
			}
			mbR := (mb + mr - 1) / mr * mr
			ss[0].a = grow(ss[0].a, mbR*kb)
			ap := ss[0].a
			nSl := mbR / mr
			if w := min(workers, nSl/4); w > 1 {
				per := (nSl + w - 1) / w * mr
				var wg sync.WaitGroup
				for r0 := 0; r0 < mb; r0 += per {
					wg.Go(func() { packA(ap[r0*kb:], mr, g, ic+r0, pc, min(per, mb-r0), kb) })
				}
				wg.Wait()
			} else {
				packA(ap, mr, g, ic, pc, mb, kb)
			}
			// Work items: column blocks, each split into rSplit row
			// ranges when there are too few blocks to share.
			nJc := (g.n + ncRows - 1) / ncRows
			rSplit := 1
			if workers > 1 && nJc < 2*workers {
				rSplit = min(nSl, (2*workers+nJc-1)/nJc)
			}
			rPer := (nSl + rSplit - 1) / rSplit * mr
			items := nJc * rSplit
			run := func(s *scratch[P], item int) {
				jc := item / rSplit * ncRows
				r0 := item % rSplit * rPer
				if r0 >= mb {
					return
				}
				r1 := min(mb, r0+rPer)
				nb := min(ncRows, g.n-jc)
				if g.upper && ic+r0+diagOff > jc+nb-1 {
					return // every row of the range lies under the diagonal
				}
				nbR := (nb + nr - 1) / nr * nr
				s.b = grow(s.b, kb*nbR)
				packB(s.b, nr, g, pc, jc, kb, nb, 0, nb)
				rowsBlock(ws, s, g, cd, ap, s.b, ic, r0, r1, jc, nb, kb, diagOff)
			}
			w := min(workers, items)
			if w <= 1 {
				for it := 0; it < items; it++ {
					run(ss[0], it)
				}
				continue
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			for t := 0; t < w; t++ {
				s := ss[t]
				wg.Go(func() {
					for {
						it := int(next.Add(1) - 1)
						if it >= items {
							return
						}
						if g.upper {
							// The column blocks grow from left to right:
							// taken from the right, the largest go first
							// and no worker is left with one while the
							// others idle.
							it = items - 1 - it
						}
						run(s, it)
					}
				})
			}
			wg.Wait()
		}
	}
}

// rowsBlock multiplies rows ic+r0..ic+r1 of the packed op(A) block ap by
// the packed op(B) block bp (columns jc..jc+nb) into C, one mr-row
// sliver of A at a time against every nr-column sliver of B.
func rowsBlock[E, P Float](ws *workspace[P], s *scratch[P], g *gemmArgs[E], cd, ap, bp []P, ic, r0, r1, jc, nb, kb, diagOff int) {
	mr, nr := ws.k.mr, ws.k.nr
	kern := ws.k.fn
	for ir := r0; ir < r1; ir += mr {
		i0 := ic + ir
		if g.upper && i0+diagOff > jc+nb-1 {
			return
		}
		mi := min(mr, r1-ir)
		apan := ap[ir*kb : ir*kb+mr*kb]
		jr0 := 0
		if g.upper {
			// The first sliver with a column at or above row i0+diagOff.
			jr0 = max(0, i0+diagOff-jc) / nr * nr
		}
		for jr := jr0; jr < nb; jr += nr {
			j0 := jc + jr
			nj := min(nr, nb-jr)
			bpan := bp[jr*kb : jr*kb+nr*kb]
			if cd != nil && mi == mr && nj == nr && (!g.upper || i0+mr-1+diagOff <= j0) {
				kern(kb, apan, bpan, cd[i0*g.ldc+j0:], g.ldc)
				continue
			}
			addTile(ws, s, g, apan, bpan, kb, i0, j0, mi, nj, diagOff)
		}
	}
}

// addTile adds the mi × nj corner of one micro-tile, formed in s.tile, to
// C (under upper, only the elements on or above the diagonal, past it by
// diagOff).
func addTile[E, P Float](ws *workspace[P], s *scratch[P], g *gemmArgs[E], apan, bpan []P, kb, i0, j0, mi, nj, diagOff int) {
	nr := ws.k.nr
	tile := s.tile
	clear(tile)
	ws.k.fn(kb, apan, bpan, tile, nr)
	c, ldc := g.c, g.ldc
	for i := 0; i < mi; i++ {
		ci := c[(i0+i)*ldc:]
		ti := tile[i*nr : i*nr+nj]
		jStart := 0
		if g.upper {
			jStart = max(0, i0+i-j0+diagOff)
		}
		for j := jStart; j < nj; j++ {
			ci[j0+j] = E(P(ci[j0+j]) + ti[j])
		}
	}
}

// packA packs op(A)[ic:ic+mb, pc:pc+kb], scaled by alpha, into micro-panels
// of mr rows: ap[(i/mr)*mr*kb + p*mr + i%mr]. Rows past mb are zero.
func packA[E, P Float](ap []P, mr int, g *gemmArgs[E], ic, pc, mb, kb int) {
	alpha := P(g.alpha)
	a, lda := g.a, g.lda
	if g.tA && packAGroup > 1 {
		// Rows of the stored A are columns of op(A): for packAGroup
		// micro-panels at a time, each row's mr·packAGroup contiguous
		// elements are copied into them (one sliver at a time would read
		// mr elements from each of kb rows, lda apart). The AVX-512
		// packing (packT12) moves each row's 12 elements of a panel at
		// once, for the full panels of untriangular float32 operands:
		// element by element, packing was 6 % of an M = 10⁴ float32
		// triangular solve (round 10). Under tri it packs the panels
		// above the triangle, whose elements are all nonzero: all but
		// the last 256 rows of each of U Uᵀ's column slices.
		a32, ap32 := asP[E, float32](a), asP[P, float32](ap)
		fast := packT12 != nil && mr == 12 && a32 != nil && ap32 != nil
		for ir0 := 0; ir0 < mb; ir0 += mr * packAGroup {
			ir1 := min(mb, ir0+mr*packAGroup)
			full := 0 // the panels from ir0 that packT12 fills
			if fast {
				full = (ir1 - ir0) / mr
				if g.tri {
					// Row ic+ir0+q·mr+mr-1 ≤ pc+triD for panel q: op(A)[i][pc+p]
					// is nonzero for every p.
					full = min(full, max(0, pc+g.triD+1-ic-ir0)/mr)
				}
			}
			irGo := ir0 + full*mr // the panels left to the loop below
			for ir := irGo; ir < ir1; ir += mr {
				if mb-ir < mr || g.tri {
					clear(ap[ir*kb : ir*kb+mr*kb])
				}
			}
			if full > 0 {
				packT12(kb, float32(g.alpha), a32[pc*lda+ic+ir0:], lda, full, ap32[ir0*kb:])
			}
			if irGo == ir1 {
				continue
			}
			for p := 0; p < kb; p++ {
				row := a[(pc+p)*lda+ic:]
				for ir := irGo; ir < ir1; ir += mr {
					iEnd := min(mr, mb-ir)
					if g.tri {
						// op(A)[i][pc+p] is nonzero for ic+ir+i ≤ pc+p+triD.
						iEnd = min(iEnd, max(0, pc+p+g.triD-(ic+ir)+1))
					}
					dst := ap[ir*kb+p*mr : ir*kb+p*mr+iEnd]
					for i, v := range row[ir : ir+iEnd] {
						dst[i] = alpha * P(v)
					}
				}
			}
		}
		return
	}
	for ir := 0; ir < mb; ir += mr {
		pan := ap[ir*kb : ir*kb+mr*kb]
		mi := min(mr, mb-ir)
		if mi < mr || g.tri {
			clear(pan)
		}
		if g.tA {
			// Rows of the stored A are columns of op(A): copy mi at a time
			// (under tri, the rows i with op(A)[i][pc+p] nonzero, i.e.
			// ic+ir+i ≤ pc+p+triD).
			for p := 0; p < kb; p++ {
				iEnd := mi
				if g.tri {
					iEnd = min(mi, max(0, pc+p+g.triD-(ic+ir)+1))
				}
				src := a[(pc+p)*lda+ic+ir : (pc+p)*lda+ic+ir+iEnd]
				dst := pan[p*mr : p*mr+iEnd]
				for i, v := range src {
					dst[i] = alpha * P(v)
				}
			}
			continue
		}
		if mi == mr && mr == 12 && (!g.tri || ic+ir+mr-1 <= pc+g.triD) {
			// A full panel without zeros, a k-step at a time: row by
			// row wrote one element per 48 bytes, 12 passes over the
			// panel (2.6 × slower from memory; 4 % of an M = 10⁴ U Uᵀ).
			packN12(pan, a, lda, ic+ir, pc, kb, alpha)
			continue
		}
		for i := 0; i < mi; i++ {
			gi := ic + ir + i
			pStart := 0
			if g.tri {
				// op(A)[gi][pc+p] is zero for pc+p+triD < gi.
				pStart = min(kb, max(0, gi-g.triD-pc))
			}
			row := a[gi*lda+pc : gi*lda+pc+kb]
			for p := pStart; p < kb; p++ {
				pan[p*mr+i] = alpha * P(row[p])
			}
		}
	}
}

// packN12 packs rows gi..gi+11 of an untransposed op(A), columns
// pc..pc+kb, scaled by alpha, into the 12-row micro-panel pan, one
// k-step (12 contiguous elements) at a time.
func packN12[E, P Float](pan []P, a []E, lda, gi, pc, kb int, alpha P) {
	r0 := a[gi*lda+pc:][:kb]
	r1 := a[(gi+1)*lda+pc:][:kb]
	r2 := a[(gi+2)*lda+pc:][:kb]
	r3 := a[(gi+3)*lda+pc:][:kb]
	r4 := a[(gi+4)*lda+pc:][:kb]
	r5 := a[(gi+5)*lda+pc:][:kb]
	r6 := a[(gi+6)*lda+pc:][:kb]
	r7 := a[(gi+7)*lda+pc:][:kb]
	r8 := a[(gi+8)*lda+pc:][:kb]
	r9 := a[(gi+9)*lda+pc:][:kb]
	r10 := a[(gi+10)*lda+pc:][:kb]
	r11 := a[(gi+11)*lda+pc:][:kb]
	pan = pan[:12*kb]
	for p := 0; p < kb; p++ {
		d := pan[p*12 : p*12+12 : p*12+12]
		d[0] = alpha * P(r0[p])
		d[1] = alpha * P(r1[p])
		d[2] = alpha * P(r2[p])
		d[3] = alpha * P(r3[p])
		d[4] = alpha * P(r4[p])
		d[5] = alpha * P(r5[p])
		d[6] = alpha * P(r6[p])
		d[7] = alpha * P(r7[p])
		d[8] = alpha * P(r8[p])
		d[9] = alpha * P(r9[p])
		d[10] = alpha * P(r10[p])
		d[11] = alpha * P(r11[p])
	}
}

// packB packs op(B)[pc:pc+kb, jc+j0:jc+j1] (j0 a multiple of nr) into
// micro-panels of nr columns: bp[(j/nr)*nr*kb + p*nr + j%nr]. Columns past
// nb are zero.
func packB[E, P Float](bp []P, nr int, g *gemmArgs[E], pc, jc, kb, nb, j0, j1 int) {
	b, ldb := g.b, g.ldb
	if !g.tB && g.tri {
		// The full panels left of the triangle (every column j with
		// jc+j ≤ pc+triD, so that op(B)[pc+p][j] is nonzero for every
		// p) go row by row (packBRows); the rest panel by panel.
		jTri := j0 + min(j1-j0, nb-j0, max(0, pc+g.triD+1-jc-j0))/nr*nr
		if jTri > j0 {
			packBRows(bp, nr, g, pc, jc, kb, j0, jTri)
			j0 = jTri
		}
	}
	if !g.tB && !g.tri {
		jFull := j0 + min(j1-j0, nb-j0)/nr*nr // the full panels end here
		packBRows(bp, nr, g, pc, jc, kb, j0, jFull)
		if jFull < j1 {
			// The last, partial panel: columns jFull..nb, zero past nb.
			pan := bp[jFull*kb : jFull*kb+nr*kb]
			clear(pan)
			for p := 0; p < kb; p++ {
				row := b[(pc+p)*ldb+jc+jFull : (pc+p)*ldb+jc+nb]
				dst := pan[p*nr : p*nr+len(row)]
				for j, v := range row {
					dst[j] = P(v)
				}
			}
		}
		return
	}
	for jr := j0; jr < j1; jr += nr {
		pan := bp[jr*kb : jr*kb+nr*kb]
		nj := min(nr, nb-jr)
		if g.tB && nj == nr && nr%16 == 0 && (!g.tri || jc+jr+nr-1 <= pc+g.triD) {
			// A full transposed panel without zeros: 16 source rows at
			// a time, each k-step's 16 elements written together.
			for h := 0; h < nr; h += 16 {
				packT16(pan, nr, h, b, ldb, jc+jr+h, pc, kb)
			}
			continue
		}
		if nj < nr || g.tri {
			clear(pan)
		}
		if !g.tB {
			// Row by row of the stored B (under tri, the columns j with
			// op(B)[pc+p][j] nonzero, i.e. jc+jr+j ≤ pc+p+triD).
			for p := 0; p < kb; p++ {
				jEnd := nj
				if g.tri {
					jEnd = min(nj, max(0, pc+p+g.triD-(jc+jr)+1))
				}
				src := b[(pc+p)*ldb+jc+jr : (pc+p)*ldb+jc+jr+jEnd]
				dst := pan[p*nr : p*nr+jEnd]
				if sp := asP[E, P](src); sp != nil {
					copy(dst, sp)
					continue
				}
				for j, v := range src {
					dst[j] = P(v)
				}
			}
			continue
		}
		// A transpose, in blocks of tpBlock k-steps: the nj source
		// lines and the tpBlock destination rows of a block stay in L1
		// (one column of a kc × 32 float32 panel at a time would touch
		// 64 KiB, more than L1 holds, for each of the 32 columns).
		for p0 := 0; p0 < kb; p0 += tpBlock {
			p1 := min(kb, p0+tpBlock)
			for j := 0; j < nj; j++ {
				gj := jc + jr + j
				pStart := p0
				if g.tri {
					pStart = max(p0, gj-g.triD-pc)
				}
				row := b[gj*ldb+pc : gj*ldb+pc+kb]
				for p := pStart; p < p1; p++ {
					pan[p*nr+j] = P(row[p])
				}
			}
		}
	}
}

// packT16 packs rows gj..gj+15 of the stored B, columns pc..pc+kb, as
// columns h..h+15 of the transposed panel pan (row length nr).
func packT16[E, P Float](pan []P, nr, h int, b []E, ldb, gj, pc, kb int) {
	r0 := b[gj*ldb+pc:][:kb]
	r1 := b[(gj+1)*ldb+pc:][:kb]
	r2 := b[(gj+2)*ldb+pc:][:kb]
	r3 := b[(gj+3)*ldb+pc:][:kb]
	r4 := b[(gj+4)*ldb+pc:][:kb]
	r5 := b[(gj+5)*ldb+pc:][:kb]
	r6 := b[(gj+6)*ldb+pc:][:kb]
	r7 := b[(gj+7)*ldb+pc:][:kb]
	r8 := b[(gj+8)*ldb+pc:][:kb]
	r9 := b[(gj+9)*ldb+pc:][:kb]
	r10 := b[(gj+10)*ldb+pc:][:kb]
	r11 := b[(gj+11)*ldb+pc:][:kb]
	r12 := b[(gj+12)*ldb+pc:][:kb]
	r13 := b[(gj+13)*ldb+pc:][:kb]
	r14 := b[(gj+14)*ldb+pc:][:kb]
	r15 := b[(gj+15)*ldb+pc:][:kb]
	for p := 0; p < kb; p++ {
		d := pan[p*nr+h : p*nr+h+16 : p*nr+h+16]
		d[0], d[1], d[2], d[3] = P(r0[p]), P(r1[p]), P(r2[p]), P(r3[p])
		d[4], d[5], d[6], d[7] = P(r4[p]), P(r5[p]), P(r6[p]), P(r7[p])
		d[8], d[9], d[10], d[11] = P(r8[p]), P(r9[p]), P(r10[p]), P(r11[p])
		d[12], d[13], d[14], d[15] = P(r12[p]), P(r13[p]), P(r14[p]), P(r15[p])
	}
}

// packBRows packs the full panels of op(B)[pc:pc+kb, jc+j0:jc+j1] of an
// untransposed B (j0 and j1 multiples of nr) row by row: each row's span
// is read once, in order, into every panel. Panel by panel read nr
// elements from each of kb rows, ldb apart, and stalled on every row
// (3–4 % of an M = 10⁴ float32 triangular solve, round 10).
func packBRows[E, P Float](bp []P, nr int, g *gemmArgs[E], pc, jc, kb, j0, j1 int) {
	b, ldb := g.b, g.ldb
	for p := 0; p < kb; p++ {
		row := b[(pc+p)*ldb+jc+j0 : (pc+p)*ldb+jc+j1]
		if sp := asP[E, P](row); sp != nil {
			for jr := j0; jr < j1; jr += nr {
				copy(bp[jr*kb+p*nr:jr*kb+p*nr+nr], sp[jr-j0:jr-j0+nr])
			}
			continue
		}
		for jr := j0; jr < j1; jr += nr {
			dst := bp[jr*kb+p*nr : jr*kb+p*nr+nr]
			for j, v := range row[jr-j0 : jr-j0+nr] {
				dst[j] = P(v)
			}
		}
	}
}

// tpBlock is the number of k-steps packB transposes at a time.
const tpBlock = 16

// packAGroup is the number of micro-panels packA fills at a time from a
// transposed A.
const packAGroup = 16
