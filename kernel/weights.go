package kernel

// Weights is an M × k matrix u laid out once for KvWeightsTo: transposed
// and zero-padded, as KvTo lays it out in its Workspace on every call.
// That layout costs M·k strided reads per call, which a call of many rows
// amortises and a call of one row does not (at M = 10⁴ and k = 57 it is
// most of a one-row call). A caller whose u does not change between calls
// (a fitted model's coefficients) prepares it once. Weights is read-only
// after NewWeights and safe for concurrent use; it serves every Centers of
// the same root (WithInputMap) and any of their Workspaces.
type Weights struct {
	root *Centers
	k    int
	uT   []float64 // k × mpad
}

// NewWeights lays out u (M × k, row-major) for KvWeightsTo. It panics on
// a shape mismatch.
func (c *Centers) NewWeights(u []float64, k int) *Weights {
	if k < 1 || len(u) < c.m*k {
		panic("kernel: NewWeights: bad shape")
	}
	ld := c.mpad
	w := &Weights{root: c.root, k: k, uT: make([]float64, k*ld)}
	for l := range k {
		ut := w.uT[l*ld : (l+1)*ld]
		for j := range c.m {
			ut[j] = u[j*k+l]
		}
	}
	return w
}

// K returns the number of columns of the weights.
func (w *Weights) K() int { return w.k }

// Bytes returns the memory the weights hold.
func (w *Weights) Bytes() int { return 8 * len(w.uT) }

// KvWeightsTo is KvTo with prepared weights: out = K(X,C)·u (rows × k),
// bit for bit, without laying u out again. It panics on a shape
// mismatch, or weights or a workspace of other centres.
func (c *Centers) KvWeightsTo(ws *Workspace, out []float64, x []float64, rows int, w *Weights) {
	c.check(ws, x, rows)
	k := w.k
	if w.root != c.root || len(out) < rows*k {
		panic("kernel: KvWeightsTo: bad shape or weights of other centres")
	}
	if len(ws.s) < c.tileRows*k {
		ws.s = make([]float64, c.tileRows*k)
	}
	// ktile reads the weights from ws.uT: lend it w's (read only), then
	// give the workspace its own back.
	own := ws.uT
	ws.uT = w.uT
	for r0 := 0; r0 < rows; r0 += c.tileRows {
		n := min(c.tileRows, rows-r0)
		c.ktile(ws, x, r0, n, k, true, true, true)
		copy(out[r0*k:(r0+n)*k], ws.s[:n*k])
	}
	ws.uT = own
}
