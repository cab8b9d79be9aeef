package tabular

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// Format is an output format.
type Format int

// Output formats.
const (
	CSV       Format = iota + 1 // comma-separated, a header row
	Parquet                     // zstd pages, a row group per Write
	JSONLines                   // one JSON object per row
)

// FormatOf returns the format a file name asks for: .csv or .parquet
// (any case).
func FormatOf(name string) (Format, bool) {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".parquet"):
		return Parquet, true
	case strings.HasSuffix(lower, ".csv"):
		return CSV, true
	}
	return 0, false
}

// Column is an output column of values given to Writer.Write as
// float64: a number, or with Labels the index of a label, written as that
// string (a class name).
type Column struct {
	Name   string
	Labels []string
}

// Writer writes rows: the columns kept by a Reader (if any), then named
// float64 or label columns.
type Writer struct {
	format Format
	w      io.Writer
	keep   []string
	cols   []string
	labels [][]string // per column, nil for a number
	// CSV
	csv *csv.Writer
	rec []string
	// JSON Lines
	line bytes.Buffer
	// Parquet
	pw     *pqarrow.FileWriter
	bldr   []array.Builder
	schema *arrow.Schema
}

// NewWriter starts output in format f on w: the columns that r keeps
// (Options.Keep; r may be nil for none), then the float64 columns named
// cols, given to Write.
func NewWriter(w io.Writer, f Format, r *Reader, cols []string) (*Writer, error) {
	cs := make([]Column, len(cols))
	for j, c := range cols {
		cs[j].Name = c
	}
	return NewColumnWriter(w, f, r, cs)
}

// NewColumnWriter is NewWriter with columns that may hold labels: a
// label column is a string column in Parquet, a string in CSV and JSON.
// A value that is not the index of a label is written as an empty
// string (NULL in Parquet).
func NewColumnWriter(w io.Writer, f Format, r *Reader, columns []Column) (*Writer, error) {
	wr := &Writer{format: f, w: w}
	for _, c := range columns {
		wr.cols = append(wr.cols, c.Name)
		wr.labels = append(wr.labels, c.Labels)
	}
	cols := wr.cols
	var keepTypes []arrow.DataType
	if r != nil {
		wr.keep, keepTypes = r.opt.Keep, r.keepType
	}
	switch f {
	case CSV:
		wr.csv = csv.NewWriter(w)
		if err := wr.csv.Write(append(append([]string(nil), wr.keep...), cols...)); err != nil {
			return nil, err
		}
	case Parquet:
		if err := wr.startParquet(keepTypes); err != nil {
			return nil, err
		}
	case JSONLines:
	default:
		return nil, fmt.Errorf("tabular: unknown format %d", f)
	}
	return wr, nil
}

// Write appends rows: b's kept columns (b may be nil when there are none)
// and the float64 columns vals, one slice per column named at NewWriter,
// each as long as the batch.
func (w *Writer) Write(b *Batch, vals [][]float64) error {
	if len(vals) != len(w.cols) {
		return fmt.Errorf("tabular: %d value columns for %d names", len(vals), len(w.cols))
	}
	var keep []arrow.Array
	if b != nil {
		keep = b.keep
	}
	if len(keep) != len(w.keep) {
		return fmt.Errorf("tabular: batch carries %d kept columns, the writer %d", len(keep), len(w.keep))
	}
	rows := 0
	if len(vals) > 0 {
		rows = len(vals[0])
	} else if b != nil {
		rows = b.Rows
	}
	for _, a := range keep {
		if a.Len() != rows {
			return fmt.Errorf("tabular: kept column of %d rows beside %d values", a.Len(), rows)
		}
	}
	switch w.format {
	case CSV:
		return w.writeCSV(keep, vals, rows)
	case JSONLines:
		return w.writeJSON(keep, vals, rows)
	default:
		return w.writeParquet(keep, vals, rows)
	}
}

func (w *Writer) writeCSV(keep []arrow.Array, vals [][]float64, rows int) error {
	for i := range rows {
		w.rec = w.rec[:0]
		for _, a := range keep {
			w.rec = append(w.rec, valueStr(a, i))
		}
		for j, c := range vals {
			if w.labels[j] != nil {
				l, _ := w.label(j, c[i])
				w.rec = append(w.rec, l)
				continue
			}
			w.rec = append(w.rec, strconv.FormatFloat(c[i], 'g', -1, 64))
		}
		if err := w.csv.Write(w.rec); err != nil {
			return err
		}
	}
	return w.csv.Error()
}

// label returns the label of value v in label column j.
func (w *Writer) label(j int, v float64) (string, bool) {
	k := int(v)
	if float64(k) != v || k < 0 || k >= len(w.labels[j]) {
		return "", false
	}
	return w.labels[j][k], true
}

// valueStr formats a kept value for text output: NULL is empty.
func valueStr(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	if s, ok := a.(*array.String); ok {
		return s.Value(i)
	}
	return a.ValueStr(i)
}

func (w *Writer) writeJSON(keep []arrow.Array, vals [][]float64, rows int) error {
	for i := range rows {
		w.line.Reset()
		w.line.WriteByte('{')
		field := func(k int, name string, v any) error {
			if k > 0 {
				w.line.WriteByte(',')
			}
			nb, _ := json.Marshal(name)
			vb, err := json.Marshal(v)
			if err != nil {
				return err
			}
			w.line.Write(nb)
			w.line.WriteByte(':')
			w.line.Write(vb)
			return nil
		}
		k := 0
		for j, a := range keep {
			if err := field(k, w.keep[j], a.GetOneForMarshal(i)); err != nil {
				return fmt.Errorf("kept column %q: %w", w.keep[j], err)
			}
			k++
		}
		for j, c := range vals {
			var v any = c[i]
			if c[i]-c[i] != 0 {
				v = nil // JSON has no NaN or Inf
			} else if w.labels[j] != nil {
				v = nil
				if l, ok := w.label(j, c[i]); ok {
					v = l
				}
			}
			if err := field(k, w.cols[j], v); err != nil {
				return err
			}
			k++
		}
		w.line.WriteString("}\n")
		if _, err := w.w.Write(w.line.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) writeParquet(keep []arrow.Array, vals [][]float64, rows int) error {
	if rows == 0 {
		return nil
	}
	arrs := make([]arrow.Array, 0, len(keep)+len(vals))
	for j, a := range keep {
		if !arrow.TypeEqual(a.DataType(), w.schema.Field(j).Type) {
			return fmt.Errorf("kept column %q has type %s, but %s in the first batch", w.keep[j], a.DataType(), w.schema.Field(j).Type)
		}
		arrs = append(arrs, a)
	}
	for j, c := range vals {
		switch b := w.bldr[j].(type) {
		case *array.Float64Builder:
			b.AppendValues(c, nil)
		case *array.StringBuilder:
			for _, v := range c {
				if l, ok := w.label(j, v); ok {
					b.Append(l)
				} else {
					b.AppendNull()
				}
			}
		}
		arrs = append(arrs, w.bldr[j].NewArray())
	}
	rec := array.NewRecordBatch(w.schema, arrs, int64(rows))
	for _, a := range arrs[len(keep):] {
		a.Release()
	}
	defer rec.Release()
	if err := w.pw.Write(rec); err != nil {
		return fmt.Errorf("write Parquet output: %w", err)
	}
	return nil
}

func (w *Writer) startParquet(keep []arrow.DataType) error {
	fields := make([]arrow.Field, 0, len(w.keep)+len(w.cols))
	for j, t := range keep {
		fields = append(fields, arrow.Field{Name: w.keep[j], Type: t, Nullable: true})
	}
	for j, c := range w.cols {
		if w.labels[j] != nil {
			fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
			w.bldr = append(w.bldr, array.NewStringBuilder(memory.DefaultAllocator))
			continue
		}
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64})
		w.bldr = append(w.bldr, array.NewFloat64Builder(memory.DefaultAllocator))
	}
	w.schema = arrow.NewSchema(fields, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false))
	// Hide any Close method: arrow's file writer closes a sink that has
	// one, and the caller owns w.
	pw, err := pqarrow.NewFileWriter(w.schema, struct{ io.Writer }{w.w}, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return fmt.Errorf("start Parquet output: %w", err)
	}
	w.pw = pw
	return nil
}

// MarkPredictions marks a Parquet output as predictions written by
// falkon-ooc: table.PredictionsKey in its footer's key-value metadata, by
// which the readers that walk a folder skip it. CSV and JSON Lines carry
// no metadata; call it before Close.
func (w *Writer) MarkPredictions() error {
	if w.format != Parquet {
		return nil
	}
	return w.pw.AppendKeyValueMetadata(table.PredictionsKey, table.PredictionsValue)
}

// Close finishes the output (the CSV buffer, the Parquet footer); it does
// not close the underlying writer.
func (w *Writer) Close() error {
	switch w.format {
	case CSV:
		w.csv.Flush()
		return w.csv.Error()
	case Parquet:
		for _, b := range w.bldr {
			b.Release()
		}
		if err := w.pw.Close(); err != nil {
			return fmt.Errorf("finish Parquet output: %w", err)
		}
	}
	return nil
}
