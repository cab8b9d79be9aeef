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

// axpy4F32Go is the reference for axpy4F32: y[j] −= Σ_{r<4} a[r]
// u[r*ldu+j] in float32, summed in order r = 0, 1, 2, 3.
func axpy4F32Go(a *[4]float32, u []float32, ldu int, y []float32) {
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

// axpyF32Go is the reference for axpyF32: y[j] += a x[j] in float32.
func axpyF32Go(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// scaleF32Go is the reference for scaleF32: x[j] *= s in float32.
func scaleF32Go(s float32, x []float32) {
	for i := range x {
		x[i] *= s
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

// axpyG computes y += alpha x for any storage types, in float64, or in
// float32 when both are float32.
func axpyG[X, Y Float](alpha float64, x []X, y []Y) {
	if x64, y64 := as64(x), as64(y); x64 != nil && y64 != nil {
		axpy(alpha, x64, y64)
		return
	}
	if x32, y32 := asP[X, float32](x), asP[Y, float32](y); x32 != nil && y32 != nil {
		axpyF32(float32(alpha), x32, y32)
		return
	}
	y = y[:len(x)]
	for i, v := range x {
		y[i] = Y(float64(y[i]) + alpha*float64(v))
	}
}

// scaleG computes x *= s, in float32 when x is float32.
func scaleG[X Float](s float64, x []X) {
	if x32 := asP[X, float32](x); x32 != nil {
		scaleF32(float32(s), x32)
		return
	}
	for i := range x {
		x[i] = X(float64(x[i]) * s)
	}
}

// axpy4G is axpy4 for any storage types: the assembly when both are
// float64; in float32 arithmetic (axpy4F32, assembly too) when both are
// float32 (then a must hold float32 values: elements of a float32 U);
// otherwise a loop in float64 rounded to Y on store.
func axpy4G[U, Y Float](a *[4]float64, u []U, ldu int, y []Y) {
	n := len(y)
	if n == 0 {
		return
	}
	if u64, y64 := as64(u), as64(y); u64 != nil && y64 != nil {
		axpy4(a, u64, ldu, y64)
		return
	}
	if u32, y32 := asP[U, float32](u), asP[Y, float32](y); u32 != nil && y32 != nil {
		a32 := [4]float32{float32(a[0]), float32(a[1]), float32(a[2]), float32(a[3])}
		axpy4F32(&a32, u32, ldu, y32)
		return
	}
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	u0 := u[:n]
	u1 := u[ldu : ldu+n]
	u2 := u[2*ldu : 2*ldu+n]
	u3 := u[3*ldu : 3*ldu+n]
	for j := range y {
		y[j] = Y(float64(y[j]) - (a0*float64(u0[j]) + a1*float64(u1[j]) + a2*float64(u2[j]) + a3*float64(u3[j])))
	}
}

// dot4G is dot4 for U of any storage type.
func dot4G[U Float](u []U, ldu int, x []float64) (s [4]float64) {
	n := len(x)
	if n == 0 {
		return s
	}
	if u64 := as64(u); u64 != nil {
		return dot4(u64, ldu, x)
	}
	u0 := u[:n]
	u1 := u[ldu : ldu+n]
	u2 := u[2*ldu : 2*ldu+n]
	u3 := u[3*ldu : 3*ldu+n]
	for j, v := range x {
		s[0] += float64(u0[j]) * v
		s[1] += float64(u1[j]) * v
		s[2] += float64(u2[j]) * v
		s[3] += float64(u3[j]) * v
	}
	return s
}

// dotG is dot for x of any storage type.
func dotG[X Float](x []X, y []float64) float64 {
	if x64 := as64(x); x64 != nil {
		return dot(x64, y)
	}
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		s0 += float64(xs[0]) * ys[0]
		s1 += float64(xs[1]) * ys[1]
		s2 += float64(xs[2]) * ys[2]
		s3 += float64(xs[3]) * ys[3]
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i]) * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}
