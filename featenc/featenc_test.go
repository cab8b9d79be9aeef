package featenc

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCounterExact(t *testing.T) {
	c := NewCounter(0)
	for i, v := range strings.Fields("b a c a b a d") {
		c.Add(v)
		if i == 2 {
			c.AddNull()
		}
	}
	if n, exact := c.Distinct(); n != 4 || !exact {
		t.Fatalf("Distinct = %d, %v; want 4, true", n, exact)
	}
	levels, other := c.Levels(2)
	if !slices.Equal(levels, []string{"a", "b"}) || !other {
		t.Fatalf("Levels(2) = %q, %v; want [a b], true", levels, other)
	}
	col := c.Column("region", 8)
	want := []string{"region=a", "region=b", "region=c", "region=d", "region=(null)"}
	if !slices.Equal(col.Features, want) || col.Other || !col.Null {
		t.Fatalf("Column = %+v; want features %q, no other, null", col, want)
	}
}

// TestCounterBounded: a million distinct levels and a frequent one; the
// counter stays at its cap, finds the frequent level and estimates the
// distinct count within 10 %.
func TestCounterBounded(t *testing.T) {
	const n = 1_000_000
	c := NewCounter(1 << 12)
	for i := range n {
		c.Add(fmt.Sprintf("id-%d", i))
		if i%10 == 0 {
			c.Add("hot")
		}
		if len(c.counts) > 1<<12 {
			t.Fatalf("after %d values the counter holds %d levels, over its cap", i, len(c.counts))
		}
	}
	levels, other := c.Levels(1)
	if !slices.Equal(levels, []string{"hot"}) || !other {
		t.Fatalf("Levels(1) = %q, %v; want [hot], true", levels, other)
	}
	d, exact := c.Distinct()
	if exact || math.Abs(float64(d)-n)/n > 0.1 {
		t.Fatalf("Distinct = %d, %v; want about %d, estimated", d, exact, n+1)
	}
	// Every value distinct: the estimate never says more levels than values.
	u := NewCounter(1 << 10)
	for i := range 5000 {
		u.Add(fmt.Sprintf("u-%d", i))
	}
	if d, exact := u.Distinct(); exact || d > u.Total() || d < 4500 {
		t.Fatalf("all distinct: Distinct = %d, %v of %d values", d, exact, u.Total())
	}
}

// TestMergeOrder: merging per-part counters in order gives the counts of
// one counter over all parts while under the cap.
func TestMergeOrder(t *testing.T) {
	parts := [][]string{strings.Fields("x y x"), strings.Fields("z x"), strings.Fields("y y")}
	all, merged := NewCounter(0), NewCounter(0)
	for _, p := range parts {
		c := NewCounter(0)
		for _, v := range p {
			c.Add(v)
			all.Add(v)
		}
		merged.Merge(c)
	}
	a, _ := all.Levels(2)
	m, _ := merged.Levels(2)
	if !slices.Equal(a, m) || all.Total() != merged.Total() || !slices.Equal(all.hashes, merged.hashes) {
		t.Fatalf("merged levels %q (total %d), one counter %q (total %d)", m, merged.Total(), a, all.Total())
	}
}

func TestExpandUnseen(t *testing.T) {
	spec := &Spec{Columns: []Column{{Source: "c", Kind: OneHot, Levels: []string{"a", "b"}, Other: true, Null: true, Scale: Scale}}}
	spec.Columns[0].Features = FeatureNames(spec.Columns[0])
	e, err := NewEncoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	raw := []float64{Code("b"), Code("zz"), NullCode, Code("a")}
	dst := [][]float64{make([]float64, 4), make([]float64, 4), make([]float64, 4), make([]float64, 4)}
	if u := e.Expand(0, raw, dst); u != 1 {
		t.Fatalf("unseen = %d, want 1", u)
	}
	want := [][]float64{{0, 0, 0, 1}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}
	for k := range want {
		if !slices.Equal(dst[k], want[k]) {
			t.Fatalf("feature %s = %v, want %v", spec.Columns[0].Features[k], dst[k], want[k])
		}
	}
	// Without (other) and (null), an unseen level and a NULL are all zeros.
	spec = &Spec{Columns: []Column{{Source: "c", Kind: OneHot, Levels: []string{"a"}, Scale: Scale}}}
	spec.Columns[0].Features = FeatureNames(spec.Columns[0])
	e, _ = NewEncoder(spec)
	if u := e.Expand(0, []float64{NullCode, Code("q"), Code("a")}, [][]float64{dst[0][:3]}); u != 2 || !slices.Equal(dst[0][:3], []float64{0, 0, 1}) {
		t.Fatalf("unseen %d, feature %v; want 2, [0 0 1]", u, dst[0][:3])
	}
}

// TestFoldedNotUnseen: a training level folded into (other) (the
// counter's levels beyond the cap, OtherLevels) reads as (other) and is
// not counted as unseen; a level the training never held is.
func TestFoldedNotUnseen(t *testing.T) {
	c := NewCounter(0)
	for _, l := range strings.Fields("a a a b b c d") {
		c.Add(l)
	}
	col := c.Column("k", 2)
	if !slices.Equal(col.Levels, []string{"a", "b"}) || !slices.Equal(col.OtherLevels, []string{"c", "d"}) {
		t.Fatalf("levels %q, other levels %q", col.Levels, col.OtherLevels)
	}
	e, err := NewEncoder(&Spec{Columns: []Column{col}})
	if err != nil {
		t.Fatal(err)
	}
	dst := [][]float64{make([]float64, 4), make([]float64, 4), make([]float64, 4)}
	if u := e.Expand(0, []float64{Code("c"), Code("zz"), Code("d"), Code("a")}, dst); u != 1 || !slices.Equal(dst[2], []float64{1, 1, 1, 0}) {
		t.Fatalf("unseen %d, (other) %v; want 1, [1 1 1 0]", u, dst[2])
	}
	bad := col
	bad.OtherLevels = []string{"a"}
	if err := (&Spec{Columns: []Column{bad}}).Validate(); err == nil || err.Error() != `encoding: column "k": level "a" both kept and read as (other)` {
		t.Fatalf("kept level among the other levels: %v", err)
	}
}

func TestPhase(t *testing.T) {
	// 2024-03-04 (a Monday) 06:00 UTC.
	days := float64(19786) + 0.25
	for _, tc := range []struct {
		name string
		want float64
	}{{Hour, 0.25}, {DoW, 0.25 / 7}, {DoY, (31 + 29 + 3 + 0.25) / 366}} {
		if got := Phase(tc.name, days); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Phase(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		col  Column
		want string
	}{
		{Column{Source: "c", Kind: OneHot, Levels: []string{"b", "a"}, Scale: Scale, Features: []string{"c=b", "c=a"}}, "not sorted"},
		{Column{Source: "c", Kind: OneHot, Levels: []string{"a"}, Scale: 1, Features: []string{"c=a"}}, "scale"},
		{Column{Source: "t", Kind: Time, Cyclic: []string{"week"}, Features: []string{"t"}}, `unknown time feature "week"`},
		{Column{Source: "t", Kind: "bucket", Features: []string{"t"}}, `unknown kind "bucket"`},
		{Column{Source: "t", Kind: Time, Features: []string{"x"}}, `features ["x"], want ["t"]`},
	} {
		err := (&Spec{Columns: []Column{tc.col}}).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tc.col, err, tc.want)
		}
	}
}

func ExampleEncoder_Expand() {
	c := NewCounter(0)
	for _, v := range []string{"north", "south", "north", "east"} {
		c.Add(v)
	}
	spec := &Spec{Columns: []Column{c.Column("region", 2)}}
	e, _ := NewEncoder(spec)
	raw := []float64{Code("north"), Code("east"), Code("west")}
	dst := [][]float64{make([]float64, 3), make([]float64, 3), make([]float64, 3)}
	unseen := e.Expand(0, raw, dst)
	for k, name := range spec.Columns[0].Features {
		fmt.Println(name, dst[k])
	}
	fmt.Println("unseen:", unseen)
	// Output:
	// region=east [0 1 0]
	// region=north [1 0 0]
	// region=(other) [0 0 1]
	// unseen: 1
}

// TestAssembler: numeric features are copied, a one-hot column is expanded
// from its codes (the model may use a subset of its features), and unseen
// levels are counted.
func TestAssembler(t *testing.T) {
	col := Column{Source: "c", Kind: OneHot, Levels: []string{"a", "b"}, Other: true, Scale: Scale}
	col.Features = FeatureNames(col)
	spec := &Spec{Columns: []Column{col}}
	a, err := NewAssembler(spec, []string{"c=b", "x", "c=(other)"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Columns, []string{"x", "c"}) || !slices.Equal(a.Categorical, []string{"c"}) {
		t.Fatalf("columns %q, categorical %q", a.Columns, a.Categorical)
	}
	x := make([]float64, 9)
	a.Assemble(x, [][]float64{{1, 2, 3}, {Code("b"), Code("a"), Code("new")}}, 3)
	if want := []float64{1, 1, 0, 0, 2, 0, 0, 3, 1}; !slices.Equal(x, want) {
		t.Fatalf("x = %v, want %v", x, want)
	}
	if u := a.Unseen(); len(u) != 1 || u[0] != (Unseen{"c", 1, "c=(other)"}) {
		t.Fatalf("Unseen = %+v", u)
	}
}

// TestCounterJSON: a counter through JSON (exact, with NULLs, and one
// reduced to its summary) merges, chooses levels and estimates as the
// original; damaged encodings are refused.
func TestCounterJSON(t *testing.T) {
	parts := make([]*Counter, 3)
	for p := range parts {
		parts[p] = NewCounter(64)
		for i := range 40 + 100*p {
			parts[p].Add(fmt.Sprintf("l%d", i%(20+90*p)))
			if i%9 == p {
				parts[p].AddNull()
			}
		}
	}
	a, b := NewCounter(64), NewCounter(64)
	for _, c := range parts {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var d Counter
		if err := json.Unmarshal(j, &d); err != nil {
			t.Fatal(err)
		}
		if j2, _ := json.Marshal(&d); string(j2) != string(j) {
			t.Fatalf("re-encoded %s, first %s", j2, j)
		}
		a.Merge(c)
		b.Merge(&d)
	}
	if parts[0].reduced || !parts[2].reduced {
		t.Fatal("the first part should be exact and the third reduced: the test does not cover both")
	}
	for _, max := range []int{5, 64} {
		if a.Note(max) != b.Note(max) {
			t.Fatalf("Note(%d): %q from the decoded counters, %q from the originals", max, b.Note(max), a.Note(max))
		}
		la, oa := a.Levels(max)
		lb, ob := b.Levels(max)
		if !slices.Equal(la, lb) || oa != ob {
			t.Fatalf("Levels(%d) = %q %v, want %q %v", max, lb, ob, la, oa)
		}
	}
	for _, bad := range []string{
		`{"cap":0,"levels":[],"total":0}`,
		`{"cap":2,"levels":[{"l":"a","n":1},{"l":"b","n":1},{"l":"c","n":1}],"total":3}`,
		`{"cap":4,"levels":[{"l":"a","n":1},{"l":"a","n":1}],"total":2}`,
		`{"cap":4,"levels":[{"l":"a","n":0}],"total":0}`,
		`{"cap":4,"levels":[],"total":0,"hashes":[3,2]}`,
	} {
		var c Counter
		if err := json.Unmarshal([]byte(bad), &c); err == nil || !strings.HasPrefix(err.Error(), "featenc: a counter") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

// oofRef is the definition of a row's out-of-fold value, from the rows
// themselves: the mean of the row's level over the rows of the other
// folds (row r in fold r mod Folds), shrunk by Smooth rows towards those
// rows' mean.
func oofRef(codes, y []float64, r int) float64 {
	var n, s, ln, ls float64
	for i := range codes {
		if i%Folds == r%Folds {
			continue
		}
		n++
		s += y[i]
		if codes[i] == codes[r] {
			ln++
			ls += y[i]
		}
	}
	prior := s / n
	return (ls + Smooth*prior) / (ln + Smooth)
}

// TestTargetSums: sums added by file and merged with the files' first
// rows give every row the out-of-fold value of its definition, whatever
// the files' sizes; the model's column holds the means over every row;
// JSON round trips are exact; Complement gives the other class's sums.
func TestTargetSums(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	var codes, y, ind []float64
	c := NewCounter(0)
	for i := range 103 {
		l := names[(i*i+i/3)%4]
		code := c.Add(l)
		if i%17 == 5 {
			code = NullCode
			c.Remove(Code(l))
			c.AddNull()
		}
		codes = append(codes, code)
		y = append(y, float64((i*7)%11))
		ind = append(ind, float64(i%3%2)) // class codes 0 and 1
	}
	total := NewTargetSums(0)
	for _, cut := range [][2]int{{0, 7}, {7, 8}, {8, 60}, {60, 103}} {
		f := NewTargetSums(0)
		for a := cut[0]; a < cut[1]; a += 4 { // batches of 4 rows
			b := min(a+4, cut[1])
			f.Add(codes[a:b], y[a:b], int64(a-cut[0]), false)
		}
		var back TargetSums
		if b, err := json.Marshal(f); err != nil {
			t.Fatal(err)
		} else if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		total.Merge(&back, int64(cut[0]))
	}
	col, oof := total.Encode("shop", "y", c)
	if col.Kind != Target || !slices.Equal(col.Levels, names) || !col.Null || !slices.Equal(col.Features, []string{"shop:target_mean"}) {
		t.Fatalf("column %+v", col)
	}
	got := make([]float64, len(codes))
	oof.Expand(codes[:50], 0, got[:50])
	oof.Expand(codes[50:], 50, got[50:])
	for r := range codes {
		if want := oofRef(codes, y, r); math.Abs(got[r]-want) > 1e-12 {
			t.Fatalf("row %d: %v, want %v", r, got[r], want)
		}
	}
	// The model's means: every row.
	var all float64
	for _, v := range y {
		all += v
	}
	prior := all / float64(len(y))
	if math.Abs(col.Prior-prior) > 1e-12 {
		t.Fatalf("prior %v, want %v", col.Prior, prior)
	}
	enc, err := NewEncoder(&Spec{Columns: []Column{col}})
	if err != nil {
		t.Fatal(err)
	}
	dst := [][]float64{make([]float64, 3)}
	if unseen := enc.Expand(0, []float64{Code("b"), Code("zz"), NullCode}, dst); unseen != 1 {
		t.Fatalf("unseen %d, want 1", unseen)
	}
	var ls, ln, ns, nn float64
	for i, code := range codes {
		switch code {
		case Code("b"):
			ls, ln = ls+y[i], ln+1
		case NullCode:
			ns, nn = ns+y[i], nn+1
		}
	}
	want := []float64{(ls + Smooth*prior) / (ln + Smooth), prior, (ns + Smooth*prior) / (nn + Smooth)}
	for i := range want {
		if math.Abs(dst[0][i]-want[i]) > 1e-12 {
			t.Fatalf("Expand: %v, want %v", dst[0], want)
		}
	}
	// An indicator of class 0, complemented: the share of class 1.
	cls := NewTargetSums(0)
	cls.Add(codes, ind, 0, true)
	cls.Complement()
	ccol, _ := cls.Encode("shop", "y", c)
	var ones float64
	for _, v := range ind {
		ones += v
	}
	if math.Abs(ccol.Prior-ones/float64(len(ind))) > 1e-12 {
		t.Fatalf("class prior %v, want %v", ccol.Prior, ones/float64(len(ind)))
	}
}

// TestTargetSumsBounded: a file of more levels than the cap tracks the
// first ones; the merge keeps the most frequent; untracked levels read
// as the prior.
func TestTargetSumsBounded(t *testing.T) {
	s := NewTargetSums(3)
	c := NewCounter(0)
	var codes []float64
	for _, l := range strings.Fields("a a b c d d d e") {
		codes = append(codes, c.Add(l))
	}
	s.Add(codes, []float64{1, 1, 2, 3, 4, 4, 4, 5}, 0, false)
	if !s.Full() || s.Rows() != 8 {
		t.Fatalf("full %v rows %d", s.Full(), s.Rows())
	}
	col, _ := s.Encode("k", "y", c)
	if !slices.Equal(col.Levels, []string{"a", "b", "c"}) {
		t.Fatalf("levels %q, want the first three", col.Levels)
	}
	o := NewTargetSums(3)
	o.Add([]float64{Code("d"), Code("d"), Code("d"), Code("e")}, []float64{4, 4, 4, 5}, 0, false)
	m := NewTargetSums(3)
	m.Merge(s, 0)
	m.Merge(o, 8)
	col, _ = m.Encode("k", "y", c)
	// d (3 rows) and a (2) are kept; of b, c and e (1 each) the lowest code.
	third := "b"
	for _, l := range []string{"c", "e"} {
		if Code(l) < Code(third) {
			third = l
		}
	}
	want := []string{"a", "d", third}
	slices.Sort(want)
	if !slices.Equal(col.Levels, want) {
		t.Fatalf("merged levels %q, want %q", col.Levels, want)
	}
}

// TestValidateTarget: a target-encoded column's fields are checked.
func TestValidateTarget(t *testing.T) {
	ok := Column{Source: "s", Kind: Target, Levels: []string{"a", "b"}, Means: []float64{1, 2}, Prior: 1.5, Smooth: Smooth, Folds: Folds, Features: []string{"s:target_mean"}}
	if err := (&Spec{Columns: []Column{ok}}).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mod  func(*Column)
		want string
	}{
		{func(c *Column) { c.Means = c.Means[:1] }, `encoding: column "s": 1 means for 2 levels`},
		{func(c *Column) { c.Means = []float64{1, math.NaN()} }, `encoding: column "s": a mean of NaN`},
		{func(c *Column) { c.Levels = []string{"b", "a"} }, `encoding: column "s": levels not sorted and distinct at "a"`},
		{func(c *Column) { c.Other = true }, `encoding: column "s": a target-encoded column has no (other) level, scale or cyclic features`},
		{func(c *Column) { c.Features = []string{"s"} }, `encoding: column "s": features ["s"], want ["s:target_mean"]`},
	} {
		col := ok
		col.Levels, col.Means = slices.Clone(ok.Levels), slices.Clone(ok.Means)
		c.mod(&col)
		if err := (&Spec{Columns: []Column{col}}).Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
