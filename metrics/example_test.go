package metrics_test

import (
	"fmt"

	"github.com/falkon-ooc/falkon-ooc/metrics"
)

// Score binary decisions and choose the threshold that maximises F1.
func Example() {
	p := []float64{0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.1} // P(positive)
	pos := []bool{true, true, false, true, false, false, false}

	f1, _ := metrics.ParseThresholdRule("f1")
	th := metrics.ChooseThreshold(p, pos, nil, f1)
	c := metrics.NewConfusion(2)
	for i, v := range p {
		truth, decided := 0, 0
		if pos[i] {
			truth = 1
		}
		if v >= th {
			decided = 1
		}
		c.Add(truth, decided)
	}
	fmt.Printf("threshold %.2f: precision %.2f recall %.2f F1 %.3f balanced accuracy %.3f\n",
		th, c.Precision(1), c.Recall(1), c.F1(1), c.BalancedAccuracy())
	fmt.Printf("PR-AUC (average precision) %.3f\n", metrics.AveragePrecision(p, pos))
	// Output:
	// threshold 0.55: precision 0.75 recall 1.00 F1 0.857 balanced accuracy 0.875
	// PR-AUC (average precision) 0.917
}
