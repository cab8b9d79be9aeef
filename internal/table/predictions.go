package table

import (
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PredictionsKey is the key of the Parquet footer's key-value metadata
// that marks a file of predictions written by falkon-ooc (tabular's
// writer, for falkon-ooc predict and falkon-ooc-beam predict), with
// PredictionsValue as its value. Readers that walk a folder skip such
// files (IsPredictions), so that predictions written beside the inputs
// are not read back as data.
const (
	PredictionsKey   = "falkon-ooc.output"
	PredictionsValue = "predictions"
)

// IsPredictions reports whether path is a regular Parquet file whose
// footer carries PredictionsKey with PredictionsValue. Anything else,
// including a damaged file, is not (its reader reports the damage).
func IsPredictions(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return IsPredictionsAt(f, st.Size())
}

// IsPredictionsAt is IsPredictions of the size bytes that r holds (an
// object in object storage, read by range).
func IsPredictionsAt(r io.ReaderAt, size int64) bool {
	if size < 12 {
		return false
	}
	var tail [4]byte
	if _, err := r.ReadAt(tail[:], size-4); err != nil || string(tail[:]) != "PAR1" {
		return false
	}
	rdr, err := OpenParquetFrom("", io.NewSectionReader(r, 0, size), size, 0, memory.DefaultAllocator)
	if err != nil {
		return false
	}
	defer rdr.Close()
	v := rdr.MetaData().KeyValueMetadata().FindValue(PredictionsKey)
	return v != nil && *v == PredictionsValue
}
