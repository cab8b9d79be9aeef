package dense

import (
	"sync"
	"sync/atomic"
)

// Cache blocking (Goto & van de Geijn, "Anatomy of high-performance matrix
// multiplication", ACM TOMS 34(3), 2008): a kc × nc block of op(B) is packed
// once and stays in L3, an mc × kc block of op(A) is packed per worker and
// stays in L2, and the micro-kernel streams an mr × kc sliver of it against a
// kc × nr sliver of B that stays in L1.
const (
	kcBlock = 256
	mcBlock = 192 // rounded down to a multiple of mr
	ncBlock = 4096
)

// scratch is one worker's packing buffers.
type scratch struct {
	a, b, tile []float64
}

// workspace carries the kernel and one scratch per worker through a call.
type workspace struct {
	k  microKernel
	mc int
	s  []*scratch
}

func newWorkspace(k microKernel, workers int) *workspace {
	if workers < 1 {
		workers = 1
	}
	ws := &workspace{k: k, mc: max(k.mr, mcBlock/k.mr*k.mr), s: make([]*scratch, workers)}
	for i := range ws.s {
		ws.s[i] = &scratch{tile: make([]float64, k.mr*k.nr)}
	}
	return ws
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// gemmArgs describes C += alpha op(A) op(B), op(A) m×k, op(B) k×n, all
// row-major. op(A)[i][p] is a[i*lda+p], or a[p*lda+i] when tA.
// op(B)[p][j] is b[p*ldb+j], or b[j*ldb+p] when tB.
type gemmArgs struct {
	m, n, k int
	alpha   float64
	a       []float64
	lda     int
	tA      bool
	b       []float64
	ldb     int
	tB      bool
	c       []float64
	ldc     int
	// upper restricts the update to c[i][j] with j ≥ i.
	upper bool
	// tri treats op(A)[i][p] as zero when p+triD < i and op(B)[p][j] as
	// zero when p+triD < j: both operands are column slices of one upper
	// triangular matrix whose lower triangle may hold anything.
	tri  bool
	triD int
}

// gemm runs g with up to one goroutine per scratch in ss. The packed B
// block lives in ss[0] and is packed and read by all of them; each packs its
// own row blocks of A.
func (ws *workspace) gemm(g *gemmArgs, ss []*scratch) {
	if g.m <= 0 || g.n <= 0 || g.k <= 0 || g.alpha == 0 {
		return
	}
	workers := len(ss)
	nr, mc := ws.k.nr, ws.mc
	// Work below this many flops per (jc, pc) block is not worth a goroutine.
	if 2*g.m*g.n*g.k < 1<<22 {
		workers = 1
	}
	for jc := 0; jc < g.n; jc += ncBlock {
		nb := min(ncBlock, g.n-jc)
		mEff := g.m
		if g.upper {
			mEff = min(g.m, jc+nb)
		}
		for pc := 0; pc < g.k; pc += kcBlock {
			kb := min(kcBlock, g.k-pc)
			nbR := (nb + nr - 1) / nr * nr
			ss[0].b = grow(ss[0].b, kb*nbR)
			bp := ss[0].b
			nIc := (mEff + mc - 1) / mc
			if nPan := nbR / nr; workers > 1 && nIc > 1 && nPan >= 2*workers {
				// Pack B in parallel too: serially it idles the other workers.
				per := (nPan + workers - 1) / workers * nr
				var wg sync.WaitGroup
				for j0 := 0; j0 < nb; j0 += per {
					wg.Go(func() { packB(bp, nr, g, pc, jc, kb, nb, j0, min(nb, j0+per)) })
				}
				wg.Wait()
			} else {
				packB(bp, nr, g, pc, jc, kb, nb, 0, nb)
			}
			w := min(workers, nIc)
			if w <= 1 {
				for ic := 0; ic < mEff; ic += mc {
					ws.block(ss[0], g, bp, ic, jc, pc, min(mc, mEff-ic), nb, kb)
				}
				continue
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			for t := 0; t < w; t++ {
				s := ss[t]
				wg.Go(func() {
					for {
						ic := int(next.Add(1)-1) * mc
						if ic >= mEff {
							return
						}
						ws.block(s, g, bp, ic, jc, pc, min(mc, mEff-ic), nb, kb)
					}
				})
			}
			wg.Wait()
		}
	}
}

// block packs rows ic..ic+mb of op(A) (columns pc..pc+kb) and multiplies
// them by the packed B block into C.
func (ws *workspace) block(s *scratch, g *gemmArgs, bp []float64, ic, jc, pc, mb, nb, kb int) {
	mr, nr := ws.k.mr, ws.k.nr
	mbR := (mb + mr - 1) / mr * mr
	s.a = grow(s.a, mbR*kb)
	ap := s.a
	packA(ap, mr, g, ic, pc, mb, kb)
	kern := ws.k.fn
	tile := s.tile
	c, ldc := g.c, g.ldc
	for jr := 0; jr < nb; jr += nr {
		j0 := jc + jr
		nj := min(nr, nb-jr)
		bpan := bp[jr*kb : jr*kb+nr*kb]
		for ir := 0; ir < mb; ir += mr {
			i0 := ic + ir
			if g.upper && i0 > j0+nj-1 {
				break // this tile and all below it lie under the diagonal
			}
			mi := min(mr, mb-ir)
			apan := ap[ir*kb : ir*kb+mr*kb]
			if mi == mr && nj == nr && (!g.upper || i0+mr-1 <= j0) {
				kern(kb, apan, bpan, c[i0*ldc+j0:], ldc)
				continue
			}
			clear(tile)
			kern(kb, apan, bpan, tile, nr)
			for i := 0; i < mi; i++ {
				ci := c[(i0+i)*ldc:]
				ti := tile[i*nr : i*nr+nj]
				jStart := 0
				if g.upper {
					jStart = max(0, i0+i-j0)
				}
				for j := jStart; j < nj; j++ {
					ci[j0+j] += ti[j]
				}
			}
		}
	}
}

// packA packs op(A)[ic:ic+mb, pc:pc+kb], scaled by alpha, into micro-panels
// of mr rows: ap[(i/mr)*mr*kb + p*mr + i%mr]. Rows past mb are zero.
func packA(ap []float64, mr int, g *gemmArgs, ic, pc, mb, kb int) {
	alpha := g.alpha
	a, lda := g.a, g.lda
	for ir := 0; ir < mb; ir += mr {
		pan := ap[ir*kb : ir*kb+mr*kb]
		mi := min(mr, mb-ir)
		if mi < mr || g.tri {
			clear(pan)
		}
		if g.tA && !g.tri {
			// Rows of the stored A are columns of op(A): copy mi at a time.
			for p := 0; p < kb; p++ {
				src := a[(pc+p)*lda+ic+ir : (pc+p)*lda+ic+ir+mi]
				dst := pan[p*mr : p*mr+mi]
				for i, v := range src {
					dst[i] = alpha * v
				}
			}
			continue
		}
		for i := 0; i < mi; i++ {
			gi := ic + ir + i
			pStart := 0
			if g.tri {
				// op(A)[gi][pc+p] is zero for pc+p+triD < gi.
				pStart = min(kb, max(0, gi-g.triD-pc))
			}
			if !g.tA {
				row := a[gi*lda+pc : gi*lda+pc+kb]
				for p := pStart; p < kb; p++ {
					pan[p*mr+i] = alpha * row[p]
				}
			} else {
				for p := pStart; p < kb; p++ {
					pan[p*mr+i] = alpha * a[(pc+p)*lda+gi]
				}
			}
		}
	}
}

// packB packs op(B)[pc:pc+kb, jc+j0:jc+j1] (j0 a multiple of nr) into
// micro-panels of nr columns: bp[(j/nr)*nr*kb + p*nr + j%nr]. Columns past
// nb are zero.
func packB(bp []float64, nr int, g *gemmArgs, pc, jc, kb, nb, j0, j1 int) {
	b, ldb := g.b, g.ldb
	for jr := j0; jr < j1; jr += nr {
		pan := bp[jr*kb : jr*kb+nr*kb]
		nj := min(nr, nb-jr)
		if !g.tB && !g.tri && nj == nr {
			for p := 0; p < kb; p++ {
				copy(pan[p*nr:p*nr+nr], b[(pc+p)*ldb+jc+jr:])
			}
			continue
		}
		if nj < nr || g.tri {
			clear(pan)
		}
		for j := 0; j < nj; j++ {
			gj := jc + jr + j
			pStart := 0
			if g.tri {
				pStart = min(kb, max(0, gj-g.triD-pc))
			}
			if g.tB {
				row := b[gj*ldb+pc : gj*ldb+pc+kb]
				for p := pStart; p < kb; p++ {
					pan[p*nr+j] = row[p]
				}
			} else {
				for p := pStart; p < kb; p++ {
					pan[p*nr+j] = b[(pc+p)*ldb+gj]
				}
			}
		}
	}
}
