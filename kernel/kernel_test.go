package kernel

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		k    Kernel
		d    int
		want string // substring of the error, "" for nil
	}{
		{Kernel{Kind: Gaussian, Sigma: 1}, 3, ""},
		{Kernel{Kind: Gaussian, Sigma: -1}, 3, "sigma must be > 0 and finite, got -1"},
		{Kernel{Kind: Matern32}, 3, "sigma must be > 0"},
		{Kernel{Kind: Laplacian, Sigma: math.Inf(1)}, 3, "got +Inf"},
		{Kernel{Kind: Matern52, Sigma: math.NaN()}, 3, "got NaN"},
		{Kernel{Kind: Gaussian, Sigmas: []float64{1, 2}}, 3, "sigmas must have one entry per feature (3), got 2"},
		{Kernel{Kind: Gaussian, Sigmas: []float64{1, 0, 2}}, 3, "sigmas[1] must be > 0"},
		{Kernel{Kind: Matern12, Sigmas: []float64{1, 3, 2}}, 3, ""},
		{Kernel{Kind: Polynomial, Degree: 0}, 3, "degree must be >= 1, got 0"},
		{Kernel{Kind: Polynomial, Degree: 2, Gamma: -1}, 3, "gamma must be >= 0"},
		{Kernel{Kind: Linear, Coef0: -1}, 3, "coef0 must be >= 0"},
		{Kernel{Kind: Linear}, 3, ""},
		{Kernel{Kind: "cosine"}, 3, `unknown kind "cosine"`},
		{Kernel{}, 3, "kind is not set"},
		{Kernel{Kind: Gaussian, Sigma: 1}, 0, "dimension must be >= 1"},
	} {
		err := tc.k.Validate(tc.d)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v.Validate(%d) = %v, want nil", tc.k, tc.d, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v.Validate(%d) = %v, want error containing %q", tc.k, tc.d, err, tc.want)
		case err != nil && !strings.HasPrefix(err.Error(), "kernel: "):
			t.Errorf("error %q lacks the package prefix", err)
		}
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds {
		got, err := ParseKind(" " + strings.ToUpper(string(k)) + " ")
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if got, err := ParseKind("RBF"); got != Gaussian || err != nil {
		t.Errorf("ParseKind(RBF) = %q, %v", got, err)
	}
	if _, err := ParseKind("cosine"); err == nil {
		t.Error("ParseKind(cosine) succeeded")
	}
}

func TestStringJSON(t *testing.T) {
	for _, tc := range []struct {
		k         Kernel
		str, json string
	}{
		{Kernel{Kind: Gaussian, Sigma: 1.5}, "gaussian(sigma=1.5)", `{"kind":"gaussian","sigma":1.5}`},
		{Kernel{Kind: Matern32, Sigmas: []float64{1, 2}}, "matern32(sigmas=[1 2])", `{"kind":"matern32","sigmas":[1,2]}`},
		{Kernel{Kind: Polynomial, Degree: 3, Coef0: 1}, "polynomial(degree=3, gamma=1, coef0=1)", `{"kind":"polynomial","degree":3,"coef0":1}`},
		{Kernel{Kind: Linear, Gamma: 2}, "linear(gamma=2, coef0=0)", `{"kind":"linear","gamma":2}`},
	} {
		if got := tc.k.String(); got != tc.str {
			t.Errorf("String() = %q, want %q", got, tc.str)
		}
		b, err := json.Marshal(tc.k)
		if err != nil || string(b) != tc.json {
			t.Errorf("json = %s, %v; want %s", b, err, tc.json)
		}
		var back Kernel
		if err := json.Unmarshal(b, &back); err != nil || back.String() != tc.str {
			t.Errorf("round trip: %v, %v", back, err)
		}
	}
}

// TestEvalFormulas checks Eval against hand-computed values.
func TestEvalFormulas(t *testing.T) {
	x, c := []float64{1, 2}, []float64{4, 6} // ‖x−c‖ = 5
	for _, tc := range []struct {
		k    Kernel
		want float64
	}{
		{Kernel{Kind: Gaussian, Sigma: 2}, math.Exp(-25.0 / 8)},
		{Kernel{Kind: Laplacian, Sigma: 2}, math.Exp(-2.5)},
		{Kernel{Kind: Matern12, Sigma: 2}, math.Exp(-2.5)},
		{Kernel{Kind: Matern32, Sigma: 2}, (1 + math.Sqrt(3)*2.5) * math.Exp(-math.Sqrt(3)*2.5)},
		{Kernel{Kind: Matern52, Sigma: 2}, (1 + math.Sqrt(5)*2.5 + 5*6.25/3) * math.Exp(-math.Sqrt(5)*2.5)},
		{Kernel{Kind: Gaussian, Sigmas: []float64{3, 4}}, math.Exp(-2.0 / 2)},
		{Kernel{Kind: Linear, Gamma: 0.5, Coef0: 1}, 0.5*16 + 1},
		{Kernel{Kind: Polynomial, Degree: 3, Coef0: 1}, 17 * 17 * 17},
	} {
		if got := tc.k.Eval(x, c); !scalar.EqualWithinRel(got, tc.want, 1e-14) {
			t.Errorf("%v: Eval = %v, want %v", tc.k, got, tc.want)
		}
	}
}

// testKernels returns one kernel of every kind for d features, with a
// per-feature σ variant of each distance kernel.
func testKernels(d int, rng *rand.Rand) []Kernel {
	sig := make([]float64, d)
	for j := range sig {
		sig[j] = 0.5 + 2*rng.Float64()
	}
	var ks []Kernel
	for _, kind := range Kinds {
		switch {
		case kind.IsDistance():
			ks = append(ks, Kernel{Kind: kind, Sigma: 1.3}, Kernel{Kind: kind, Sigmas: sig})
		case kind == Linear:
			ks = append(ks, Kernel{Kind: kind}, Kernel{Kind: kind, Gamma: 0.7, Coef0: 0.5})
		default:
			ks = append(ks, Kernel{Kind: kind, Degree: 1}, Kernel{Kind: kind, Degree: 2, Coef0: 1},
				Kernel{Kind: kind, Degree: 5, Gamma: 0.3, Coef0: 1})
		}
	}
	return ks
}

func randMat(rng *rand.Rand, r, c int) []float64 {
	a := make([]float64, r*c)
	for i := range a {
		a[i] = 2*rng.Float64() - 1
	}
	return a
}
