package serve

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// FuzzDecode: any body, JSON or Arrow, is decoded or refused with a
// RequestError; never a panic.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"rows": [{"a": 1, "b": 2}]}`, `{"columns": {"a": [1], "b": [null]}}`, `{"rows": [{"a": "\u00e9", "b": 1e999}]}`,
		`{"rows": [{"a": -0.5e+3, "b": 2}, {"b": 1, "a": 0}]}`, `[`, `{"rows":[{"\ud800": 1}]}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("\xff\xff\xff\xff\x10\x00\x00\x00"), true)
	h, err := New(newLin([]string{"a", "b"}, []float64{1, 2}, 0), "A", Options{Nulls: "mean", MaxRows: 1000, MaxMemory: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	defer h.Close()
	f.Fuzz(func(t *testing.T, body []byte, arrow bool) {
		it := h.getItem(h.cur.Load())
		defer h.putItem(it)
		it.body.reset(bytes.NewReader(body), 1<<16)
		var err error
		if arrow {
			err = it.dc.decodeArrow(&it.body, &it.rb, 1<<16)
		} else {
			it.jr.reset(&it.body)
			err = it.dc.decodeJSON(&it.jr, &it.rb)
		}
		var re *RequestError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("%T %v", err, err)
		}
		if err == nil && len(it.rb.x) != it.rb.n*2 {
			t.Fatalf("%d values for %d rows", len(it.rb.x), it.rb.n)
		}
	})
}

// FuzzParseNumber: parseNumber accepts exactly JSON's numbers and reads
// each as strconv.ParseFloat does, bit for bit (±Inf beyond float64's
// range).
func FuzzParseNumber(f *testing.F) {
	for _, s := range numberCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkNumber(t, s)
	})
}

var numberCases = []string{
	"0", "-0", "1", "-7", "0.5", "1e22", "1e23", "-1e-22", "1e-23", "9007199254740992", "9007199254740993",
	"18014398509481985", "0.1", "0.30000000000000004", "123456789012345678901234", "1234567890123456789.5",
	"0.0000000000000000000000000012345", "1e-400", "1e400", "-1.5e-7", "2.2250738585072014e-308", "4.9e-324",
	"1.7976931348623157e308", "1.7976931348623159e308", "12.5E+3", "100000000000000000000000e-20",
	"0.99999999999999999999", "-3.14159", "2.718281828459045", "01", "1.", ".5", "-", "1e", "1e+", "+1", "1.5e3.2",
	"0x10", "1_000", "Infinity", "NaN", "", "--1", "1ee5", "00", "-01.5", "1e0000000000000000000001",
}

// checkNumber holds parseNumber to JSON's grammar and strconv.
func checkNumber(t *testing.T, s string) {
	t.Helper()
	got, ok := parseNumber([]byte(s))
	if ok != validNumber([]byte(s)) {
		t.Fatalf("parseNumber(%q) ok = %v, JSON's grammar says %v", s, ok, !ok)
	}
	if !ok {
		return
	}
	want, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		t.Fatalf("strconv refuses %q: %v", s, err)
	}
	if math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("parseNumber(%q) = %v (%#x), strconv %v (%#x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
	}
}

// TestParseNumber: edge cases of the fast path (2⁵³, 10²², signs,
// leading zeros of fractions, more than 19 digits) and of the grammar,
// and a million random numbers of the forms clients write.
func TestParseNumber(t *testing.T) {
	for _, s := range numberCases {
		checkNumber(t, s)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	for range n {
		v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		var s string
		switch rng.IntN(4) {
		case 0:
			s = strconv.FormatFloat(v, 'g', -1, 64)
		case 1:
			s = strconv.FormatFloat(v, 'f', rng.IntN(12), 64)
		case 2:
			s = strconv.FormatFloat(v, 'e', rng.IntN(20), 64)
		default:
			s = strconv.FormatInt(rng.Int64N(1<<62)-1<<61, 10)
		}
		checkNumber(t, s)
	}
}
