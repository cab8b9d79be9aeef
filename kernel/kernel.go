package kernel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind names a kernel function.
type Kind string

// The kernel kinds. With r = ‖x − c‖/σ, or r² = Σⱼ ((xⱼ − cⱼ)/σⱼ)² when
// per-feature length scales Sigmas are given:
//
//	Gaussian:   k(x, c) = exp(−r²/2)                  = exp(−‖x−c‖²/(2σ²))
//	Laplacian:  k(x, c) = exp(−r)                     (identical to Matern12)
//	Matern12:   k(x, c) = exp(−r)                     (Matérn ν = 1/2)
//	Matern32:   k(x, c) = (1 + √3·r)·exp(−√3·r)       (Matérn ν = 3/2)
//	Matern52:   k(x, c) = (1 + √5·r + 5r²/3)·exp(−√5·r) (Matérn ν = 5/2)
//	Linear:     k(x, c) = γ·x·c + c₀
//	Polynomial: k(x, c) = (γ·x·c + c₀)^degree
//
// where γ = Gamma (0 means 1) and c₀ = Coef0.
const (
	Gaussian   Kind = "gaussian"
	Laplacian  Kind = "laplacian"
	Matern12   Kind = "matern12"
	Matern32   Kind = "matern32"
	Matern52   Kind = "matern52"
	Linear     Kind = "linear"
	Polynomial Kind = "polynomial"
)

// Kinds lists every kind, in declaration order.
var Kinds = []Kind{Gaussian, Laplacian, Matern12, Matern32, Matern52, Linear, Polynomial}

// ParseKind returns the Kind named by s, ignoring case and surrounding
// space. "rbf" is accepted for Gaussian and "laplace" for Laplacian.
func ParseKind(s string) (Kind, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "rbf":
		return Gaussian, nil
	case "laplace":
		return Laplacian, nil
	}
	for _, k := range Kinds {
		if string(k) == t {
			return k, nil
		}
	}
	return "", fmt.Errorf("kernel: unknown kind %q (want one of gaussian, laplacian, matern12, matern32, matern52, linear, polynomial)", s)
}

// IsDistance reports whether k is a function of ‖x − c‖ (all kinds but
// Linear and Polynomial); such kernels take Sigma or Sigmas and have
// k(x, x) = 1.
func (k Kind) IsDistance() bool {
	switch k {
	case Gaussian, Laplacian, Matern12, Matern32, Matern52:
		return true
	}
	return false
}

// Kernel describes a kernel function; it is serialised into model files
// and --json output. A zero field means its default where one is stated.
type Kernel struct {
	Kind Kind `json:"kind"`
	// Sigma is the length scale σ > 0 of distance kernels; ignored when
	// Sigmas is set and by Linear and Polynomial.
	Sigma float64 `json:"sigma,omitempty"`
	// Sigmas are per-feature length scales σⱼ > 0 (len = d) of distance
	// kernels; when non-nil they override Sigma.
	Sigmas []float64 `json:"sigmas,omitempty"`
	// Degree ≥ 1 is the degree of Polynomial; ignored by other kinds.
	Degree int `json:"degree,omitempty"`
	// Gamma ≥ 0 scales x·c in Linear and Polynomial; 0 means 1.
	Gamma float64 `json:"gamma,omitempty"`
	// Coef0 ≥ 0 is the offset c₀ of Linear and Polynomial.
	Coef0 float64 `json:"coef0,omitempty"`
}

// gamma returns the effective γ.
func (k Kernel) gamma() float64 {
	if k.Gamma == 0 {
		return 1
	}
	return k.Gamma
}

// Validate checks the parameters for data with d features and returns an
// error naming the first bad parameter and its value.
func (k Kernel) Validate(d int) error {
	if d < 1 {
		return fmt.Errorf("kernel: dimension must be >= 1, got %d", d)
	}
	switch k.Kind {
	case Gaussian, Laplacian, Matern12, Matern32, Matern52:
		if k.Sigmas != nil {
			if len(k.Sigmas) != d {
				return fmt.Errorf("kernel: sigmas must have one entry per feature (%d), got %d", d, len(k.Sigmas))
			}
			for j, s := range k.Sigmas {
				if !(s > 0) || math.IsInf(s, 0) {
					return fmt.Errorf("kernel: sigmas[%d] must be > 0 and finite, got %v", j, s)
				}
			}
			return nil
		}
		if !(k.Sigma > 0) || math.IsInf(k.Sigma, 0) {
			return fmt.Errorf("kernel: sigma must be > 0 and finite, got %v", k.Sigma)
		}
	case Linear, Polynomial:
		if k.Kind == Polynomial && k.Degree < 1 {
			return fmt.Errorf("kernel: degree must be >= 1, got %d", k.Degree)
		}
		if !(k.Gamma >= 0) || math.IsInf(k.Gamma, 0) {
			return fmt.Errorf("kernel: gamma must be >= 0 and finite (0 means 1), got %v", k.Gamma)
		}
		if !(k.Coef0 >= 0) || math.IsInf(k.Coef0, 0) {
			return fmt.Errorf("kernel: coef0 must be >= 0 and finite (for a positive semi-definite kernel), got %v", k.Coef0)
		}
	case "":
		return fmt.Errorf("kernel: kind is not set")
	default:
		return fmt.Errorf("kernel: unknown kind %q", string(k.Kind))
	}
	return nil
}

// Eval returns k(x, c) by the formulas on Kind, computed directly (the
// differences xⱼ − cⱼ, math.Exp): it is the reference the block products
// are tested against. It panics if len(x) != len(c).
func (k Kernel) Eval(x, c []float64) float64 {
	if len(x) != len(c) {
		panic("kernel: Eval: len(x) != len(c)")
	}
	if !k.Kind.IsDistance() {
		dot := 0.0
		for j := range x {
			dot += x[j] * c[j]
		}
		b := k.gamma()*dot + k.Coef0
		if k.Kind == Linear {
			return b
		}
		return math.Pow(b, float64(k.Degree))
	}
	r2 := 0.0
	for j := range x {
		s := k.Sigma
		if k.Sigmas != nil {
			s = k.Sigmas[j]
		}
		t := (x[j] - c[j]) / s
		r2 += t * t
	}
	r := math.Sqrt(r2)
	switch k.Kind {
	case Gaussian:
		return math.Exp(-r2 / 2)
	case Laplacian, Matern12:
		return math.Exp(-r)
	case Matern32:
		t := math.Sqrt(3) * r
		return (1 + t) * math.Exp(-t)
	case Matern52:
		t := math.Sqrt(5) * r
		return (1 + t + 5*r2/3) * math.Exp(-t)
	}
	panic("kernel: Eval: unknown kind " + strconv.Quote(string(k.Kind)))
}

// String formats the kernel with its relevant parameters, for example
// "gaussian(sigma=1.5)" or "polynomial(degree=3, gamma=1, coef0=1)".
func (k Kernel) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch {
	case k.Kind.IsDistance():
		if k.Sigmas != nil {
			s := make([]string, len(k.Sigmas))
			for j, v := range k.Sigmas {
				s[j] = f(v)
			}
			return fmt.Sprintf("%s(sigmas=[%s])", k.Kind, strings.Join(s, " "))
		}
		return fmt.Sprintf("%s(sigma=%s)", k.Kind, f(k.Sigma))
	case k.Kind == Linear:
		return fmt.Sprintf("linear(gamma=%s, coef0=%s)", f(k.gamma()), f(k.Coef0))
	case k.Kind == Polynomial:
		return fmt.Sprintf("polynomial(degree=%d, gamma=%s, coef0=%s)", k.Degree, f(k.gamma()), f(k.Coef0))
	}
	return fmt.Sprintf("%s(?)", string(k.Kind))
}

// Precision selects the arithmetic of kernel tiles.
type Precision int

const (
	// Float64 computes kernel tiles in float64.
	Float64 Precision = iota
	// Float32 computes kernel tiles (distances, kernel function) in
	// float32 and accumulates the products into the float64 outputs; the
	// M-vectors stay float64.
	Float32
	// BF16 is Float32 with the cross term x·c of the block products
	// (KtKvAdd, KvTo and their kin; not BlockTo) taken on the AMX unit
	// from bfloat16 operands split as x = hi + lo, three products
	// accumulated in float32: kernel values within about 1e-4 of Float32's
	// (see the package doc). On a CPU without AMX-BF16 it computes
	// exactly what Float32 does (BF16Native reports which).
	BF16
)

// ParsePrecision returns the Precision named "float64", "float32" or
// "bf16".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "float64":
		return Float64, nil
	case "float32":
		return Float32, nil
	case "bf16":
		return BF16, nil
	}
	return 0, fmt.Errorf("kernel: unknown precision %q (want float64, float32 or bf16)", s)
}

// Valid reports whether p is one of the precisions.
func (p Precision) Valid() bool { return p == Float64 || p == Float32 || p == BF16 }

// BF16Native reports whether BF16 runs its cross term on this CPU's AMX
// unit; when false, BF16 computes what Float32 does.
func BF16Native() bool { return bf16Cross }

// MarshalText encodes p as its name, so that JSON holds "float64",
// "float32" or "bf16".
func (p Precision) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("kernel: unknown precision %d", int(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText decodes a name written by MarshalText.
func (p *Precision) UnmarshalText(b []byte) error {
	v, err := ParsePrecision(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case BF16:
		return "bf16"
	}
	return "Precision(" + strconv.Itoa(int(p)) + ")"
}

// FlopsPerElement returns the nominal floating-point operations per kernel
// element (one row × one centre) of KtKvAdd with k outputs and d features:
// 2d for the dot product, 4 for r² and the scaling, the kernel function
// (counted as 20 for exp, 10 for sqrt, 4 for the Matérn polynomial factor)
// and 4k for the two products. Benchmarks divide by it to report GFLOP/s;
// it is a convention, not a measurement.
func (k Kernel) FlopsPerElement(d, outputs int) int {
	f := 2*d + 4*outputs
	switch k.Kind {
	case Gaussian:
		f += 4 + 20
	case Laplacian, Matern12:
		f += 4 + 20 + 10
	case Matern32, Matern52:
		f += 4 + 20 + 10 + 4
	case Linear:
		f += 2
	case Polynomial:
		f += 2 + 2*bitsLen(k.Degree)
	}
	return f
}

func bitsLen(n int) int {
	b := 0
	for n > 0 {
		b++
		n >>= 1
	}
	return b
}
