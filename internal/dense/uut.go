package dense

// uutStep is the rank of each GEMM update of UUt and UUtPacked; steps of
// 512 ran no faster in float32 (round 10).
const uutStep = 256

// UUt computes C = alpha U Uᵀ for the n×n upper triangular U held in the
// upper triangle (j ≥ i) of u (row-major, stride ldu); the strict lower
// triangle of u is not read. The result is symmetric and only its upper
// triangle is written into c (stride ldc); the strict lower triangle of c is
// left alone, so C is laid out like gonum's mat.SymDense. c must not
// overlap u. This is LAPACK's dlauum (out of place, with a scale), used for
// FALKON's S = T Tᵀ / M + λI.
//
// At most workers goroutines run; the result does not depend on workers.
// The flops (n³/3) run as a sequence of rank-256 updates
// C₀:ₑ,₀:ₑ += U₀:ₑ,ₚ:ₑ U₀:ₑ,ₚ:ₑᵀ (e = p+256) through the parallel GEMM, with
// the triangular part of each column slice masked while packing.
func UUt[E Float](u []E, n, ldu int, alpha float64, c []E, ldc int, workers int) {
	uutWith(bestSet, u, n, ldu, alpha, c, ldc, workers)
}

func uutWith[E Float](ks kernelSet, u []E, n, ldu int, alpha float64, c []E, ldc int, workers int) {
	checkMat("UUt U", u, n, n, ldu)
	checkMat("UUt C", c, n, n, ldc)
	if u32, ok := as32(ks, u); ok {
		uutP(ks.k32, u32, n, ldu, alpha, any(c).([]float32), ldc, workers)
		return
	}
	uutP(ks.k64, u, n, ldu, alpha, c, ldc, workers)
}

func uutP[E, P Float](kern microKernel[P], u []E, n, ldu int, alpha float64, c []E, ldc int, workers int) {
	for i := 0; i < n; i++ {
		clear(c[i*ldc+i : i*ldc+n])
	}
	ws := newWorkspace(kern, workers)
	defer ws.release()
	for p := 0; p < n; p += uutStep {
		e := min(n, p+uutStep)
		gemm(ws, &gemmArgs[E]{
			m: e, n: e, k: e - p, alpha: alpha,
			a: u[p:], lda: ldu,
			b: u[p:], ldb: ldu, tB: true,
			c: c, ldc: ldc,
			upper: true,
			tri:   true, triD: p,
		}, ws.s)
	}
}

// UUtPacked is UUt on FALKON's packed layout, where one n×n buffer a
// (stride lda) holds two triangular factors: U is stored transposed in the
// lower triangle (U[i][j] = a[j*lda+i], j ≥ i, its diagonal on a's
// diagonal), and the strict upper triangle of C = alpha U Uᵀ is written
// into the strict upper triangle of a. C's diagonal is not formed (a's
// diagonal still holds U's): see RowNorms2. At most workers goroutines
// run; the result does not depend on workers; mon (nil for none) is
// called between the rank-256 updates, and abandons the call when it
// returns false (UUtPacked then returns false).
func UUtPacked[E Float](a []E, n, lda int, alpha float64, workers int, mon Monitor) bool {
	return uutPackedWith(bestSet, a, n, lda, alpha, workers, mon)
}

func uutPackedWith[E Float](ks kernelSet, a []E, n, lda int, alpha float64, workers int, mon Monitor) bool {
	checkMat("UUtPacked", a, n, n, lda)
	if a32, ok := as32(ks, a); ok {
		return uutPackedP(ks.k32, a32, n, lda, alpha, workers, mon)
	}
	return uutPackedP(ks.k64, a, n, lda, alpha, workers, mon)
}

func uutPackedP[E, P Float](kern microKernel[P], a []E, n, lda int, alpha float64, workers int, mon Monitor) bool {
	for i := 0; i < n; i++ {
		clear(a[i*lda+i+1 : i*lda+n])
	}
	ws := newWorkspace(kern, workers)
	defer ws.release()
	// Update p costs about e²·256 flops: the fraction done is (e/n)³.
	for p := 0; p < n; p += uutStep {
		if mon != nil && !mon(cube(p, n)) {
			return false
		}
		e := min(n, p+uutStep)
		// op(A)[i][q] = U[i][p+q] = a[(p+q)*lda+i]; op(B) = op(A)ᵀ.
		gemm(ws, &gemmArgs[E]{
			m: e, n: e, k: e - p, alpha: alpha,
			a: a[p*lda:], lda: lda, tA: true,
			b: a[p*lda:], ldb: lda,
			c: a, ldc: lda,
			upper: true, strict: true,
			tri: true, triD: p,
		}, ws.s)
	}
	if mon != nil {
		mon(1)
	}
	return true
}

// cube is (p/n)³.
func cube(p, n int) float64 {
	r := float64(p) / float64(n)
	return r * r * r
}

// RowNorms2 sets out[i] = alpha Σ_{j≥i} U[i][j]² for the upper triangular
// U in the upper triangle of u (stride ldu): the diagonal of alpha U Uᵀ,
// which UUtPacked leaves out.
func RowNorms2[E Float](u []E, n, ldu int, alpha float64, out []float64) {
	checkMat("RowNorms2", u, n, n, ldu)
	for i := 0; i < n; i++ {
		row := u[i*ldu+i : i*ldu+n]
		var s0, s1 float64
		j := 0
		for ; j+2 <= len(row); j += 2 {
			s0 += float64(row[j]) * float64(row[j])
			s1 += float64(row[j+1]) * float64(row[j+1])
		}
		for ; j < len(row); j++ {
			s0 += float64(row[j]) * float64(row[j])
		}
		out[i] = alpha * (s0 + s1)
	}
}

// TransposeUpper copies the strict upper triangle of the n×n matrix in a
// (stride lda) into its strict lower triangle: a[j*lda+i] = a[i*lda+j] for
// j > i. It works in 64×64 tiles so that both sides stay in cache.
func TransposeUpper[E Float](a []E, n, lda int) {
	checkMat("TransposeUpper", a, n, n, lda)
	const tile = 64
	for i0 := 0; i0 < n; i0 += tile {
		i1 := min(n, i0+tile)
		for j0 := i0; j0 < n; j0 += tile {
			j1 := min(n, j0+tile)
			i := i0
			// Four source rows at a time: each destination row gets four
			// consecutive elements per visit (columns j ≥ i+4 only; the
			// rest of the 4-row group goes element by element).
			for ; i+4 <= i1; i += 4 {
				r0 := a[i*lda : i*lda+n]
				r1 := a[(i+1)*lda : (i+1)*lda+n]
				r2 := a[(i+2)*lda : (i+2)*lda+n]
				r3 := a[(i+3)*lda : (i+3)*lda+n]
				for k := i; k < i+4; k++ {
					for j := max(j0, k+1); j < min(j1, i+4); j++ {
						a[j*lda+k] = a[k*lda+j]
					}
				}
				for j := max(j0, i+4); j < j1; j++ {
					d := a[j*lda+i : j*lda+i+4 : j*lda+i+4]
					d[0], d[1], d[2], d[3] = r0[j], r1[j], r2[j], r3[j]
				}
			}
			for ; i < i1; i++ {
				for j := max(j0, i+1); j < j1; j++ {
					a[j*lda+i] = a[i*lda+j]
				}
			}
		}
	}
}
