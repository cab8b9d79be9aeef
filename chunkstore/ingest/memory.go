package ingest

import (
	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// Memory is Run's estimate of its peak memory (bytes of Go heap in use),
// by the formula of the package documentation ("Memory"), term by term.
type Memory struct {
	Total int64 `json:"total"`
	// Readers is what the files read at once keep per column: for
	// Parquet the column's read buffer (table.ParquetBufferFor), twice its
	// pages (the largest column chunk, compressed and not, at most
	// maxPageBytes) and decoderBytes; for text textCopies copies of the longest record
	// allowed (Config.MaxLine, or the file's size if smaller), held by the
	// record limiter and the CSV parser.
	Readers int64 `json:"readers"`
	// Batches is the read batches in flight: files × 4 × batch rows ×
	// columns × 8.
	Batches int64 `json:"batches"`
	// Chunks is the store writer's chunks: (workers + 2) × chunk rows ×
	// columns × 8, raw and compressed, and (workers + 3) × columns ×
	// statsBytes of statistics; with Nulls "mean" as much again for the
	// features, whose store of NULL places is written beside.
	Chunks int64 `json:"chunks"`
	// Levels is the counters of the categorical features' levels: per
	// categorical column, one per file read at once and one for the
	// totals, each of at most featenc.DefaultCap levels of levelBytes
	// (featenc.CounterBytes), whatever the number of distinct levels,
	// and as many sums of the target per level (featenc.TargetSumsBytes)
	// for the columns that may be target-encoded.
	Levels int64 `json:"levels,omitempty"`
	// Base is the program and its fixed buffers.
	Base int64 `json:"base"`
}

const (
	// maxPageBytes bounds a Parquet column's pages held at once:
	// writers cut pages (and dictionaries) at 1 MiB by default, held
	// compressed and decompressed.
	maxPageBytes = 4 << 20
	// memoryBase is the program, its runtime and fixed buffers.
	memoryBase = 32 << 20
	// decoderBytes is a Parquet column reader's decoders (measured:
	// about 30 KiB for a float64 column of a dictionary-encoded file).
	decoderBytes = 32 << 10
	// statsBytes is a column's statistics in a chunk job (its distinct
	// values, up to colstats.MaxDistinct).
	statsBytes = 2 << 10
	// levelBytes is the bytes a categorical level is assumed to take on
	// average in a level counter (its string and allocation rounding).
	levelBytes = 64
	// textCopies is how many copies of the longest text record are held
	// at once, at worst: the record limiter's, the CSV parser's line, its
	// record buffer and its fields, and Arrow's string builder, which
	// grows by doubling (measured: a 100 MiB field peaks at 6–7 copies,
	// bench/RESULTS.md "Ingest memory").
	textCopies = 7
)

// memoryEstimate returns the estimate for the chosen columns, the batch
// and chunk sizes and the files, as pump reads them (inFlight at a time).
func (s *session) memoryEstimate(chunkRows, inFlight int) Memory {
	cols := int64(len(s.names))
	var m Memory
	m.Base = memoryBase
	m.Batches = int64(inFlight) * 4 * int64(s.batchRows) * cols * 8
	chunks := func(cols int64) int64 {
		return int64(s.workers+2)*int64(chunkRows)*cols*8*2 + int64(s.workers+3)*cols*statsBytes
	}
	// A categorical column's code becomes up to MaxLevels + 2 one-hot
	// columns in install's copy, whose writer then holds chunks that wide.
	var cats, wide int64
	for j, c := range s.cats {
		if c != nil {
			cats++
			wide += int64(s.cfg.MaxLevels) + 1
		}
		if s.times[j] {
			wide += 2 * int64(len(s.cfg.TimeFeatures))
		}
	}
	m.Chunks = chunks(cols + wide)
	m.Levels = cats * int64(inFlight+1) * featenc.CounterBytes(featenc.DefaultCap, levelBytes)
	for _, t := range s.te {
		if t != nil {
			m.Levels += int64(inFlight+1) * featenc.TargetSumsBytes(featenc.DefaultCap)
		}
	}
	if s.cfg.Nulls == "mean" {
		m.Chunks += chunks(int64(s.nfeat))
	}
	// The inFlight files with the largest reader state.
	var per []int64
	for _, f := range s.files {
		per = append(per, s.readerBytes(f))
	}
	for range inFlight {
		k, best := -1, int64(-1)
		for i, v := range per {
			if v > best {
				k, best = i, v
			}
		}
		if k < 0 {
			break
		}
		m.Readers += best
		per[k] = -1
	}
	m.Total = m.Base + m.Readers + m.Batches + m.Chunks + m.Levels
	return m
}

// readerBytes is the reader state of one file while it is read.
func (s *session) readerBytes(f *fileInfo) int64 {
	if f.format != formatParquet {
		rec := int64(s.maxLine())
		if f.size > 0 && !f.gzip {
			rec = min(rec, f.size)
		}
		return textCopies * rec
	}
	var n int64
	buf := int64(table.ParquetBufferFor(len(s.names)))
	for _, name := range s.names {
		i, ok := f.index[name]
		if !ok || i >= f.nreal {
			continue // a Hive partition column: no reader
		}
		pages := int64(maxPageBytes)
		if i < len(f.chunkBytes) {
			pages = min(pages, f.chunkBytes[i])
		}
		// Page buffers grow by reallocation (twice the pages at worst),
		// and each column has its decoders (levels, dictionary indices).
		n += buf + 2*pages + decoderBytes
	}
	return n
}

// maxLine is Config.MaxLine or its default.
func (s *session) maxLine() int {
	if s.cfg.MaxLine > 0 {
		return s.cfg.MaxLine
	}
	return DefaultMaxLine
}

// InspectMemory is the estimate of the memory Run needs before it knows
// its columns (its first Progress): reading the first records of each text
// file, textCopies × maxLine (0: DefaultMaxLine), plus the program. A
// caller may set a soft memory limit from it before Run, and from
// Progress.Memory once it comes.
func InspectMemory(maxLine int) int64 {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return memoryBase + textCopies*int64(maxLine)
}
