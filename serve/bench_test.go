package serve

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
)

// benchModel is a Gaussian regression model with m random centres in d
// features.
func benchModel(b *testing.B, m, d int) Model {
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(n int, s float64) []float64 {
		a := make([]float64, n)
		for i := range a {
			a[i] = s * rng.NormFloat64()
		}
		return a
	}
	feats := make([]string, d)
	for j := range feats {
		feats[j] = "x" + strconv.Itoa(j)
	}
	mod, err := model.New(model.Params{
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(float64(d))}, Precision: kernel.Float64,
		Task: model.TaskRegression, Features: feats, Targets: []string{"y"}, FeatureMean: make([]float64, d), FeatureStd: ones(d),
		TargetMean: []float64{0}, M: m, D: d, K: 1, Centers: rnd(m*d, 1), Alpha: rnd(m, 0.01),
	})
	if err != nil {
		b.Fatal(err)
	}
	fm, err := FromModel(mod)
	if err != nil {
		b.Fatal(err)
	}
	return fm
}

func jsonRows(rows, d int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	buf.WriteString(`{"rows":[`)
	for i := range rows {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('{')
		for j := range d {
			if j > 0 {
				buf.WriteByte(',')
			}
			fmt.Fprintf(&buf, `"x%d":%s`, j, strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64))
		}
		buf.WriteByte('}')
	}
	buf.WriteString("]}")
	return buf.Bytes()
}

// BenchmarkServe is one client's requests of 1 and 256 rows through
// HTTP on loopback (M = 2000, d = 28), and the same rows through the
// Predictor in process.
func BenchmarkServe(b *testing.B) {
	const m, d = 2000, 28
	fm := benchModel(b, m, d)
	h, err := New(fm, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, rows := range []int{1, 256} {
		body := jsonRows(rows, d)
		b.Run(fmt.Sprintf("http/rows=%d", rows), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.Post(srv.URL+"/v1/predict", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.Status)
				}
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("decode/rows=%d", rows), func(b *testing.B) {
			st := h.cur.Load()
			it := h.getItem(st)
			r := bytes.NewReader(body)
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(body)
				it.rb.reset(d, 1<<20, h.budget)
				it.body.reset(r, 1<<30)
				it.jr.reset(&it.body)
				if err := it.dc.decodeJSON(&it.jr, &it.rb); err != nil {
					b.Fatal(err)
				}
				it.rb.release()
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("predictor/rows=%d", rows), func(b *testing.B) {
			sc := fm.NewScorer()
			x := make([]float64, rows*d)
			for i := range x {
				x[i] = float64(i%7) / 7
			}
			var res Result
			b.ReportAllocs()
			for b.Loop() {
				if err := sc.Score(&res, x, rows, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func ones(n int) []float64 {
	a := make([]float64, n)
	for i := range a {
		a[i] = 1
	}
	return a
}

// BenchmarkDecodeJSON: decoding 256 rows of 28 features (one reused
// item, no HTTP), in the rows and columns forms, for numbers of 17
// significant digits (the worst case, strconv.FormatFloat's shortest
// form of random doubles), of 6 decimals and small integers; ns/value
// is the cost of one feature value, its key included in the rows form.
func BenchmarkDecodeJSON(b *testing.B) {
	const rows, d = 256, 28
	fm := benchModel(b, 50, d)
	h, err := New(fm, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	styles := []struct {
		name string
		num  func() string
	}{
		{"digits=17", func() string { return strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64) }},
		{"decimals=6", func() string { return strconv.FormatFloat(rng.NormFloat64(), 'f', 6, 64) }},
		{"integers", func() string { return strconv.Itoa(rng.IntN(2000) - 1000) }},
	}
	for _, s := range styles {
		var rb, cb bytes.Buffer
		rb.WriteString(`{"rows":[`)
		vals := make([][]string, d)
		for i := range rows {
			if i > 0 {
				rb.WriteByte(',')
			}
			rb.WriteByte('{')
			for j := range d {
				if j > 0 {
					rb.WriteByte(',')
				}
				v := s.num()
				vals[j] = append(vals[j], v)
				fmt.Fprintf(&rb, `"x%d":%s`, j, v)
			}
			rb.WriteByte('}')
		}
		rb.WriteString("]}")
		cb.WriteString(`{"columns":{`)
		for j := range d {
			if j > 0 {
				cb.WriteByte(',')
			}
			fmt.Fprintf(&cb, `"x%d":[`, j)
			for i, v := range vals[j] {
				if i > 0 {
					cb.WriteByte(',')
				}
				cb.WriteString(v)
			}
			cb.WriteByte(']')
		}
		cb.WriteString("}}")
		for _, form := range []struct {
			name string
			body []byte
		}{{"rows", rb.Bytes()}, {"columns", cb.Bytes()}} {
			b.Run(s.name+"/"+form.name, func(b *testing.B) {
				st := h.cur.Load()
				it := h.getItem(st)
				r := bytes.NewReader(form.body)
				b.ReportAllocs()
				b.SetBytes(int64(len(form.body)))
				for b.Loop() {
					r.Reset(form.body)
					it.rb.reset(d, 1<<20, h.budget)
					it.body.reset(r, 1<<30)
					it.jr.reset(&it.body)
					if err := it.dc.decodeJSON(&it.jr, &it.rb); err != nil {
						b.Fatal(err)
					}
					it.rb.release()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*d), "ns/value")
			})
		}
	}
}
