package kernel

import (
	"math"

	"github.com/falkon-ooc/falkon-ooc/kernel/internal/tile"
)

// Cache budgets used to choose the tile shape. The b × M kernel tile of a
// row tile is consumed by both products while it is in cache; the Gram,
// kernel function and first product run over column blocks of the tile
// small enough to stay in L2.
//
// They are variables so that benchmarks can sweep them.
var (
	tileBudget  = 1 << 20   // bytes of the b × M tile aimed for (L2/L3)
	blockBudget = 128 << 10 // bytes of a b × nc column block (L2)
	maxTileRows = 64
	minTileRows = 16
	// bf16TileRows is BF16's minimum: each row tile streams the
	// bfloat16 centres (6·d bytes a centre, rounded up to 64-byte
	// chunks) from memory once, so the AMX cross term wants more rows
	// per pass than the FMA loop; but at M = 10⁴ a tile of 64 rows
	// (2.5 MB) no longer fits L2 for the second product. Measured at
	// M = 10⁴ (BenchmarkTileShapeBF16, one core): 32 rows gave
	// 0.63–0.72 Gelem/s at d = 90 against 0.49–0.53 with 64 and
	// 0.43–0.47 with 16; at d = 18 16 to 48 rows are within noise
	// (1.00–1.15) and 64 is slower (0.72–1.00).
	bf16TileRows = 32
	// rowTail is the most rows of a tile's tail (its rows past the last
	// multiple of tile.MR) that the products of rows alone (KvTo,
	// KvWeightsTo) compute one row at a time rather than padded with
	// zero rows to a micro-tile of tile.MR: a call of one row then costs
	// one row's kernel values, not four. 0 pads every tail. Measured at
	// M = 10⁴, d = 28 (BenchmarkKvToRows), one or two rows cost less one
	// at a time, three less as a padded micro-tile.
	rowTail = 2
)

// Centers holds the M centres of a kernel, prepared for repeated block
// products: copied, scaled by √a/σⱼ (distance kernels; see the package
// doc), packed in panels for the micro-kernel, with their squared norms
// precomputed. It is read-only after construction and safe for concurrent
// use.
type Centers struct {
	k    Kernel
	prec Precision
	m, d int
	mpad int       // m rounded up to the panel width
	inv  []float64 // per-feature √a/σⱼ for distance kernels, nil otherwise

	// root is the Centers made by NewCenters whose packed centres c
	// shares (c itself, or the origin of a WithInputMap): a Workspace
	// serves every Centers of one root.
	root *Centers

	// The input map of WithInputMap: x ↦ (x − shift)·scale per feature
	// (nil: none), applied to the rows as they are loaded into a tile.
	shift, scale []float64

	p64 []float64 // packed centres (Float64)
	n64 []float64 // squared norms of the scaled centres, len mpad
	p32 []float32 // packed centres (Float32, BF16)
	n32 []float32
	// BF16 with the AMX cross term: the centres as bfloat16 panels
	// (tile.PackCentersBF16) of bfTerms terms in bfChunks chunks.
	pb       []uint16
	bfChunks int

	dist     bool
	distP    *tile.DistParams
	dotP     tile.DotParams
	tileRows int // rows per tile, a multiple of tile.MR
	colBlock int // columns per block, a multiple of the panel width
}

// NewCenters prepares the m × d row-major centres c for kernel k in the
// given precision. It panics if len(c) < m*d, m < 1 or d < 1 (a programmer
// error); call k.Validate(d) first, NewCenters panics on an invalid kernel.
func NewCenters(k Kernel, c []float64, m, d int, prec Precision) *Centers {
	if m < 1 || d < 1 || len(c) < m*d {
		panic("kernel: NewCenters: bad shape")
	}
	if err := k.Validate(d); err != nil {
		panic(err)
	}
	if !prec.Valid() {
		panic("kernel: NewCenters: unknown precision")
	}
	k.Sigmas = append([]float64(nil), k.Sigmas...)
	if len(k.Sigmas) == 0 {
		k.Sigmas = nil
	}
	cs := &Centers{k: k, prec: prec, m: m, d: d, dist: k.Kind.IsDistance()}
	cs.root = cs
	nr := tile.NR64
	if prec != Float64 {
		nr = tile.NR32
	}
	cs.mpad, cs.tileRows, cs.colBlock = tileShape(m, prec)

	// Scaled copy of the centres, row-major m × d.
	sc := make([]float64, m*d)
	copy(sc, c[:m*d])
	if cs.dist {
		// Fold the kernel's constant a into the scaling, x_j·√a/σ_j, so
		// that s = a·‖x−c‖²/σ² is the plain r² of the scaled data.
		var a float64
		switch k.Kind {
		case Gaussian:
			a = 0.5
			cs.distP = tile.NewDistParams(false, 0, 0)
		case Laplacian, Matern12:
			a = 1
			cs.distP = tile.NewDistParams(true, 0, 0)
		case Matern32:
			a = 3
			cs.distP = tile.NewDistParams(true, 1, 0)
		case Matern52:
			a = 5
			cs.distP = tile.NewDistParams(true, 1, 1.0/3)
		}
		cs.inv = make([]float64, d)
		for j := range cs.inv {
			s := k.Sigma
			if k.Sigmas != nil {
				s = k.Sigmas[j]
			}
			cs.inv[j] = math.Sqrt(a) / s
		}
		for i := 0; i < m; i++ {
			scaleRow(sc[i*d:i*d+d], sc[i*d:i*d+d], cs.inv)
		}
	} else {
		deg := 1
		if k.Kind == Polynomial {
			deg = k.Degree
		}
		cs.dotP = tile.DotParams{Gamma: k.gamma(), Coef0: k.Coef0, Degree: deg}
	}

	// Pack into panels; padding centres are zero vectors (finite kernel
	// values, never read back).
	if prec == Float64 {
		cs.p64 = make([]float64, cs.mpad*d)
		for i := 0; i < m; i++ {
			p, q := i/nr, i%nr
			for j := 0; j < d; j++ {
				cs.p64[p*nr*d+j*nr+q] = sc[i*d+j]
			}
		}
		cs.n64 = make([]float64, cs.mpad)
		tile.Norms64(cs.n64, sc, m, d)
	} else {
		sc32 := make([]float32, m*d)
		for i, v := range sc {
			sc32[i] = float32(v)
		}
		cs.p32 = make([]float32, cs.mpad*d)
		for i := 0; i < m; i++ {
			p, q := i/nr, i%nr
			for j := 0; j < d; j++ {
				cs.p32[p*nr*d+j*nr+q] = sc32[i*d+j]
			}
		}
		cs.n32 = make([]float32, cs.mpad)
		tile.Norms32(cs.n32, sc32, m, d)
		if prec == BF16 && bf16Cross {
			cs.bfChunks = bf16Terms.Chunks(d)
			cs.pb = make([]uint16, cs.bfChunks*cs.mpad*tile.KB)
			tile.PackCentersBF16(cs.pb, sc32, m, cs.mpad, d, bf16Terms)
		}
	}

	return cs
}

// bf16Cross says whether BF16 centres take the cross term from bfloat16
// operands (tile.GramBF16), and bf16Terms with how many products. Tests
// set bf16Cross to run the Go loops of a CPU without AMX.
var (
	bf16Cross = tile.HasAMX()
	bf16Terms = tile.BF16Terms(3)
)

// tileShape returns the padded centre count and the tile shape for m
// centres: as many rows (≤ 64) as keep the b × M tile within tileBudget,
// but at least minTileRows so that each pass over the packed centres is
// amortised over enough rows; column blocks within blockBudget.
func tileShape(m int, prec Precision) (mpad, tileRows, colBlock int) {
	nr, esize, mr := tile.NR64, 8, tile.MR
	if prec != Float64 {
		nr, esize = tile.NR32, 4
	}
	if prec == BF16 {
		mr = tile.RB // the AMX row block
	}
	mpad = (m + nr - 1) / nr * nr
	rows := tileBudget / (esize * mpad) / mr * mr
	lo := minTileRows
	if prec == BF16 {
		lo = bf16TileRows
	}
	tileRows = max(min(max(rows, lo), maxTileRows)/mr*mr, mr)
	nc := blockBudget / (esize * tileRows) / nr * nr
	colBlock = min(max(nc, nr), mpad)
	return mpad, tileRows, colBlock
}

// WorkspaceBytes returns the memory of one Workspace of centres of m
// centres and d features in the given precision once it has served
// calls with k outputs (Centers.WorkspaceBytes without building the
// centres), for planning memory.
func WorkspaceBytes(m, d, k int, prec Precision) int64 {
	mpad, b, _ := tileShape(m, prec)
	return workspaceBytes(mpad, b, d, k, prec)
}

func workspaceBytes(mpad, b, d, k int, prec Precision) int64 {
	e := int64(8)
	if prec != Float64 {
		e = 4
	}
	B, D, K, P := int64(b), int64(d), int64(k), int64(mpad)
	row := int64(0) // Float32: one mapped row in float64
	if prec != Float64 {
		row = 8 * D
	}
	if prec == BF16 && bf16Cross { // the rows as bfloat16
		row += 2 * B * int64(bf16Terms.Chunks(d)*tile.KB)
	}
	return e*(B*D+B+B*P) + 8*(2*K*P+B*K) + row
}

// CentersBytes returns the memory NewCenters holds for m centres and d
// features in the given precision (Centers.Bytes without building them).
func CentersBytes(m, d int, k Kernel, prec Precision) int64 {
	mpad, _, _ := tileShape(m, prec)
	b := int64(mpad) * int64(d+1)
	if prec != Float64 {
		b *= 4
	} else {
		b *= 8
	}
	if prec == BF16 && bf16Cross {
		b += 2 * int64(mpad) * int64(bf16Terms.Chunks(d)*tile.KB)
	}
	if k.Kind.IsDistance() {
		b += 8 * int64(d)
	}
	return b
}

func scaleRow(dst, src, inv []float64) {
	for j, v := range src {
		dst[j] = v * inv[j]
	}
}

// WithInputMap returns centres that are c's, except that every product
// (KtKvAdd, KvTo, BlockTo) takes each row x of its input as
// (x − shift)·scale, feature by feature, as the row is loaded into a tile:
// a standardisation rides on the tile loading, so the caller's rows are
// neither copied nor rewritten, and each is read once per product. The
// centres are taken as given (already in the mapped space). The map is
// applied before the kernel's own scaling by √a/σⱼ, in the order
// ((x − shift)·scale)·√a/σⱼ, so that the result is bit for bit that of
// mapping the rows first. shift and scale have length d, or are both nil
// (the result is c). The result shares c's packed centres (no copy) and,
// like c, is safe for concurrent use; shift and scale are copied. It
// panics on a length mismatch.
func (c *Centers) WithInputMap(shift, scale []float64) *Centers {
	if shift == nil && scale == nil {
		return c
	}
	if len(shift) != c.d || len(scale) != c.d {
		panic("kernel: WithInputMap: shift and scale must have length d")
	}
	cm := *c
	cm.shift, cm.scale = append([]float64(nil), shift...), append([]float64(nil), scale...)
	return &cm
}

// mapRow sets dst to the row src as the tile holds it: mapped
// (WithInputMap), then scaled by inv for distance kernels. It reports
// whether src is finite; a row that is not is loaded as zeros, so that
// the tile's arithmetic stays finite (see Workspace.NonFinite).
func (c *Centers) mapRow(dst, src []float64) bool {
	dst = dst[:len(src)]
	z := 0.0 // Σ (v − v): 0 for finite values, NaN once one is NaN or ±Inf
	switch shift, scale, inv := c.shift, c.scale, c.inv; {
	case shift != nil && inv != nil:
		for j, v := range src {
			z += v - v
			dst[j] = (v - shift[j]) * scale[j] * inv[j]
		}
	case shift != nil:
		for j, v := range src {
			z += v - v
			dst[j] = (v - shift[j]) * scale[j]
		}
	case inv != nil:
		for j, v := range src {
			z += v - v
			dst[j] = v * inv[j]
		}
	default:
		for j, v := range src {
			z += v - v
			dst[j] = v
		}
	}
	if z != 0 {
		clear(dst)
		return false
	}
	return true
}

// M returns the number of centres.
func (c *Centers) M() int { return c.m }

// Dim returns the number of features d.
func (c *Centers) Dim() int { return c.d }

// Kernel returns the kernel (a copy; Sigmas is shared and must not be
// modified).
func (c *Centers) Kernel() Kernel { return c.k }

// Precision returns the precision of the kernel tiles.
func (c *Centers) Precision() Precision { return c.prec }

// TileRows returns the number of rows processed per kernel tile.
func (c *Centers) TileRows() int { return c.tileRows }

// Bytes returns the memory held by c: the packed centres and their norms
// (about M·d·8 bytes in Float64, half in Float32).
func (c *Centers) Bytes() int {
	return 8*(len(c.p64)+len(c.n64)+len(c.inv)+len(c.shift)+len(c.scale)) + 4*(len(c.p32)+len(c.n32)) + 2*len(c.pb)
}

// WorkspaceBytes returns the memory of a Workspace once it has served
// calls with k outputs: the kernel tile (TileRows × M, at most about 1 MiB
// unless M is so large that TileRows = 16 rows exceed it), the scaled rows
// and 2·k M-vectors (and k more in float32 for Float32 and BF16).
func (c *Centers) WorkspaceBytes(k int) int {
	return int(workspaceBytes(c.mpad, c.tileRows, c.d, k, c.prec))
}

// Workspace is the per-goroutine scratch of block products on one
// Centers; it is not safe for concurrent use. Its size depends on the
// tile shape and the largest k seen, not on the rows per call; once grown
// it allocates nothing.
type Workspace struct {
	c *Centers

	xs64 []float64 // scaled rows, tileRows × d
	xn64 []float64 // their squared norms
	t64  []float64 // kernel tile, tileRows × mpad
	xs32 []float32
	xn32 []float32
	t32  []float32
	xb   []uint16  // BF16: the tile's rows as bfloat16 (tile.PackRowsBF16)
	row  []float64 // one mapped row before its conversion to float32

	// bad is the first row of the current call's x that is not finite,
	// or -1.
	bad int

	k  int
	uT []float64 // k × mpad: u transposed, zero-padded
	wT []float64 // k × mpad: accumulated Kᵀ s, transposed
	s  []float64 // tileRows × k

	out4, alpha4 [4]float64 // arguments of the 4-row products (here, not on the stack, as they escape)
}

// NewWorkspace returns scratch space for block products on c.
func (c *Centers) NewWorkspace() *Workspace {
	ws := &Workspace{c: c, bad: -1}
	b := c.tileRows
	if c.prec == Float64 {
		ws.xs64 = make([]float64, b*c.d)
		ws.xn64 = make([]float64, b)
		ws.t64 = make([]float64, b*c.mpad)
	} else {
		ws.row = make([]float64, c.d)
		ws.xs32 = make([]float32, b*c.d)
		ws.xn32 = make([]float32, b)
		ws.t32 = make([]float32, b*c.mpad)
		if c.pb != nil {
			ws.xb = make([]uint16, b*c.bfChunks*tile.KB)
		}
	}
	ws.grow(1)
	return ws
}

func (ws *Workspace) grow(k int) {
	if k <= ws.k {
		return
	}
	ws.k = k
	ws.uT = make([]float64, k*ws.c.mpad)
	ws.wT = make([]float64, k*ws.c.mpad)
	ws.s = make([]float64, ws.c.tileRows*k) // tileRows is a multiple of tile.MR
}

// check panics on a workspace of other centres or a short x, and starts a
// call: Workspace.NonFinite is reset.
func (c *Centers) check(ws *Workspace, x []float64, rows int) {
	if ws == nil || ws.c.root != c.root {
		panic("kernel: workspace belongs to other centres")
	}
	if rows < 0 || len(x) < rows*c.d {
		panic("kernel: x is shorter than rows × d")
	}
	ws.bad = -1
}

// NonFinite returns the first row of the x of the last product call on
// ws that holds a NaN or ±Inf, or -1 when every row was finite. Such a
// row is taken as a zero row, so the call's result is finite but
// meaningless: a caller that may see non-finite data checks NonFinite
// after each call, instead of a pass of its own over x.
func (ws *Workspace) NonFinite() int { return ws.bad }

// loadTile prepares rows [r0, r0+n) of x: maps and scales them
// (mapRow), pads the row count to a multiple of tile.MR with zero rows
// and computes squared norms. It returns the padded row count.
func (c *Centers) loadTile(ws *Workspace, x []float64, r0, n int) int {
	d, mr := c.d, tile.MR
	if c.pb != nil {
		mr = tile.RB
	}
	np := (n + mr - 1) / mr * mr
	src := x[r0*d : (r0+n)*d]
	if c.prec == Float64 {
		xs := ws.xs64[:np*d]
		for i := 0; i < n; i++ {
			if !c.mapRow(xs[i*d:i*d+d], src[i*d:i*d+d]) && ws.bad < 0 {
				ws.bad = r0 + i
			}
		}
		clear(xs[n*d:])
		if c.dist {
			tile.Norms64(ws.xn64, xs, np, d)
		}
	} else {
		xs := ws.xs32[:np*d]
		row := ws.row[:d]
		for i := 0; i < n; i++ {
			if !c.mapRow(row, src[i*d:i*d+d]) && ws.bad < 0 {
				ws.bad = r0 + i
			}
			di := xs[i*d : i*d+d]
			for j, v := range row {
				di[j] = float32(v)
			}
		}
		clear(xs[n*d:])
		if c.dist {
			tile.Norms32(ws.xn32, xs, np, d)
		}
		if c.pb != nil {
			tile.PackRowsBF16(ws.xb, xs, np, d, bf16Terms)
		}
	}
	return np
}

// kernelBlock computes kernel values for the loaded tile (np padded rows,
// n real rows) over the columns [c0, c0+nc) into the workspace tile; with
// bf, BF16 centres take the cross term from their bfloat16 operands.
func (c *Centers) kernelBlock(ws *Workspace, np, n, c0, nc int, bf bool) {
	d, ld := c.d, c.mpad
	if c.prec == Float64 {
		t := ws.t64[c0:]
		if c.dist {
			tile.KernelDist64(t, ld, ws.xs64[:np*d], ws.xn64, np, d, c.p64[c0*d:(c0+nc)*d], c.n64[c0:c0+nc], nc, c.distP)
			return
		}
		tile.Gram64(t, ld, ws.xs64[:np*d], np, d, c.p64[c0*d:(c0+nc)*d], nc)
		for i := 0; i < n; i++ {
			tile.ApplyDot64(t[i*ld:i*ld+nc], &c.dotP)
		}
		return
	}
	t := ws.t32[c0:]
	if bf && c.pb != nil {
		// Every row of the padded tile, so that the padding rows hold
		// finite values (zero rows) for the 4-row products.
		if c.dist {
			tile.KernelDistBF16(t, ld, ws.xb, np, c.bfChunks, c.pb, c.mpad/tile.NRB, c0/tile.NRB, nc, ws.xn32, c.n32[c0:c0+nc], c.distP)
			return
		}
		tile.GramBF16(t, ld, ws.xb, np, c.bfChunks, c.pb, c.mpad/tile.NRB, c0/tile.NRB, nc)
		for i := 0; i < np; i++ {
			tile.ApplyDot32(t[i*ld:i*ld+nc], &c.dotP)
		}
		return
	}
	if c.dist {
		tile.KernelDist32(t, ld, ws.xs32[:np*d], ws.xn32, np, d, c.p32[c0*d:(c0+nc)*d], c.n32[c0:c0+nc], nc, c.distP)
		return
	}
	tile.Gram32(t, ld, ws.xs32[:np*d], np, d, c.p32[c0*d:(c0+nc)*d], nc)
	for i := 0; i < n; i++ {
		tile.ApplyDot32(t[i*ld:i*ld+nc], &c.dotP)
	}
}

// kernelRow computes the kernel values of row i of the loaded tile alone
// over the columns [c0, c0+nc) into the workspace tile: the values
// kernelBlock gives the row, bit for bit (the same products and the same
// kernel function), without the rows of a micro-tile.
func (c *Centers) kernelRow(ws *Workspace, i, c0, nc int) {
	d, ld := c.d, c.mpad
	if c.prec == Float64 {
		g := ws.t64[i*ld+c0 : i*ld+c0+nc]
		tile.Gram1x64(g, ws.xs64[i*d:i*d+d], d, c.p64[c0*d:(c0+nc)*d], nc)
		if c.dist {
			tile.ApplyDist64(g, ws.xn64[i], c.n64[c0:c0+nc], c.distP)
		} else {
			tile.ApplyDot64(g, &c.dotP)
		}
		return
	}
	g := ws.t32[i*ld+c0 : i*ld+c0+nc]
	tile.Gram1x32(g, ws.xs32[i*d:i*d+d], d, c.p32[c0*d:(c0+nc)*d], nc)
	if c.dist {
		tile.ApplyDist32(g, ws.xn32[i], c.n32[c0:c0+nc], c.distP)
	} else {
		tile.ApplyDot32(g, &c.dotP)
	}
}

// ktile computes the kernel tile of rows [r0, r0+n) and, if u is loaded
// (withU), s[i*k+l] = Σⱼ K_ij u_jl for the np padded rows (entries of the
// padding rows are meaningless), block by block while each block is in
// cache. bf is kernelBlock's. With alone (the products of rows alone:
// KvTo), a tail of up to rowTail rows past the last multiple of tile.MR
// is computed row by row (kernelRow) and the padding rows are left out
// (their entries are garbage). It returns np.
func (c *Centers) ktile(ws *Workspace, x []float64, r0, n, k int, withU, bf, alone bool) int {
	np := c.loadTile(ws, x, r0, n)
	ld := c.mpad
	if withU {
		clear(ws.s[:np*k])
	}
	// Rows [0, n4) go through the micro-tiles, [n4, n) one by one.
	n4 := np
	if t := n % tile.MR; alone && t > 0 && t <= rowTail && c.pb == nil {
		n4 = n - t
	}
	out := &ws.out4
	for c0 := 0; c0 < c.mpad; c0 += c.colBlock {
		nc := min(c.colBlock, c.mpad-c0)
		if n4 > 0 {
			c.kernelBlock(ws, n4, min(n, n4), c0, nc, bf)
		}
		for i := n4; i < n; i++ {
			c.kernelRow(ws, i, c0, nc)
		}
		if !withU {
			continue
		}
		for i := n4; i < n; i++ {
			t := i*ld + c0
			for l := 0; l < k; l++ {
				u := ws.uT[l*ld+c0 : l*ld+c0+nc]
				if c.prec == Float64 {
					ws.s[i*k+l] += tile.Dot1x64(ws.t64[t:t+nc], u)
				} else {
					ws.s[i*k+l] += tile.Dot1x32(ws.t32[t:t+nc], u)
				}
			}
		}
		for i := 0; i < n4; i += tile.MR {
			for l := 0; l < k; l++ {
				u := ws.uT[l*ld+c0 : l*ld+c0+nc]
				if c.prec == Float64 {
					tile.Dot4x64(ws.t64[i*ld+c0:], ld, u, out)
				} else {
					tile.Dot4x32(ws.t32[i*ld+c0:], ld, u, out)
				}
				for r, o := range out {
					ws.s[(i+r)*k+l] += o
				}
			}
		}
	}
	return np
}

// loadU copies u (M × k) transposed and zero-padded into ws.uT.
func (c *Centers) loadU(ws *Workspace, u []float64, k int) {
	ld := c.mpad
	for l := 0; l < k; l++ {
		ut := ws.uT[l*ld : (l+1)*ld]
		for j := 0; j < c.m; j++ {
			ut[j] = u[j*k+l]
		}
		clear(ut[c.m:])
	}
}

// KtKvAdd sets w += K(X,C)ᵀ (K(X,C)·u + v), where x is rows × d row-major
// (not modified), w is M × k, u is M × k or nil (treated as 0, giving
// w += K(X,C)ᵀ v) and v is rows × k or nil (0). All matrices are
// row-major. The rows are processed in tiles of TileRows rows whose kernel
// block is consumed by both products while in cache; K(X,C) is never
// stored whole. It panics on a shape mismatch or a workspace of other
// centres.
func (c *Centers) KtKvAdd(ws *Workspace, w []float64, x []float64, rows int, u, v []float64, k int) {
	c.KtWKvAdd(ws, w, x, rows, u, nil, v, k)
}

// KtWKvAdd is KtKvAdd with row weights: w += K(X,C)ᵀ (diag(rw)·K(X,C)·u +
// v), rw of length rows (nil: all 1, which is KtKvAdd). The weights
// scale each row's K·u as the tile is consumed: no pass of their own.
func (c *Centers) KtWKvAdd(ws *Workspace, w []float64, x []float64, rows int, u, rw, v []float64, k int) {
	c.ktkv(ws, w, x, rows, u, rw, v, k, nil)
}

// KtFKvAdd sets w += K(X,C)ᵀ fn(K(X,C)·u): for each tile of rows, once
// K·u is computed (s, n rows × k, row-major; r0 the tile's first row),
// fn may rewrite it in place before Kᵀ takes it, so that weights that
// depend on the rows' own predictions (a Newton step's) are computed in
// the same pass and the same kernel block. u is M × k (not nil). It
// panics on a shape mismatch.
func (c *Centers) KtFKvAdd(ws *Workspace, w []float64, x []float64, rows int, u []float64, k int, fn func(s []float64, r0, n int)) {
	if u == nil {
		panic("kernel: KtFKvAdd: nil u")
	}
	c.ktkv(ws, w, x, rows, u, nil, nil, k, fn)
}

// ktkv is KtWKvAdd with a tile hook (KtFKvAdd).
func (c *Centers) ktkv(ws *Workspace, w []float64, x []float64, rows int, u, rw, v []float64, k int, fn func(s []float64, r0, n int)) {
	c.check(ws, x, rows)
	if k < 1 || len(w) < c.m*k || (u != nil && len(u) < c.m*k) || (v != nil && len(v) < rows*k) || (rw != nil && len(rw) < rows) {
		panic("kernel: KtKvAdd: bad shape")
	}
	if (u == nil && v == nil) || rows == 0 {
		return
	}
	ws.grow(k)
	if u != nil {
		c.loadU(ws, u, k)
	}
	ld := c.mpad
	wT := ws.wT[:k*ld]
	clear(wT)
	alpha := &ws.alpha4
	for r0 := 0; r0 < rows; r0 += c.tileRows {
		n := min(c.tileRows, rows-r0)
		np := c.ktile(ws, x, r0, n, k, u != nil, true, false)
		s := ws.s[:np*k]
		if u != nil && rw != nil {
			for i, wi := range rw[r0 : r0+n] {
				for l := range k {
					s[i*k+l] *= wi
				}
			}
		}
		if u == nil {
			copy(s, v[r0*k:(r0+n)*k])
		} else if v != nil {
			for i, vv := range v[r0*k : (r0+n)*k] {
				s[i] += vv
			}
		}
		if fn != nil {
			fn(s[:n*k], r0, n)
		}
		clear(s[n*k:]) // padding rows contribute nothing
		for c0 := 0; c0 < ld; c0 += c.colBlock {
			nc := min(c.colBlock, ld-c0)
			for i := 0; i < np; i += tile.MR {
				for l := 0; l < k; l++ {
					for r := range alpha {
						alpha[r] = s[(i+r)*k+l]
					}
					if *alpha == [4]float64{} {
						continue
					}
					wl := wT[l*ld+c0 : l*ld+c0+nc]
					if c.prec == Float64 {
						tile.Axpy4x64(alpha, ws.t64[i*ld+c0:], ld, wl)
					} else {
						tile.Axpy4x32(alpha, ws.t32[i*ld+c0:], ld, wl)
					}
				}
			}
		}
	}
	for j := 0; j < c.m; j++ {
		for l := 0; l < k; l++ {
			w[j*k+l] += wT[l*ld+j]
		}
	}
}

// KvTo sets out (rows × k) = K(X,C)·u, where x is rows × d and u is M × k,
// all row-major. It panics on a shape mismatch.
func (c *Centers) KvTo(ws *Workspace, out []float64, x []float64, rows int, u []float64, k int) {
	c.check(ws, x, rows)
	if k < 1 || len(out) < rows*k || len(u) < c.m*k {
		panic("kernel: KvTo: bad shape")
	}
	ws.grow(k)
	c.loadU(ws, u, k)
	for r0 := 0; r0 < rows; r0 += c.tileRows {
		n := min(c.tileRows, rows-r0)
		c.ktile(ws, x, r0, n, k, true, true, true)
		copy(out[r0*k:(r0+n)*k], ws.s[:n*k])
	}
}

// BlockTo sets dst (rows × M, row-major) = K(X,C). With x = the centres
// (rows = M) the result is exactly symmetric and, for distance kernels, has
// exactly 1 on the diagonal: the scaled rows and centres are bit-identical
// and every dot product and norm is accumulated in the same order, so
// r² = ‖x‖² + ‖c‖² − 2x·c is exactly 0 on the diagonal and exactly
// symmetric. It panics on a shape mismatch.
func (c *Centers) BlockTo(ws *Workspace, dst []float64, x []float64, rows int) {
	c.check(ws, x, rows)
	if len(dst) < rows*c.m {
		panic("kernel: BlockTo: dst is shorter than rows × M")
	}
	ld := c.mpad
	for r0 := 0; r0 < rows; r0 += c.tileRows {
		n := min(c.tileRows, rows-r0)
		c.ktile(ws, x, r0, n, 0, false, false, false)
		for i := 0; i < n; i++ {
			out := dst[(r0+i)*c.m : (r0+i+1)*c.m]
			if c.prec == Float64 {
				copy(out, ws.t64[i*ld:i*ld+c.m])
			} else {
				for j, v := range ws.t32[i*ld : i*ld+c.m] {
					out[j] = float64(v)
				}
			}
		}
	}
}
