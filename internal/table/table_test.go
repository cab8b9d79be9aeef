package table

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1.5", 1.5, true}, {" -2e3 ", -2000, true}, {"+7", 7, true}, {"1e400", math.Inf(1), true},
		{"NaN", math.NaN(), true}, {"-Inf", math.Inf(-1), true}, {"infinity", math.Inf(1), true},
		// strconv.ParseFloat reads these; no CSV writer means them.
		{"1_000", 0, false}, {"0x10", 0, false}, {"0x1p4", 0, false}, {"0X1P4", 0, false},
		{"true", 0, false}, {"", 0, false}, {"1,5", 0, false}, {"12abc", 0, false},
		// A number cut short after its decimal point (ErrCut).
		{"1.", 0, false}, {" -3. ", 0, false}, {".", 0, false}, {"1.e5", 100000, true},
	} {
		v, err := ParseNumber(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseNumber(%q): err %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseNumber(%q): %v does not match ErrSyntax", c.in, err)
		}
		if c.ok && !(v == c.want || math.IsNaN(v) && math.IsNaN(c.want)) {
			t.Errorf("ParseNumber(%q) = %v, want %v", c.in, v, c.want)
		}
	}
}

func TestInfer(t *testing.T) {
	of := func(vals ...string) Kind { return Infer(slices.Values(vals)) }
	for _, c := range []struct {
		vals []string
		want Kind
	}{
		{[]string{"1", "2.5", "NA", ""}, Number},
		{[]string{"NULL", ""}, Number},
		{[]string{"true", "false", "NA"}, Bool},
		{[]string{"2024-01-02", "1999-12-31"}, Date},
		{[]string{"1", "true"}, Bool}, // strconv.ParseBool reads 1 and 0, as ingest always did
		{[]string{"2", "true"}, String},
		{[]string{"1_000", "2"}, String},
		{[]string{"x"}, String},
		{[]string{"1", "2."}, Number}, // its reader refuses the row of "2." (ErrCut)
	} {
		if got := of(c.vals...); got != c.want {
			t.Errorf("Infer(%q) = %v, want %v", c.vals, got, c.want)
		}
	}
}

func TestCheckHead(t *testing.T) {
	if err := CheckHead("a.csv", []byte("a,b\r1,2\r3,4\r")); err == nil || !strings.Contains(err.Error(), "a.csv: its lines end in a carriage return alone (CR, classic Mac OS)") {
		t.Errorf("CR-only: %v", err)
	}
	for _, ok := range []string{"a,b\r\n1,2\r\n", "a,b\n1,2\n", "a,b", "a,\"x\ry\"\n1,2\n"} {
		if err := CheckHead("a.csv", []byte(ok)); err != nil {
			t.Errorf("CheckHead(%q): %v", ok, err)
		}
	}
	if err := CheckHead("a.bin", []byte("a\x00b")); err == nil || !strings.Contains(err.Error(), "NUL bytes") {
		t.Errorf("NUL: %v", err)
	}
}

func TestCheckNames(t *testing.T) {
	err := CheckNames("a.csv", []string{"ok", "caf\xe9"}, "")
	if want := `a.csv: the name of column 2 is not valid UTF-8: "caf\xe9" (is the file in another encoding? convert it to UTF-8)`; err == nil || err.Error() != want {
		t.Errorf("invalid UTF-8: %v\nwant %s", err, want)
	}
	if err := CheckNames("a.csv", []string{"a", " "}, " (hint)"); err == nil || err.Error() != "a.csv: the header names no column 2 (hint)" {
		t.Errorf("blank name: %v", err)
	}
	if err := CheckNames("a.csv", []string{"a", "café", "b"}, ""); err != nil {
		t.Errorf("valid names: %v", err)
	}
}

func TestLongName(t *testing.T) {
	long := strings.Repeat("n", MaxName+1)
	for _, c := range []struct {
		head string
		col  int
		ok   bool
	}{
		{"a,b\n1,2\n", 0, false},
		{"a," + long + ",c\n1,2,3\n", 2, true},
		{long + "\r\n", 1, true},
		{"a;" + long, 2, true},
		{"\"a\"," + long + "\n", 0, false}, // after a quote the parser decides
		{"a," + strings.Repeat("n", MaxName) + "\n", 0, false},
		{"a\n" + long + "\n", 0, false}, // the second line is data
	} {
		comma := ','
		if strings.Contains(c.head, ";") {
			comma = ';'
		}
		col, start, n, ok := LongName([]byte(c.head), comma)
		if ok != c.ok || col != c.col || ok && (n != MaxName+1 || c.head[start:start+n] != long) {
			t.Errorf("LongName(%.20q…) = %d, %d, %v; want column %d, %v", c.head, col, n, ok, c.col, c.ok)
		}
	}
}
