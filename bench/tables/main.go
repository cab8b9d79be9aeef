// Command tables writes the synthetic inputs of bench/TABLES.md under
// -dir (not the repository):
//
//   - region-train.csv, region-test.csv: a 5-level string column region,
//     x1 and x2 ~ N(0, 1), y = sin(x1) + x2/2 + 0.5·[region = e] + ε,
//     ε ~ N(0, 0.1²);
//
//   - cycle-train.parquet, cycle-test.parquet: a timestamp ts uniform over
//     2024 (second resolution), x ~ N(0, 1),
//     y = sin(x) + sin(2π·(hour of day)/24) + ε;
//
//   - distinct.csv: a string column token with -distinct distinct values
//     (one per row), x and y, for ingest's memory on a column of many
//     levels.
//
//   - with -flights FILE: flights-train.parquet (80 % of the rows,
//     shuffled), flights-test.parquet, and flights-sub-{train,test}.parquet
//     (the first -sub and -sub/4 rows of each), each with origin_te and
//     destination_te, the out-of-fold target encodings of delay (5 folds,
//     prior weight 20) computed on its training part;
//
//   - with -shops N: shops-train.csv (N rows) and shops-test.csv (N/4): a
//     string column shop of -levels levels drawn by a Zipf law, each with
//     its own effect ~ N(0, 0.5²), x1, x2, and shop_te, the out-of-fold
//     target encoding of y;
//
//   - with -auc PRED.csv: the RMSE and the AUC of a score column for the
//     label "column > -over" in a CSV of predictions;
//
//   - with -same STORE -ref FILE.csv: the largest difference between a
//     feature of the store (-feature, default shop:target_mean, ingest's
//     target encoding) and a column of the CSV file it was ingested from
//     (-column, default shop_te, the encoding this command computes by
//     the same definition).
//
//     go run ./bench/tables -dir /tmp/tables
//
// It is not part of the test suite.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func main() {
	dir := flag.String("dir", "", "directory to write the inputs in (required)")
	rows := flag.Int("rows", 20000, "training rows of the region and cycle tables (a quarter as many test rows)")
	distinct := flag.Int("distinct", 1_000_000, "rows (and distinct tokens) of distinct.csv")
	flights := flag.String("flights", "", "split this flights Parquet file into flights-{train,test}.parquet and flights-sub-{train,test}.parquet under -dir (and write nothing else)")
	sub := flag.Int("sub", 200000, "with -flights: training rows of flights-sub-train.parquet (a quarter as many test rows)")
	shops := flag.Int("shops", 0, "write shops-{train,test}.csv of this many training rows under -dir (and write nothing else)")
	levels := flag.Int("levels", 2000, "with -shops: levels of the shop column")
	auc := flag.String("auc", "", "print the RMSE and AUC of -score against -label > -over in this CSV of predictions (and write nothing)")
	score := flag.String("score", "delay_pred", "with -auc: the score column")
	label := flag.String("label", "delay", "with -auc: the label column")
	over := flag.Float64("over", 15, "with -auc: a row is positive when its label is above this")
	same := flag.String("same", "", "print the largest difference between -feature of this store and -column of the CSV file -ref it was ingested from (and write nothing)")
	feature := flag.String("feature", "shop:target_mean", "with -same: the store's feature")
	ref := flag.String("ref", "", "with -same: the CSV file")
	column := flag.String("column", "shop_te", "with -same: the CSV file's column")
	flag.Parse()
	if *same != "" {
		sameValues(*same, *feature, *ref, *column)
		return
	}
	if *auc != "" {
		scoreAUC(*auc, *score, *label, *over)
		return
	}
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	switch {
	case *flights != "":
		splitFlights(*flights, *dir, *sub)
		return
	case *shops > 0:
		writeShops(*dir, *shops, *levels)
		return
	}
	rng := rand.New(rand.NewPCG(44, 1))
	for _, part := range []struct {
		name string
		n    int
	}{{"train", *rows}, {"test", *rows / 4}} {
		writeRegion(filepath.Join(*dir, "region-"+part.name+".csv"), part.n, rng)
		writeCycle(filepath.Join(*dir, "cycle-"+part.name+".parquet"), part.n, rng)
	}
	writeDistinct(filepath.Join(*dir, "distinct.csv"), *distinct, rng)
}

func create(path string) (*os.File, *bufio.Writer) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	return f, bufio.NewWriter(f)
}

func done(f *os.File, w *bufio.Writer) {
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func writeRegion(path string, n int, rng *rand.Rand) {
	f, w := create(path)
	fmt.Fprintln(w, "region,x1,x2,y")
	for range n {
		r := string(rune('a' + rng.IntN(5)))
		x1, x2 := rng.NormFloat64(), rng.NormFloat64()
		y := math.Sin(x1) + x2/2 + 0.1*rng.NormFloat64()
		if r == "e" {
			y += 0.5
		}
		fmt.Fprintf(w, "%s,%.6f,%.6f,%.6f\n", r, x1, x2, y)
	}
	done(f, w)
}

func writeCycle(path string, n int, rng *rand.Rand) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	start := int64(1704067200) // 2024-01-01 00:00:00 UTC
	for range n {
		ts := start + rng.Int64N(366*86400)
		x := rng.NormFloat64()
		hour := float64(ts%86400) / 3600
		y := math.Sin(x) + math.Sin(2*math.Pi*hour/24) + 0.1*rng.NormFloat64()
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
		b.Field(1).(*array.Float64Builder).Append(x)
		b.Field(2).(*array.Float64Builder).Append(y)
	}
	rec := b.NewRecord()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pqarrow.WriteTable(tbl, f, 1<<20, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		log.Fatal(err)
	}
}

func writeDistinct(path string, n int, rng *rand.Rand) {
	f, w := create(path)
	fmt.Fprintln(w, "token,x,y")
	for i := range n {
		x := rng.NormFloat64()
		fmt.Fprintf(w, "tok-%08d-%016x,%.6f,%.6f\n", i, rng.Uint64(), x, math.Sin(x))
	}
	done(f, w)
}
