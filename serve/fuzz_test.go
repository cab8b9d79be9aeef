package serve

import (
	"bytes"
	"errors"
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
