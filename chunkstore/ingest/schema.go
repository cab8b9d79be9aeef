package ingest

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ColumnNames returns the column names of the first data file among
// inputs (files, directories or globs, as Run takes them), in file order.
// cfg supplies the text options (NoHeader, Columns); other fields are
// ignored. It reads only the file's schema (Parquet footer, or the first
// block of a text file).
func ColumnNames(inputs []string, cfg Config) ([]string, error) {
	files, _, err := expandInputs(inputs)
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, mem: memory.DefaultAllocator}
	fi, err := s.inspect(files[0])
	if err != nil {
		return nil, err
	}
	return fi.names, nil
}
