package serve

import (
	"io"
	"strings"
	"testing"

	"golang.org/x/sync/semaphore"
)

// TestDecodeAllocs: decoding a JSON request into a reused item, and
// writing its answer, allocates nothing once the item's buffers have
// grown.
func TestDecodeAllocs(t *testing.T) {
	h, err := New(newLin([]string{"alpha", "beta", "gamma"}, []float64{1, 2, 3}, 0), "A", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	st := h.cur.Load()
	var b strings.Builder
	b.WriteString(`{"rows": [`)
	for i := range 256 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"gamma": 1.25e-3, "alpha": -7, "beta": 0.5}`)
	}
	b.WriteString(`]}`)
	body := b.String()
	rows := strings.NewReader(body)
	cols := strings.NewReader(`{"columns": {"alpha": [1, 2, 3], "beta": [0.5, null, 2], "gamma": [1, 1, 1]}}`)
	it := h.getItem(st)
	budget := semaphore.NewWeighted(1 << 30)
	sc := st.m.NewScorer()
	run := func(r *strings.Reader, rowsWant int) {
		r.Seek(0, io.SeekStart)
		it.rb.reset(3, 1<<20, budget)
		it.body.reset(r, 1<<20)
		it.jr.reset(&it.body)
		if err := it.dc.decodeJSON(&it.jr, &it.rb); err != nil {
			t.Fatal(err)
		}
		if it.rb.n != rowsWant {
			t.Fatalf("%d rows, want %d", it.rb.n, rowsWant)
		}
		it.rows = it.rb.n
		if err := sc.Score(&it.res, it.rb.x, it.rows, false); err != nil {
			t.Fatal(err)
		}
		if err := it.writeJSON(io.Discard, st, st.plans[0], nil, ""); err != nil {
			t.Fatal(err)
		}
		it.rb.release()
	}
	h.opt.Nulls = "zero"
	if st, err = h.newState(st.m, "A"); err != nil {
		t.Fatal(err)
	}
	it.st, it.dc.state = st, st
	run(rows, 256)
	run(cols, 3)
	if n := testing.AllocsPerRun(20, func() { run(rows, 256) }); n != 0 {
		t.Errorf("rows: %v allocations a request", n)
	}
	if n := testing.AllocsPerRun(20, func() { run(cols, 3) }); n != 0 {
		t.Errorf("columns: %v allocations a request", n)
	}
}

// TestDecodeAllocsEncoded: a model with categorical and time features
// decodes, assembles and answers a request without allocating, once
// warm, when its levels are known.
func TestDecodeAllocsEncoded(t *testing.T) {
	h, err := New(newEncLin(t), "A", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	st := h.cur.Load()
	var b strings.Builder
	b.WriteString(`{"rows": [`)
	for i := range 300 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"x": 1.5, "c": "a", "t": "2024-03-04"}, {"c": null, "t": 19800.25, "x": -1}, {"x": 0, "c": 7, "t": 19000}`)
	}
	b.WriteString(`]}`)
	r := strings.NewReader(b.String())
	it := h.getItem(st)
	budget := semaphore.NewWeighted(1 << 30)
	sc := st.m.NewScorer()
	run := func() {
		r.Seek(0, io.SeekStart)
		it.rb.reset(len(st.inputs), 1<<20, budget)
		it.body.reset(r, 1<<20)
		it.jr.reset(&it.body)
		if err := it.dc.decodeJSON(&it.jr, &it.rb); err != nil {
			t.Fatal(err)
		}
		if err := it.assemble(); err != nil {
			t.Fatal(err)
		}
		if it.rows = it.rb.n; it.rows != 900 || len(it.unseen) != 0 {
			t.Fatalf("%d rows, unseen %v", it.rows, it.unseen)
		}
		if err := sc.Score(&it.res, it.x, it.rows, false); err != nil {
			t.Fatal(err)
		}
		if err := it.writeJSON(io.Discard, st, st.plans[0], nil, ""); err != nil {
			t.Fatal(err)
		}
		it.rb.release()
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations a request", n)
	}
}
