package dense

// axpy4Go is the reference for axpy4: y[j] −= Σ_{r<4} a[r] u[r*ldu+j],
// summed in order r = 0, 1, 2, 3.
func axpy4Go(a *[4]float64, u []float64, ldu int, y []float64) {
	n := len(y)
	if n == 0 {
		return
	}
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	u0 := u[:n]
	u1 := u[ldu : ldu+n]
	u2 := u[2*ldu : 2*ldu+n]
	u3 := u[3*ldu : 3*ldu+n]
	for j := range y {
		y[j] -= a0*u0[j] + a1*u1[j] + a2*u2[j] + a3*u3[j]
	}
}

// dot4Go is the reference for dot4: s[r] = Σ_j u[r*ldu+j] x[j].
func dot4Go(u []float64, ldu int, x []float64) (s [4]float64) {
	n := len(x)
	if n == 0 {
		return s
	}
	u0 := u[:n]
	u1 := u[ldu : ldu+n]
	u2 := u[2*ldu : 2*ldu+n]
	u3 := u[3*ldu : 3*ldu+n]
	for j, v := range x {
		s[0] += u0[j] * v
		s[1] += u1[j] * v
		s[2] += u2[j] * v
		s[3] += u3[j] * v
	}
	return s
}
