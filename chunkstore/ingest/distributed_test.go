package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/storecmp"
)

// roundTrip sends v through JSON into a new *T, as a task's description
// and result travel between processes.
func roundTrip[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// distributed runs the steps of a distributed ingest in this process, the
// tasks in reverse order, everything a task receives or returns through
// JSON.
func distributed(t *testing.T, inputs []string, cfg Config, parts int) (*Result, error) {
	t.Helper()
	ctx := context.Background()
	p, err := NewPlan(ctx, inputs, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	wp := roundTrip(t, p)
	var sums []*FileSummary
	for i := len(p.Files) - 1; i >= 0; i-- {
		s, err := wp.ReadFile(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, roundTrip(t, s))
	}
	lay, err := p.Layout(ctx, sums)
	if err != nil {
		return nil, err
	}
	parts = lay.Parts(parts)
	wl := roundTrip(t, lay)
	ps := make([]*chunkstore.Part, parts)
	for k := parts - 1; k >= 0; k-- {
		part, err := wp.WritePart(ctx, wl, k, parts)
		if err != nil {
			t.Fatal(err)
		}
		ps[k] = roundTrip(t, part)
	}
	return p.Finish(ctx, lay, ps)
}

// sameIngest ingests inputs with Run and distributed, and checks that the
// stores have the same content and the Results agree.
func sameIngest(t *testing.T, inputs []string, cfg Config, parts int) *Result {
	t.Helper()
	dir := t.TempDir()
	cfg.Out = filepath.Join(dir, "local")
	want, err := Run(context.Background(), inputs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Out = filepath.Join(dir, "dist")
	got, err := distributed(t, inputs, cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := storecmp.Diff(filepath.Join(dir, "local"), cfg.Out); err != nil || d != "" {
		t.Fatalf("parts %d: %v %s", parts, err, d)
	}
	for _, r := range []*Result{want, got} {
		r.Seconds, r.BytesOut, r.Memory = 0, 0, Memory{}
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Fatalf("results differ:\n%s\n%s", a, b)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
	return got
}

// TestDistributedHive: a Hive folder of Parquet files (a numeric and a
// text key), a string target read as class labels and an identifier
// column, in chunks that span files and parts.
func TestDistributedHive(t *testing.T) {
	for _, parts := range []int{1, 3, 7} {
		res := sameIngest(t, []string{interop + "hive/data"}, Config{Targets: []string{"color"}, ChunkRows: 37}, parts)
		if got := report(res.Columns); !strings.Contains(got, "id:skipped(identifier)") || !strings.Contains(got, "region:skipped(partition)") {
			t.Fatalf("report %s", got)
		}
	}
}

// TestDistributedText: CSV files of unequal lengths, one whose rows are
// all dropped, a constant column, a row identifier and a weight column.
func TestDistributedText(t *testing.T) {
	dir := t.TempDir()
	var ins []string
	row := 0
	for f, n := range []int{50, 3, 4, 0, 61} {
		in := filepath.Join(dir, fmt.Sprintf("f%d.csv", f))
		writeText(t, in, "row_id,x,c,w,y", max(n, 2), func(i int) string {
			row++
			x := fmt.Sprint(float64((row*37)%101) / 7)
			if n == 0 || (row%9 == 4) {
				x = "NA"
			}
			return fmt.Sprintf("%d,%s,5,%d,%d", row, x, row%4, row%3)
		})
		ins = append(ins, in)
	}
	for _, parts := range []int{1, 4, 20} {
		res := sameIngest(t, ins, Config{Targets: []string{"y"}, Weight: "w", Nulls: "drop", ChunkRows: 8}, parts)
		if got := report(res.Columns); got != "row_id:skipped(identifier) x:feature c:skipped(constant) w:weight y:target" || res.Dropped == 0 {
			t.Fatalf("report %s, dropped %d", got, res.Dropped)
		}
	}
}

// TestDistributedCategorical: a string column whose levels differ from
// file to file (more than MaxLevels of them, NULLs among them), an integer
// column named categorical and a date with time features, in CSV files of
// unequal lengths with dropped rows: the distributed store has Run's
// levels, encoding and chunks.
func TestDistributedCategorical(t *testing.T) {
	dir := t.TempDir()
	var ins []string
	row := 0
	for f, n := range []int{40, 3, 70, 1} {
		in := filepath.Join(dir, fmt.Sprintf("f%d.csv", f))
		writeText(t, in, "shop,kind,day,x,y", n, func(i int) string {
			row++
			shop := fmt.Sprintf("s%d", (row*(f+2))%(9+4*f))
			if row%11 == 3 {
				shop = ""
			}
			x := fmt.Sprint(row % 13)
			if row%17 == 5 {
				x = "NaN"
			}
			return fmt.Sprintf("%s,%d,2024-0%d-%02d,%s,%d", shop, row%4, 1+row%9, 1+row%28, x, row%5)
		})
		ins = append(ins, in)
	}
	cfg := Config{Targets: []string{"y"}, Categorical: []string{"kind"}, MaxLevels: 6, AboveMaxLevels: "onehot",
		TimeFeatures: []string{"dow", "doy"}, Nulls: "drop", ChunkRows: 16}
	for _, parts := range []int{1, 3, 8} {
		res := sameIngest(t, ins, cfg, parts)
		want := "shop=(other)"
		if !slices.Contains(res.Features, want) || !slices.Contains(res.Features, "shop=(null)") ||
			!slices.Contains(res.Features, "kind=3") || !slices.Contains(res.Features, "day:doy_cos") || res.Dropped == 0 {
			t.Fatalf("parts %d: features %q, dropped %d", parts, res.Features, res.Dropped)
		}
		if got := report(res.Columns); got != "shop:feature kind:feature day:feature x:feature y:target" {
			t.Fatalf("report %s", got)
		}
	}
}

// TestDistributedErrors: every error comes with Run's message.
func TestDistributedErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, header string, rows int, row func(i int) string) string {
		p := filepath.Join(dir, name)
		writeText(t, p, header, rows, row)
		return p
	}
	good := write("good.csv", "x,w,y", 20, func(i int) string { return fmt.Sprintf("%d,1,%d", i%7, i%2) })
	negative := write("neg.csv", "x,w,y", 20, func(i int) string {
		if i == 13 {
			return "1,-2,0"
		}
		return fmt.Sprintf("%d,1,%d", i%5, i%2)
	})
	nan := write("nan.csv", "x,w,y", 20, func(i int) string {
		if i == 17 {
			return "NaN,1,0"
		}
		return fmt.Sprintf("%d,1,%d", i%5, i%2)
	})
	labels := func(name string, from int) string {
		return write(name, "x,kind", 60, func(i int) string { return fmt.Sprintf("%d,k%03d", i%5, from+i) })
	}
	l1, l2 := labels("l1.csv", 0), labels("l2.csv", 60)
	missing := write("missing.csv", "x,y", 5, func(i int) string { return fmt.Sprintf("%d,%d", i, i) })
	stray := write("stray.csv", "x,y", 50, func(i int) string {
		if i == 30 {
			return "3 m,1"
		}
		return fmt.Sprintf("%d,%d", i%6, i%2)
	})
	constant := write("const.csv", "x,y", 5, func(i int) string { return "3,1" })
	cases := []struct {
		name   string
		inputs []string
		cfg    Config
	}{
		{"negative weight", []string{good, negative, good}, Config{Targets: []string{"y"}, Weight: "w"}},
		{"NaN", []string{good, nan}, Config{Targets: []string{"y"}}},
		{"too many labels", []string{l1, l2}, Config{Targets: []string{"kind"}, Workers: 1}},
		{"missing column", []string{good, missing}, Config{Targets: []string{"y"}, Weight: "w"}},
		{"no feature left", []string{constant}, Config{Targets: []string{"y"}}},
		{"stray non-number", []string{good, stray}, Config{Targets: []string{"y"}}},
		{"nulls", []string{good}, Config{Targets: []string{"y"}, Nulls: "sometimes"}},
	}
	for i, c := range cases {
		c.cfg.Out = filepath.Join(dir, fmt.Sprintf("local%d", i))
		_, want := Run(context.Background(), c.inputs, c.cfg)
		c.cfg.Out = filepath.Join(dir, fmt.Sprintf("dist%d", i))
		_, got := distributed(t, c.inputs, c.cfg, 2)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: got %v\nwant %v", c.name, got, want)
		}
		var wv, gv *ValueError
		if errors.As(want, &wv) != errors.As(got, &gv) {
			t.Errorf("%s: got a %T, want a %T", c.name, got, want)
		}
		if _, err := os.Stat(c.cfg.Out); err == nil {
			t.Errorf("%s: a store at %s", c.name, c.cfg.Out)
		}
	}
	for _, c := range []struct {
		cfg  Config
		in   string
		want string
	}{
		{Config{Targets: []string{"y"}, Nulls: "mean"}, good, "--nulls mean is not supported by a distributed ingest; use --nulls drop or error, or falkon-ooc ingest"},
		{Config{Targets: []string{"y"}}, "-", "standard input (-) cannot be read by a distributed ingest; give files"},
	} {
		c.cfg.Out = filepath.Join(dir, "x")
		if _, err := NewPlan(context.Background(), []string{c.in}, c.cfg); err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}
