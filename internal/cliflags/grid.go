package cliflags

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Grid is the value of --sigma or --lambda: one number, or a LIST
// (comma-separated) or a RANGE (LO:HI:COUNT, log spaced) of numbers > 0.
// It implements flag.Value.
type Grid struct {
	name   string
	Text   string    // as given ("" when not given)
	Values []float64 // the numbers, in order
	One    float64   // the first number: the value of a plain fit
}

// String returns the grid as given, or its single value.
func (g *Grid) String() string {
	switch {
	case g == nil:
		return ""
	case g.Text != "":
		return g.Text
	case g.One == 0:
		return "0"
	}
	return strconv.FormatFloat(g.One, 'g', -1, 64)
}

// Set parses one number (checked by the command as one value: --lambda 0
// has its own message), a LIST or a RANGE.
func (g *Grid) Set(s string) error {
	if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		g.Text, g.Values, g.One = s, []float64{v}, v
		return nil
	}
	vals, err := ParseGrid(g.name, s)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "--"+g.name+" ")
		return fmt.Errorf("%s", strings.TrimPrefix(msg, "--"+g.name+": "))
	}
	g.Text, g.Values, g.One = s, vals, vals[0]
	return nil
}

// ParseGrid parses a LIST (comma-separated) or a RANGE (LO:HI:COUNT, COUNT
// values log spaced from LO to HI) of numbers > 0 for the flag --name.
// The error is a *UsageError naming the flag.
func ParseGrid(name, s string) ([]float64, error) {
	if lo, rest, ok := strings.Cut(s, ":"); ok {
		hi, count, ok := strings.Cut(rest, ":")
		a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		n, err3 := strconv.Atoi(strings.TrimSpace(count))
		if !ok || err1 != nil || err2 != nil || err3 != nil || !(a > 0) || !(b >= a) || math.IsInf(b, 0) || n < 1 ||
			(n == 1 && a != b) {
			return nil, Usagef("--%s %q: want LO:HI:COUNT with 0 < LO ≤ HI and COUNT ≥ 1 (COUNT 1 only when LO = HI)", name, s)
		}
		out := make([]float64, n)
		for i := range n {
			if n == 1 {
				out[i] = a
				continue
			}
			out[i] = math.Exp(math.Log(a) + float64(i)*(math.Log(b)-math.Log(a))/float64(n-1))
			// Print as the user would write it: 1e-07, not 9.999999999999997e-08.
			out[i], _ = strconv.ParseFloat(strconv.FormatFloat(out[i], 'g', 6, 64), 64)
		}
		return out, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, Usagef("--%s: %q is not a number > 0", name, strings.TrimSpace(f))
		}
		out = append(out, v)
	}
	return out, nil
}

// JoinInts formats v as a flag LIST: "2,4,10".
func JoinInts(v []int) string {
	f := make([]string, len(v))
	for i, x := range v {
		f[i] = strconv.Itoa(x)
	}
	return strings.Join(f, ",")
}

// parseSteps parses --sigma-halving: a LIST of iterations ≥ 1, or 0 for
// off (steps nil, off true).
func parseSteps(s string) (steps []int, off bool, err error) {
	if strings.TrimSpace(s) == "0" {
		return nil, true, nil
	}
	steps = []int{}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, false, Usagef("--sigma-halving: %q is not an iteration ≥ 1 (give a LIST such as 2,4,10, or 0 for off)", strings.TrimSpace(f))
		}
		steps = append(steps, v)
	}
	return steps, false, nil
}
