package ooc

// FitVarianceForTest exposes fitVariance to the external tests.
var FitVarianceForTest = fitVariance

// VarianceForTest returns v(x) per row of raw features x.
func VarianceForTest(m *Model, x []float64) []float64 {
	return VarianceAtForTest(m, x, m.Uncertainty().Lambda)
}

// VarianceAtForTest returns v(x) per row of raw features x with the
// directions weighted at the variance λ lambda.
func VarianceAtForTest(m *Model, x []float64, lambda float64) []float64 {
	u := m.Uncertainty()
	rows := len(x) / m.D()
	scores, proj := make([]float64, rows*m.K()), make([]float64, rows*u.Rank)
	if err := m.NewProjector().ProjectTo(scores, proj, x, rows); err != nil {
		panic(err)
	}
	return projVariance(u, lambda, proj, rows)
}

// SetCentreRowWeightsForTest sets centreRowWeights until the returned
// function is called.
func SetCentreRowWeightsForTest(fn func(centres []float64, m, d int) []float64) func() {
	centreRowWeights = fn
	return func() { centreRowWeights = nil }
}
