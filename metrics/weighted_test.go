package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Integer weights are rows repeated: every weighted metric equals the
// unweighted one of the rows repeated w times (and weight 0 drops a row).
func TestWeightedIsRepeated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n = 400
	scores, pred, truth, w := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	pos := make([]bool, n)
	var rs, rp, rt []float64
	var rpos []bool
	for i := range n {
		scores[i] = math.Round(rng.NormFloat64()*4) / 4 // ties
		pos[i] = rng.Float64() < 0.3+0.2*math.Tanh(scores[i])
		pred[i], truth[i] = rng.NormFloat64(), rng.NormFloat64()
		w[i] = float64(rng.IntN(4))
		for range int(w[i]) {
			rs, rpos, rp, rt = append(rs, scores[i]), append(rpos, pos[i]), append(rp, pred[i]), append(rt, truth[i])
		}
	}
	close := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: weighted %v, repeated %v", what, got, want)
		}
	}
	close("AUC", AUCWeighted(scores, pos, w), AUC(rs, rpos))
	close("average precision", AveragePrecisionWeighted(scores, pos, w), AveragePrecision(rs, rpos))
	var a, b Regression
	a.AddWeighted(pred, truth, w, 1)
	b.Add(rp, rt)
	close("MSE", a.MSE(), b.MSE())
	close("RelErr", a.RelErr(), b.RelErr())
	close("MAE", a.MAE(), b.MAE())
	close("R2", a.R2(), b.R2())
	ca, cb := NewConfusion(2), NewConfusion(2)
	for i := range n {
		ca.AddWeighted(b2i(pos[i]), b2i(scores[i] > 0), w[i])
	}
	for i := range rs {
		cb.Add(b2i(rpos[i]), b2i(rs[i] > 0))
	}
	for c := range 2 {
		close("precision", ca.Precision(c), cb.Precision(c))
		close("recall", ca.Recall(c), cb.Recall(c))
		close("F1", ca.F1(c), cb.F1(c))
	}
	close("balanced accuracy", ca.BalancedAccuracy(), cb.BalancedAccuracy())
	var la, lb LogLoss
	var ea, eb Reliability
	for i := range n {
		p := 1 / (1 + math.Exp(-scores[i]))
		la.AddWeighted(p, w[i])
		ea.AddWeighted(p, pos[i], w[i])
		for range int(w[i]) {
			lb.Add(p)
			eb.Add(p, pos[i])
		}
	}
	close("log-loss", la.Value(), lb.Value())
	close("ECE", ea.ECE(), eb.ECE())
	truthC := make([]int, n)
	sc3 := make([]float64, 3*n)
	var rt3 []int
	var rs3 []float64
	for i := range n {
		truthC[i] = rng.IntN(3)
		for c := range 3 {
			sc3[3*i+c] = math.Round(rng.NormFloat64()*4) / 4
		}
		for range int(w[i]) {
			rt3, rs3 = append(rt3, truthC[i]), append(rs3, sc3[3*i:3*i+3]...)
		}
	}
	close("multiclass AUC", MulticlassAUCWeighted(sc3, 3, truthC, w), MulticlassAUC(rs3, 3, rt3))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
