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
