package ingest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/internal/table"

	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// fileInfo is what ingest knows of one input before reading its rows.
type fileInfo struct {
	path    string
	format  format
	size    int64
	modTime time.Time
	rows    int64  // Parquet: from the footer; text: counted while reading
	name    string // what messages, Result and the manifest call the file: path, or "stdin" for a spooled input

	// names[nreal:] are Hive partition columns from the file's path, of
	// value part[i-nreal] (numeric ones) or partText[i-nreal].
	nreal    int
	part     []float64
	partText []string

	names []string // top-level columns, in file order
	types []colType
	index map[string]int // name -> position in names

	// Parquet files only: the largest column chunk of each top-level
	// column (names order), compressed plus uncompressed bytes, for the
	// memory estimate.
	chunkBytes []int64

	// text files only
	comma  rune
	header bool // the first line is a header
	gzip   bool

	// mem, when not nil, holds the bytes of a text input, read instead of
	// the file at path (tests and fuzzing: no file written).
	mem []byte
	// remote, when not nil, reads the input at path, a URL.
	remote Remote

	ok bool // set by the reader when it finished without error
}

// inspect reads what ingest needs to know of an input before the store is
// created: its format, columns and types.
func (s *session) inspect(path string) (*fileInfo, error) {
	rm, err := s.remoteFor(path)
	if err != nil {
		return nil, err
	}
	var fi *fileInfo
	if rm != nil {
		size, mtime, err := rm.Stat(path)
		if err != nil {
			return nil, err
		}
		fi = &fileInfo{path: path, size: size, modTime: mtime.UTC(), remote: rm}
	} else {
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory", path)
		}
		fi = &fileInfo{path: path, size: st.Size(), modTime: st.ModTime().UTC()}
	}
	fi.format, err = sniffFormat(fi)
	if err != nil {
		return nil, err
	}
	if err := s.inspectFile(fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// inspectFile reads the columns and types of fi, whose path, size and
// format are set, and indexes its columns with its Hive partition keys.
func (s *session) inspectFile(fi *fileInfo) error {
	path := fi.path
	var err error
	if fi.format == formatParquet {
		err = s.inspectParquet(fi)
	} else {
		err = s.inspectText(fi)
	}
	if err != nil {
		return err
	}
	fi.name = path
	fi.nreal = len(fi.names)
	all, keys, err := table.Columns(path, fi.names)
	if err != nil {
		return err
	}
	fi.names = all
	for _, k := range keys {
		if k.IsNumber {
			fi.types = append(fi.types, partNumber)
		} else {
			fi.types = append(fi.types, partText)
		}
		fi.part = append(fi.part, k.Number)
		fi.partText = append(fi.partText, k.Value)
	}
	fi.index = make(map[string]int, len(fi.names))
	for i, n := range fi.names {
		fi.index[n] = i
	}
	return nil
}

func (s *session) inspectParquet(fi *fileInfo) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: internal error while reading the Parquet footer: %v", fi.path, p)
		}
	}()
	rdr, err := s.openParquet(fi, 0)
	if err != nil {
		return err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, s.mem)
	if err != nil {
		return fmt.Errorf("%s: %w", fi.path, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("%s: %w", fi.path, err)
	}
	for _, f := range sc.Fields() {
		fi.names = append(fi.names, f.Name)
		fi.types = append(fi.types, classify(f.Type))
	}
	// Each top-level column's largest chunk: its leaves summed.
	fi.chunkBytes = make([]int64, len(fi.names))
	md := rdr.MetaData()
	top := make([]int, md.Schema.NumColumns())
	for c := range top {
		top[c] = md.Schema.Root().FieldIndexByField(md.Schema.ColumnRoot(c))
	}
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		sums := make([]int64, len(fi.names))
		for c := range min(rg.NumColumns(), len(top)) {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				continue
			}
			if k := top[c]; k >= 0 && k < len(sums) {
				sums[k] += cc.TotalCompressedSize() + cc.TotalUncompressedSize()
			}
		}
		for k, v := range sums {
			fi.chunkBytes[k] = max(fi.chunkBytes[k], v)
		}
	}
	fi.rows = rdr.NumRows()
	return nil
}

// choose picks the stored columns from the first file and the Config, and
// checks that every file has them with compatible types.
func (s *session) choose() error {
	first := s.files[0]
	check := func(what, name string) error {
		i, ok := first.index[name]
		if !ok {
			return fmt.Errorf("%s: no column %q (named in %s); its columns are: %s", first.path, name, what, listNames(first.names))
		}
		if t := first.types[i]; !t.class.storable() && !((what == "targets" || what == "features") && t.class == classString && !t.part) {
			can := "numeric, bool, date and timestamp columns can"
			if what == "features" {
				can = "numeric, bool, date, timestamp and string columns can"
			}
			return fmt.Errorf("%s: column %q (named in %s) has type %s, which cannot be stored; %s", first.path, name, what, t.desc, can)
		}
		return nil
	}
	seen := map[string]string{}
	claim := func(what, name string) error {
		if prev, dup := seen[name]; dup {
			if prev == what {
				return fmt.Errorf("column %q is named twice in %s", name, what)
			}
			return fmt.Errorf("column %q is named in both %s and %s", name, prev, what)
		}
		seen[name] = what
		return nil
	}
	for _, t := range s.cfg.Targets {
		if err := check("targets", t); err != nil {
			return err
		}
		if err := claim("targets", t); err != nil {
			return err
		}
	}
	if w := s.cfg.Weight; w != "" {
		if err := check("weight", w); err != nil {
			return err
		}
		if t := first.types[first.index[w]]; t.class != classNumeric && t.class != classBool {
			return fmt.Errorf("%s: column %q (named in weight) has type %s; a weight column must be numeric", first.path, w, t.desc)
		}
		if err := claim("weight", w); err != nil {
			return err
		}
	}
	excluded := map[string]bool{}
	for _, x := range s.cfg.Exclude {
		if _, ok := first.index[x]; !ok {
			return fmt.Errorf("%s: no column %q (named in exclude); its columns are: %s", first.path, x, listNames(first.names))
		}
		if err := claim("exclude", x); err != nil {
			return err
		}
		excluded[x] = true
	}
	categorical := map[string]bool{}
	for _, c := range s.cfg.Categorical {
		i, ok := first.index[c]
		if !ok {
			return fmt.Errorf("%s: no column %q (named in categorical); its columns are: %s", first.path, c, listNames(first.names))
		}
		if t := first.types[i]; !t.integer && t.class != classString || t.part {
			return fmt.Errorf("%s: column %q (named in categorical) has type %s; categorical columns are integer or string columns", first.path, c, t.desc)
		}
		if prev := seen[c]; prev != "" {
			return fmt.Errorf("column %q is named in both %s and categorical", c, prev)
		}
		if categorical[c] {
			return fmt.Errorf("column %q is named twice in categorical", c)
		}
		if len(s.cfg.Features) > 0 && !slices.Contains(s.cfg.Features, c) {
			return fmt.Errorf("column %q is named in categorical but not in features", c)
		}
		categorical[c] = true
	}
	var feats []string
	if len(s.cfg.Features) > 0 {
		for _, f := range s.cfg.Features {
			if err := check("features", f); err != nil {
				return err
			}
			if err := claim("features", f); err != nil {
				return err
			}
			feats = append(feats, f)
		}
	} else {
		for i, n := range first.names {
			if defaultFeature(n, first.types[i], len(s.cfg.TimeFeatures) > 0) && seen[n] == "" || categorical[n] {
				feats = append(feats, n)
			}
		}
		if len(feats) == 0 {
			return fmt.Errorf("%s: no feature columns: no numeric, bool or string column besides the targets and excluded columns; its columns are: %s", first.path, describe(first))
		}
	}
	s.nfeat = len(feats)
	s.names = append(feats, s.cfg.Targets...)
	if s.cfg.Weight != "" {
		s.names = append(s.names, s.cfg.Weight) // stored after the targets
	}
	s.cats = make([]*featenc.Counter, len(s.names))
	s.times = make([]bool, len(s.names))
	for j, n := range feats {
		switch t := first.types[first.index[n]]; {
		case categorical[n] || t.class == classString:
			s.cats[j] = featenc.NewCounter(0)
		case t.class == classTemporal && len(s.cfg.TimeFeatures) > 0:
			s.times[j] = true
		}
	}
	s.initTargets()
	s.buildReport(excluded)
	if err := s.checkStrays(categorical); err != nil {
		return err
	}

	// Every file must have every chosen column, of the same class.
	s.specs = make([]string, len(s.names))
	s.labels = make([]*labelSet, len(s.names))
	for j, n := range s.names {
		t0 := first.types[first.index[n]]
		s.specs[j] = t0.spec
		if s.cats[j] != nil { // codes of levels, expanded by install
			s.specs[j] = "float64"
			for _, f := range s.files {
				if i, ok := f.index[n]; ok {
					f.types[i].cat = newCatCoder(n)
				}
			}
		}
		if t0.class == classString && j >= s.nfeat { // a target: class labels
			s.specs[j] = chunkstore.LabelType
			s.labels[j] = newLabelSet(n)
			for _, f := range s.files {
				if i, ok := f.index[n]; ok && f.types[i].class == classString {
					f.types[i].labels = s.labels[j]
				}
			}
		}
		for _, f := range s.files[1:] {
			i, ok := f.index[n]
			if !ok {
				return fmt.Errorf("%s: no column %q, which %s has; its columns are: %s", f.path, clip(n), first.path, listNames(f.names))
			}
			t := f.types[i]
			if t.class != t0.class {
				return fmt.Errorf("%s: column %q has type %s, but in %s it has type %s", f.path, clip(n), t.desc, first.path, t0.desc)
			}
			if t.spec != s.specs[j] && s.labels[j] == nil && s.cats[j] == nil {
				s.specs[j] = "float64" // numbers of different widths: the common type
			}
		}
	}
	return nil
}

func listNames(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", clip(n))
	}
	if len(q) > 20 {
		q = append(slices.Clip(q[:20]), fmt.Sprintf("… (%d in all)", len(names)))
	}
	return strings.Join(q, ", ")
}

func describe(f *fileInfo) string {
	q := make([]string, len(f.names))
	for i, n := range f.names {
		q[i] = fmt.Sprintf("%q %s", clip(n), f.types[i].desc)
	}
	if len(q) > 20 {
		q = append(q[:20:20], fmt.Sprintf("… (%d in all)", len(f.names)))
	}
	return strings.Join(q, ", ")
}

// buildReport records what happens to every column of the first input
// (s.report), and sets up the constant and identifier checks of the
// features chosen by default (s.checks).
func (s *session) buildReport(excluded map[string]bool) {
	first := s.files[0]
	chosen := make(map[string]int, len(s.names))
	for j, n := range s.names {
		chosen[n] = j
	}
	s.reportAt = make([]int, len(s.names))
	s.checks = make([]*autoCheck, len(s.names))
	s.report = s.report[:0]
	for i, n := range first.names {
		t := first.types[i]
		r := chunkstore.InputColumn{Name: n, Type: t.desc, FromPath: t.part}
		j, ok := chosen[n]
		switch {
		case ok && j < s.nfeat:
			r.Role = chunkstore.RoleFeature
			if len(s.cfg.Features) == 0 && s.cats[j] == nil && !s.times[j] {
				s.checks[j] = &autoCheck{name: n, named: idName(n), boolean: t.class == classBool}
			}
		case ok && s.isWeight(j):
			r.Role = chunkstore.RoleWeight
		case ok:
			r.Role = chunkstore.RoleTarget
		case excluded[n]:
			r.Role, r.Reason = chunkstore.RoleSkipped, chunkstore.SkipExcluded
		case t.class == classNumeric || t.class == classBool || len(s.cfg.Features) > 0 && t.class == classString && !t.part:
			r.Role, r.Reason = chunkstore.RoleSkipped, chunkstore.SkipNotNamed
		case t.class == classString && !t.part && idName(n) && !binary(t):
			r.Role, r.Reason = chunkstore.RoleSkipped, chunkstore.SkipIdentifier
		case t.part:
			r.Role, r.Reason = chunkstore.RoleSkipped, chunkstore.SkipPartition
		default:
			r.Role, r.Reason = chunkstore.RoleSkipped, skipReason(t.class)
		}
		r.Note = skipNote(r.Reason)
		if r.Reason == chunkstore.SkipIdentifier {
			r.Note = "a string column named like a row identifier; name it in --features to keep it as a categorical feature"
		}
		if ok {
			s.reportAt[j] = len(s.report)
		}
		s.report = append(s.report, r)
	}
}

// checkStrays refuses a chosen feature that some file's sample reads as
// text because of a few values that are not numbers (colType.stray),
// unless it is named in categorical: it would silently become a
// categorical column of numbers. A dry run (inspect) notes it in the
// column report instead.
func (s *session) checkStrays(categorical map[string]bool) error {
	for j, n := range s.names[:s.nfeat] {
		if categorical[n] {
			continue
		}
		for _, f := range s.files {
			i, ok := f.index[n]
			if !ok || f.types[i].stray == nil {
				continue
			}
			st := f.types[i].stray
			others := ""
			if st.count > 1 {
				others = fmt.Sprintf(" (and %d more such values in its first %d rows)", st.count-1, sniffRows)
			}
			if s.dry {
				if f == s.files[0] {
					if s.strays == nil {
						s.strays = map[int]string{}
					}
					s.strays[j] = fmt.Sprintf("numbers, but %s holds %q%s: ingest refuses the column unless the value is corrected, the column excluded or named in --categorical",
						rowPhrase(st.row, f.header), clip(st.value), others)
					s.report[s.reportAt[j]].Note = s.strays[j]
				}
				continue
			}
			return fmt.Errorf("%s: column %q holds numbers, but %s holds %q, which is not a number%s; as text the column would be categorical, each number a level. Correct the value or leave the field empty (a NULL, see --nulls), leave the column out with --exclude, or name it in --categorical to take its values as levels",
				f.path, clip(n), rowPhrase(st.row, f.header), clip(st.value), others)
		}
	}
	return nil
}

// Types of Hive partition columns.
var (
	partNumber = colType{classNumeric, "float64", "partition key (number)", true, nil, false, nil, nil}
	partText   = colType{classString, "", "partition key (text)", true, nil, false, nil, nil}
)

// unifyPartitions checks that every file has the same partition keys, in
// the same order, and makes a key numeric only when its value parses as a
// number in every file.
func (s *session) unifyPartitions() error {
	first := s.files[0]
	keys := first.names[first.nreal:]
	for _, f := range s.files[1:] {
		if got := f.names[f.nreal:]; !slices.Equal(got, keys) {
			return fmt.Errorf("%s: partition keys %s in its path, but %s has %s; every file needs the same keys", f.name, listKeys(got), first.name, listKeys(keys))
		}
	}
	for k := range keys {
		for _, f := range s.files {
			if f.types[f.nreal+k].class != classNumeric {
				for _, g := range s.files {
					g.types[g.nreal+k] = partText
				}
				break
			}
		}
	}
	return nil
}

func listKeys(keys []string) string {
	if len(keys) == 0 {
		return "(none)"
	}
	return "[" + strings.Join(keys, ", ") + "]"
}

// defaultFeature reports whether a column of type t named n is a feature
// when Config.Features is empty: numbers and booleans, strings (as
// categorical features) unless binary or named like a row identifier, and
// dates and timestamps when they get time features (times).
func defaultFeature(n string, t colType, times bool) bool {
	switch t.class {
	case classNumeric, classBool:
		return true
	case classTemporal:
		return times
	case classString:
		return !t.part && !binary(t) && !idName(n)
	}
	return false
}

// binary reports whether a column holds binary values, not text.
func binary(t colType) bool { return strings.HasSuffix(t.desc, "(binary)") }
