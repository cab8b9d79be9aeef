package ingest

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetWriter writes float64 columns to a Parquet file (zstd pages, one
// row group per Write of at least a few rows), for predictions.
type ParquetWriter struct {
	fw     *pqarrow.FileWriter
	schema *arrow.Schema
	bld    *array.RecordBuilder
}

// NewParquetWriter starts a Parquet file on w with the named float64
// columns.
func NewParquetWriter(w io.Writer, columns []string) (*ParquetWriter, error) {
	fields := make([]arrow.Field, len(columns))
	for i, c := range columns {
		fields[i] = arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64}
	}
	schema := arrow.NewSchema(fields, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false))
	// Hide any Close method: arrow's file writer closes a sink that has
	// one, and the caller owns w.
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("start Parquet output: %w", err)
	}
	return &ParquetWriter{fw: fw, schema: schema, bld: array.NewRecordBuilder(memory.DefaultAllocator, schema)}, nil
}

// Write appends rows given column by column (equal lengths).
func (p *ParquetWriter) Write(cols [][]float64) error {
	for i, c := range cols {
		p.bld.Field(i).(*array.Float64Builder).AppendValues(c, nil)
	}
	rec := p.bld.NewRecordBatch()
	defer rec.Release()
	if err := p.fw.Write(rec); err != nil {
		return fmt.Errorf("write Parquet output: %w", err)
	}
	return nil
}

// Close finishes the file (the footer); it does not close the underlying
// writer.
func (p *ParquetWriter) Close() error {
	p.bld.Release()
	if err := p.fw.Close(); err != nil {
		return fmt.Errorf("finish Parquet output: %w", err)
	}
	return nil
}
