package ooc

// FitVarianceForTest exposes fitVariance to the external tests.
var FitVarianceForTest = fitVariance

// VarianceForTest returns v(x) per row of raw features x.
func VarianceForTest(m *Model, x []float64) []float64 {
	return m.varianceOf(m.mapped, x, len(x)/m.d)
}

// VarianceAtForTest returns v(x) per row of raw features x with the
// directions weighted at the variance λ lambda.
func VarianceAtForTest(m *Model, x []float64, lambda float64) []float64 {
	u := *m.uncertainty
	u.Lambda = lambda
	return m.withUncertainty(&u, m.uw).varianceOf(m.mapped, x, len(x)/m.d)
}

// SetCentreRowWeightsForTest sets centreRowWeights until the returned
// function is called.
func SetCentreRowWeightsForTest(fn func(centres []float64, m, d int) []float64) func() {
	centreRowWeights = fn
	return func() { centreRowWeights = nil }
}
