package ooc

// Balanced class weights (Config.ClassWeight) from the right-hand side's
// pass, without a pass of their own. The pass gives K_nMᵀ W [Y 1] with the
// targets encoded (±1 for binary, one-hot for multiclass), the encoded
// targets' sums Σ wᵢ yᵢ and n = Σ wᵢ; from these follow the classes'
// weight sums n_c, and the same quantities with every row of class c
// weighted by cw_c are linear combinations of them.

// balancedWeights returns the class weights cw_c = n/(C·n_c) (C classes,
// in the order of the classes) and the classes' weight sums n_c, from the
// encoded target sums and n; a *ConfigError for a class that weighs
// nothing.
func balancedWeights(task Task, classes []float64, sum []float64, n float64) (cw, counts []float64, err error) {
	counts = make([]float64, len(classes))
	if task == TaskBinary {
		counts[0], counts[1] = (n-sum[0])/2, (n+sum[0])/2 // −1 for the first class, +1 for the second
	} else {
		copy(counts, sum)
	}
	cw = make([]float64, len(classes))
	for c, nc := range counts {
		// Within rounding of 0 (the binary counts are differences): a
		// class that weighs nothing would get an infinite weight, and
		// the model would ignore it.
		if !(nc > 1e-12*n) {
			return nil, nil, configErr("Config.ClassWeight", "balanced class weights: class %v weighs nothing in the training rows "+
				"(its rows' weights sum to 0), so no weight balances it: give its rows a weight > 0, leave the class out, or use no class weights",
				classes[c])
		}
		cw[c] = n / (float64(len(classes)) * nc)
	}
	return cw, counts, nil
}

// weighRHS rewrites w, M rows of K_nMᵀ W [Y 1] (k+1 columns), as if every
// row of class c were weighted by cw_c too.
func weighRHS(task Task, cw []float64, m, k int, w []float64) {
	k1 := k + 1
	for i := range m {
		row := w[i*k1 : (i+1)*k1]
		if task == TaskBinary {
			// Per class: S₊ = (K W y + K W 1)/2, S₋ = (K W 1 − K W y)/2.
			sp, sn := (row[1]+row[0])/2, (row[1]-row[0])/2
			row[0], row[1] = cw[1]*sp-cw[0]*sn, cw[1]*sp+cw[0]*sn
			continue
		}
		ones := 0.0
		for c := range k {
			row[c] *= cw[c]
			ones += row[c]
		}
		row[k] = ones
	}
}

// weighSums rewrites the encoded target sums as weighRHS does the
// products, and returns the new n = Σ_c cw_c·n_c.
func weighSums(task Task, cw, counts, sum []float64) float64 {
	n := 0.0
	for c, nc := range counts {
		n += cw[c] * nc
	}
	if task == TaskBinary {
		sum[0] = cw[1]*counts[1] - cw[0]*counts[0]
		return n
	}
	for c := range sum {
		sum[c] = cw[c] * counts[c]
	}
	return n
}
