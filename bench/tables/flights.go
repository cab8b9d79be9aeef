package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/falkon-ooc/falkon-ooc/metrics"
)

// teFolds and teSmooth are the out-of-fold target encoding's folds and
// prior weight: a level's value is (sum + teSmooth·mean)/(n + teSmooth)
// over the training rows of the other folds.
const (
	teFolds  = 5
	teSmooth = 20.0
)

// flightRows holds the flights table's columns.
type flightRows struct {
	date                []int64 // microseconds since 1970
	delay, distance     []float64
	origin, destination []string
}

func (r *flightRows) len() int { return len(r.delay) }

func readFlights(path string) *flightRows {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		log.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		log.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer tbl.Release()
	r := &flightRows{}
	col := func(name string) *arrow.Chunked {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			log.Fatalf("%s: no column %q", path, name)
		}
		return tbl.Column(idx[0]).Data()
	}
	for _, c := range col("date").Chunks() {
		a := c.(*array.Timestamp)
		unit := a.DataType().(*arrow.TimestampType).Unit
		for i := range a.Len() {
			v := int64(a.Value(i))
			switch unit {
			case arrow.Second:
				v *= 1e6
			case arrow.Millisecond:
				v *= 1e3
			case arrow.Nanosecond:
				v /= 1e3
			}
			r.date = append(r.date, v)
		}
	}
	num := func(name string) (out []float64) {
		for _, c := range col(name).Chunks() {
			for i := range c.Len() {
				switch a := c.(type) {
				case *array.Int64:
					out = append(out, float64(a.Value(i)))
				case *array.Int32:
					out = append(out, float64(a.Value(i)))
				case *array.Float64:
					out = append(out, a.Value(i))
				default:
					log.Fatalf("column %s: type %s", name, c.DataType())
				}
			}
		}
		return out
	}
	str := func(name string) (out []string) {
		for _, c := range col(name).Chunks() {
			for i := range c.Len() {
				switch a := c.(type) {
				case *array.String:
					out = append(out, a.Value(i))
				case *array.LargeString:
					out = append(out, a.Value(i))
				case *array.Dictionary:
					out = append(out, a.Dictionary().(*array.String).Value(a.GetValueIndex(i)))
				default:
					log.Fatalf("column %s: type %s", name, c.DataType())
				}
			}
		}
		return out
	}
	r.delay, r.distance = num("delay"), num("distance")
	r.origin, r.destination = str("origin"), str("destination")
	return r
}

func (r *flightRows) take(idx []int) *flightRows {
	o := &flightRows{}
	for _, i := range idx {
		o.date = append(o.date, r.date[i])
		o.delay = append(o.delay, r.delay[i])
		o.distance = append(o.distance, r.distance[i])
		o.origin = append(o.origin, r.origin[i])
		o.destination = append(o.destination, r.destination[i])
	}
	return o
}

// targetEncode returns the out-of-fold target encoding of the training
// levels (row i in fold i mod teFolds) and the encoding of the test
// levels from every training row (an unseen level gets the mean).
func targetEncode(train []string, y []float64, test []string) (tr, te []float64) {
	type acc struct {
		n [teFolds]float64
		s [teFolds]float64
	}
	lv := map[string]*acc{}
	var fn, fs [teFolds]float64
	for i, l := range train {
		a := lv[l]
		if a == nil {
			a = &acc{}
			lv[l] = a
		}
		f := i % teFolds
		a.n[f]++
		a.s[f] += y[i]
		fn[f]++
		fs[f] += y[i]
	}
	sum := func(v [teFolds]float64, skip int) (t float64) {
		for f, x := range v {
			if f != skip {
				t += x
			}
		}
		return t
	}
	for i, l := range train {
		a, f := lv[l], i%teFolds
		mean := sum(fs, f) / sum(fn, f)
		tr = append(tr, (sum(a.s, f)+teSmooth*mean)/(sum(a.n, f)+teSmooth))
	}
	mean := sum(fs, -1) / sum(fn, -1)
	for _, l := range test {
		a := lv[l]
		if a == nil {
			te = append(te, mean)
			continue
		}
		te = append(te, (sum(a.s, -1)+teSmooth*mean)/(sum(a.n, -1)+teSmooth))
	}
	return tr, te
}

func writeFlights(path string, r *flightRows, ote, dte []float64) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "date", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "delay", Type: arrow.PrimitiveTypes.Float64},
		{Name: "distance", Type: arrow.PrimitiveTypes.Float64},
		{Name: "origin", Type: arrow.BinaryTypes.String},
		{Name: "destination", Type: arrow.BinaryTypes.String},
		{Name: "origin_te", Type: arrow.PrimitiveTypes.Float64},
		{Name: "destination_te", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range r.len() {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(r.date[i]))
		b.Field(1).(*array.Float64Builder).Append(r.delay[i])
		b.Field(2).(*array.Float64Builder).Append(r.distance[i])
		b.Field(3).(*array.StringBuilder).Append(r.origin[i])
		b.Field(4).(*array.StringBuilder).Append(r.destination[i])
		b.Field(5).(*array.Float64Builder).Append(ote[i])
		b.Field(6).(*array.Float64Builder).Append(dte[i])
	}
	writeRecord(path, schema, b)
}

func writeRecord(path string, schema *arrow.Schema, b *array.RecordBuilder) {
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	// WriteTable closes f.
	if err := pqarrow.WriteTable(tbl, f, 1<<18, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		log.Fatal(err)
	}
}

// splitFlights writes flights-train.parquet (80 % of the rows, shuffled)
// and flights-test.parquet (the rest), and flights-sub-train.parquet and
// flights-sub-test.parquet (the first sub and sub/4 rows of each), each
// with the out-of-fold target encodings origin_te and destination_te of
// delay computed on its training part.
func splitFlights(src, dir string, sub int) {
	all := readFlights(src)
	rng := rand.New(rand.NewPCG(44, 2))
	perm := rng.Perm(all.len())
	ntrain := all.len() * 4 / 5
	train, test := all.take(perm[:ntrain]), all.take(perm[ntrain:])
	write := func(name string, tr, te *flightRows) {
		otr, ote := targetEncode(tr.origin, tr.delay, te.origin)
		dtr, dte := targetEncode(tr.destination, tr.delay, te.destination)
		writeFlights(filepath.Join(dir, name+"-train.parquet"), tr, otr, dtr)
		writeFlights(filepath.Join(dir, name+"-test.parquet"), te, ote, dte)
	}
	write("flights", train, test)
	if sub > 0 {
		first := func(n int) []int {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			return idx
		}
		write("flights-sub", train.take(first(sub)), test.take(first(sub/4)))
	}
}

// writeShops writes shops-train.csv (n rows) and shops-test.csv (n/4): a
// string column shop of levels levels drawn by a Zipf law (s = 1.1), each
// with its own effect ~ N(0, 0.5²), x1, x2 ~ N(0, 1),
// y = sin(x1) + x2/2 + effect(shop) + ε, ε ~ N(0, 0.1²), and shop_te, the
// out-of-fold target encoding of y (test rows: from every training row).
func writeShops(dir string, n, levels int) {
	rng := rand.New(rand.NewPCG(44, 3))
	effect := make([]float64, levels)
	for i := range effect {
		effect[i] = 0.5 * rng.NormFloat64()
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(44, 4)), 1.1, 1, uint64(levels-1))
	type row struct {
		shop   string
		x1, x2 float64
		y      float64
	}
	gen := func(m int) (rows []row) {
		for range m {
			k := int(z.Uint64())
			x1, x2 := rng.NormFloat64(), rng.NormFloat64()
			rows = append(rows, row{fmt.Sprintf("s%04d", k), x1, x2, math.Sin(x1) + x2/2 + effect[k] + 0.1*rng.NormFloat64()})
		}
		return rows
	}
	train, test := gen(n), gen(n/4)
	var ls, lt []string
	var y []float64
	for _, r := range train {
		ls, y = append(ls, r.shop), append(y, r.y)
	}
	for _, r := range test {
		lt = append(lt, r.shop)
	}
	tr, te := targetEncode(ls, y, lt)
	for _, p := range []struct {
		name string
		rows []row
		te   []float64
	}{{"shops-train.csv", train, tr}, {"shops-test.csv", test, te}} {
		f, w := create(filepath.Join(dir, p.name))
		fmt.Fprintln(w, "shop,x1,x2,shop_te,y")
		for i, r := range p.rows {
			fmt.Fprintf(w, "%s,%.6f,%.6f,%.6f,%.6f\n", r.shop, r.x1, r.x2, p.te[i], r.y)
		}
		done(f, w)
	}
}

// scoreAUC prints the AUC of the column score of a CSV of predictions for
// the label "column label > over", and the RMSE of score against label.
func scoreAUC(path, score, label string, over float64) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	head, err := r.Read()
	if err != nil {
		log.Fatal(err)
	}
	si, li := slices.Index(head, score), slices.Index(head, label)
	if si < 0 || li < 0 {
		log.Fatalf("%s: columns %v, want %s and %s", path, head, score, label)
	}
	var s []float64
	var yb []bool
	var se float64
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		p, err1 := strconv.ParseFloat(rec[si], 64)
		y, err2 := strconv.ParseFloat(rec[li], 64)
		if err1 != nil || err2 != nil {
			log.Fatalf("%s: row %d: %v %v", path, len(s)+2, err1, err2)
		}
		s = append(s, p)
		se += (p - y) * (p - y)
		yb = append(yb, y > over)
	}
	fmt.Printf("rows %d  RMSE %.4f  AUC(%s > %g) %.4f\n", len(s), math.Sqrt(se/float64(len(s))), label, over, metrics.AUC(s, yb))
}
