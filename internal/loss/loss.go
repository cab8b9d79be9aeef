package loss

import "math"

// Tile is a tile of rows as a Loss sees it: N rows of Cols scores, row
// i's at F[i·Stride : i·Stride+Cols] (Stride ≥ Cols), their targets Y
// (N × K: score column c is output c mod K; for Logistic ±1) and their
// weights W (N values; nil: 1 each).
type Tile struct {
	F               []float64
	N, Cols, Stride int
	Y               []float64
	K               int
	W               []float64
}

// weight is row i's weight.
func (t *Tile) weight(i int) float64 {
	if t.W == nil {
		return 1
	}
	return t.W[i]
}

// Loss is a loss ℓ(y, f) of a score f against its target y, applied to
// a tile of rows at a time.
type Loss interface {
	// Name is the loss's name in a model's Config: "squared" or
	// "logistic".
	Name() string
	// Grad sets each score f of t to its gradient weight w·ℓ′(y, f),
	// and adds per column c the Hessian weights Σ w·ℓ″(y, f) to h[c]
	// and the values Σ w·ℓ(y, f) to v[c] (h and v Cols long).
	Grad(t Tile, h, v []float64)
	// Values adds per column c, for each length s = steps[l], the values
	// Σ w·ℓ(y, f + s·d) to v[l·Cols+c]: d has t's layout (row i's at
	// d[i·Stride:]). It changes no score.
	Values(t Tile, d, steps, v []float64)
	// HessMul multiplies each value of u (t's layout) by its row's
	// Hessian weight w·ℓ″(y, f) at the score f of t in its place.
	HessMul(t Tile, u []float64)
	// Curvature is ℓ″ at score f where no target is known: exact for a
	// loss whose ℓ″ does not depend on y (both of this package's).
	Curvature(f float64) float64
}

// Squared is the squared loss ℓ(y, f) = (f − y)²/2: ℓ′ = f − y, ℓ″ = 1.
var Squared Loss = squared{}

// Logistic is the logistic loss ℓ(y, f) = log(1 + e^(−yf)) for targets
// y = ±1: ℓ′ = −y σ(−yf), ℓ″ = σ(f)(1 − σ(f)).
var Logistic Loss = logistic{}

// ByName returns the loss named name (Loss.Name), and false for any
// other name.
func ByName(name string) (Loss, bool) {
	switch name {
	case Squared.Name():
		return Squared, true
	case Logistic.Name():
		return Logistic, true
	}
	return nil, false
}

type squared struct{}

func (squared) Name() string { return "squared" }

func (squared) Grad(t Tile, h, v []float64) {
	for i := range t.N {
		w := t.weight(i)
		ys := t.Y[i*t.K : (i+1)*t.K]
		row := t.F[i*t.Stride : i*t.Stride+t.Cols]
		for c, f := range row {
			r := f - ys[c%t.K]
			row[c] = w * r
			h[c] += w
			v[c] += w * r * r / 2
		}
	}
}

func (squared) Values(t Tile, d, steps, v []float64) {
	for i := range t.N {
		w := t.weight(i)
		ys := t.Y[i*t.K : (i+1)*t.K]
		at := i * t.Stride
		for c := range t.Cols {
			f0, dc, y := t.F[at+c], d[at+c], ys[c%t.K]
			for l, s := range steps {
				r := f0 + s*dc - y
				v[l*t.Cols+c] += w * r * r / 2
			}
		}
	}
}

func (squared) HessMul(t Tile, u []float64) {
	if t.W == nil {
		return
	}
	for i := range t.N {
		row := u[i*t.Stride : i*t.Stride+t.Cols]
		for c := range row {
			row[c] *= t.W[i]
		}
	}
}

func (squared) Curvature(float64) float64 { return 1 }

type logistic struct{}

func (logistic) Name() string { return "logistic" }

func (logistic) Grad(t Tile, h, v []float64) {
	for i := range t.N {
		w := t.weight(i)
		ys := t.Y[i*t.K : (i+1)*t.K]
		row := t.F[i*t.Stride : i*t.Stride+t.Cols]
		for c, f := range row {
			y := ys[c%t.K]
			p := Sigmoid(-y * f) // σ(−y f); σ(f)σ(−f) = p(1 − p)
			row[c] = -w * y * p
			h[c] += w * p * (1 - p)
			v[c] += w * Softplus(-y*f)
		}
	}
}

func (logistic) Values(t Tile, d, steps, v []float64) {
	for i := range t.N {
		w := t.weight(i)
		ys := t.Y[i*t.K : (i+1)*t.K]
		at := i * t.Stride
		for c := range t.Cols {
			f0, dc, y := t.F[at+c], d[at+c], ys[c%t.K]
			for l, s := range steps {
				v[l*t.Cols+c] += w * Softplus(-y*(f0+s*dc))
			}
		}
	}
}

func (logistic) HessMul(t Tile, u []float64) {
	for i := range t.N {
		w := t.weight(i)
		f := t.F[i*t.Stride : i*t.Stride+t.Cols]
		row := u[i*t.Stride : i*t.Stride+t.Cols]
		for c := range row {
			p := Sigmoid(f[c])
			row[c] *= w * p * (1 - p)
		}
	}
}

func (logistic) Curvature(f float64) float64 {
	p := Sigmoid(f)
	return p * (1 - p)
}

// Sigmoid is σ(x) = 1/(1 + e^(−x)), without overflow.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Softplus is log(1 + e^z), without overflow.
func Softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}
