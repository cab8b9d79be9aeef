package metrics_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/metrics"
)

func TestAveragePrecision(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []float64
		pos    []bool
		want   float64
	}{
		// thresholds 0.9, 0.7, 0.5 each recall ⅓ more at precision 1, ⅔, ⅗.
		{"distinct", []float64{0.9, 0.8, 0.7, 0.6, 0.5}, []bool{true, false, true, false, true}, (1 + 2.0/3 + 3.0/5) / 3},
		// the tie enters at once: ½ recall at precision ½, then ½ at ⅔.
		{"tie", []float64{0.8, 0.8, 0.3}, []bool{true, false, true}, 0.5*0.5 + 0.5*2.0/3},
		{"perfect", []float64{3, 2, 1}, []bool{true, true, false}, 1},
		{"all tied", []float64{1, 1, 1, 1}, []bool{true, false, false, false}, 0.25},
		{"no positive", []float64{1, 2}, []bool{false, false}, math.NaN()},
	} {
		if got := metrics.AveragePrecision(tc.scores, tc.pos); !near(got, tc.want) {
			t.Errorf("%s: AveragePrecision = %v, want %v", tc.name, got, tc.want)
		}
	}
	// weights: the first positive of weight 2 is two rows at 0.9.
	got := metrics.AveragePrecisionWeighted([]float64{0.9, 0.8, 0.7}, []bool{true, false, true}, []float64{2, 1, 1})
	if want := 2.0/3*1 + 1.0/3*3.0/4; !near(got, want) {
		t.Errorf("weighted AveragePrecision = %v, want %v", got, want)
	}
}

// bruteAP is average precision by its second definition: the mean over
// positive rows of the (weighted) precision among rows scoring at least
// as high.
func bruteAP(s []float64, pos []bool, w []float64) float64 {
	var num, den float64
	for i := range s {
		if !pos[i] {
			continue
		}
		var tp, all float64
		for j := range s {
			if s[j] >= s[i] {
				all += w[j]
				if pos[j] {
					tp += w[j]
				}
			}
		}
		if all > 0 {
			num += w[i] * tp / all
		}
		den += w[i]
	}
	return num / den
}

func FuzzAveragePrecision(f *testing.F) {
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6})
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := len(b)
		s, pos, w := make([]float64, n), make([]bool, n), make([]float64, n)
		for i, v := range b {
			s[i] = float64(v >> 4) // 16 levels: many ties
			pos[i] = v&1 == 1
			w[i] = float64(v>>1&3) + 0.5
		}
		got := metrics.AveragePrecisionWeighted(s, pos, w)
		want := bruteAP(s, pos, w)
		if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(got-want) > 1e-12) {
			t.Fatalf("AveragePrecision = %v, brute force %v", got, want)
		}
		if got < 0 || got > 1+1e-12 {
			t.Fatalf("AveragePrecision = %v outside [0, 1]", got)
		}
	})
}

func TestChooseThreshold(t *testing.T) {
	p := []float64{0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.1}
	pos := []bool{true, true, false, true, false, false, false}
	// (TP, FP) when deciding ≥ each value: (1,0) (2,0) (2,1) (3,1) (3,2)
	// (3,3) (3,4); with 3 positives and 4 negatives:
	//   F1 = 2TP/(2TP+FP+FN): .5 .8 .67 .857 .75 .67 .6 → ≥ 0.6;
	//   |TPR − TNR|: .67 .33 .083 .25 .5 .75 1, the smallest at (2,1)
	//     → ≥ 0.7;
	//   FP + 5·FN: 10 5 6 1 2 3 4 → ≥ 0.6; 5·FP + FN: 2 1 6 5 … → ≥ 0.8;
	//   FP alone: none positive, 0, ties (1,0) and (2,0): the highest wins.
	for _, tc := range []struct {
		rule string
		want float64
	}{
		{"f1", 0.55},
		{"balanced", 0.65},
		{"cost:1:5", 0.55},
		{"cost:5:1", 0.75},
		{"cost:1:0", math.Nextafter(0.9, 2)},
	} {
		r, err := metrics.ParseThresholdRule(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := metrics.ChooseThreshold(p, pos, nil, r); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: threshold %v, want %v", tc.rule, got, tc.want)
		}
		if r.String() != tc.rule {
			t.Errorf("rule %q prints as %q", tc.rule, r.String())
		}
	}
	f1, _ := metrics.ParseThresholdRule("f1")
	if got := metrics.ChooseThreshold([]float64{0.2, 0.7}, []bool{true, true}, nil, f1); !math.IsNaN(got) {
		t.Errorf("one class only: threshold %v, want NaN", got)
	}
	// A tie cannot be split: the threshold lands on the group's value.
	if got := metrics.ChooseThreshold([]float64{0.6, 0.6, 0.2}, []bool{true, false, false}, nil, f1); got != 0.4 {
		t.Errorf("tied scores: threshold %v, want 0.4 (both tied rows positive)", got)
	}
}

func TestParseThresholdRuleErrors(t *testing.T) {
	for _, s := range []string{"F1", "cost", "cost:1", "cost:-1:2", "cost:0:0", "cost:a:1", "cost:1:Inf", "0.3"} {
		_, err := metrics.ParseThresholdRule(s)
		if !errors.Is(err, metrics.ErrThresholdRule) || !strings.Contains(err.Error(), `"`+s+`"`) {
			t.Errorf("ParseThresholdRule(%q) = %v, want ErrThresholdRule naming the input", s, err)
		}
	}
}

// The threshold chosen is the best of all thresholds, by brute force over
// every candidate value.
func TestChooseThresholdIsBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	rules := []string{"f1", "balanced", "cost:1:3", "cost:2:1"}
	for trial := range 200 {
		n := 1 + rng.IntN(40)
		p, pos, w := make([]float64, n), make([]bool, n), make([]float64, n)
		for i := range n {
			p[i] = math.Round(rng.Float64()*10) / 10
			pos[i] = rng.Float64() < p[i]
			w[i] = 0.5 + rng.Float64()
		}
		for _, name := range rules {
			r, _ := metrics.ParseThresholdRule(name)
			th := metrics.ChooseThreshold(p, pos, w, r)
			eval := func(th float64) (float64, float64) {
				var tp, fp, np, nn float64
				for i := range n {
					if pos[i] {
						np += w[i]
					} else {
						nn += w[i]
					}
					if p[i] >= th {
						if pos[i] {
							tp += w[i]
						} else {
							fp += w[i]
						}
					}
				}
				switch r.Kind {
				case "f1":
					return 2 * tp / (tp + fp + np), 0
				case "balanced":
					return -math.Abs(tp/np - (nn-fp)/nn), tp/np + (nn-fp)/nn
				}
				return -(fp*r.FP + (np-tp)*r.FN), 0
			}
			if math.IsNaN(th) {
				continue
			}
			g1, g2 := eval(th)
			for _, c := range append(p, 2) {
				if c1, c2 := eval(c); c1 > g1+1e-12 || (math.Abs(c1-g1) <= 1e-12 && c2 > g2+1e-12) {
					t.Fatalf("trial %d, %s: threshold %v scores %v, %v; %v scores %v, %v", trial, name, th, g1, g2, c, c1, c2)
				}
			}
		}
	}
}
