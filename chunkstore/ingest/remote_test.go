package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/storecmp"
)

// dirRemote serves the files under root as objects named prefix + their
// path below root, the way object storage names them: ingest cannot read
// such a name with os, so every byte it reads goes through the Remote.
type dirRemote struct {
	prefix, root string
	opens        atomic.Int64
}

func (d *dirRemote) local(name string) (string, error) {
	rel, ok := strings.CutPrefix(name, d.prefix)
	if !ok {
		return "", fmt.Errorf("%s: no such bucket", name)
	}
	return filepath.Join(d.root, filepath.FromSlash(rel)), nil
}

func (d *dirRemote) Stat(name string) (int64, time.Time, error) {
	p, err := d.local(name)
	if err != nil {
		return 0, time.Time{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%s: no such object", name)
	}
	return st.Size(), st.ModTime(), nil
}

func (d *dirRemote) Open(name string) (RemoteFile, error) {
	p, err := d.local(name)
	if err != nil {
		return nil, err
	}
	d.opens.Add(1)
	return os.Open(p)
}

// list returns the objects of the data files under root, sorted.
func (d *dirRemote) list(t *testing.T) []string {
	var out []string
	err := filepath.WalkDir(d.root, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(d.root, p)
		if IsDataPath(filepath.ToSlash(rel)) {
			out = append(out, d.prefix+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// remoteIngest runs a distributed ingest of URL inputs into a store at a
// URL, as falkon-ooc-beam does with object storage: pieces written by
// ReadFileTo into directories of their own, each part by WritePartFrom
// into a directory of its own, and the store put together in storeDir
// (the "bucket") by FinishTo, which writes the manifest.
func remoteIngest(t *testing.T, inputs []string, cfg Config, parts int, storeDir string) (*Result, error) {
	t.Helper()
	ctx := context.Background()
	p, err := NewPlan(ctx, inputs, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if p.Work != "" {
		t.Fatalf("a plan for a URL store made a work directory %s", p.Work)
	}
	wp := roundTrip(t, p)
	wp.Config.Remote = cfg.Remote
	tmp := t.TempDir()
	piece := func(i int) string { return filepath.Join(tmp, fmt.Sprintf("piece-%d", i)) }
	var sums []*FileSummary
	for i := range p.Files {
		s, err := wp.ReadFileTo(ctx, i, piece(i))
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, roundTrip(t, s))
	}
	lay, err := p.Layout(ctx, sums)
	if err != nil {
		return nil, err
	}
	parts = lay.Parts(parts)
	ps := make([]*chunkstore.Part, parts)
	if err := os.MkdirAll(storeDir, 0o777); err != nil {
		t.Fatal(err)
	}
	for k := range parts {
		dir := filepath.Join(tmp, fmt.Sprintf("part-%d", k))
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		part, err := wp.WritePartFrom(ctx, roundTrip(t, lay), k, parts, dir, func(_ context.Context, i int) (*chunkstore.Reader, error) {
			return chunkstore.Open(piece(i))
		})
		if err != nil {
			t.Fatal(err)
		}
		if part.Segment.Chunks > 0 {
			if err := os.Rename(filepath.Join(dir, part.Segment.Name), filepath.Join(storeDir, part.Segment.Name)); err != nil {
				t.Fatal(err)
			}
		}
		ps[k] = roundTrip(t, part)
	}
	return p.FinishTo(ctx, lay, ps, func(_ context.Context, b []byte) error {
		for _, pt := range ps {
			if pt.Segment.Chunks == 0 {
				continue
			}
			if st, err := os.Stat(filepath.Join(storeDir, pt.Segment.Name)); err != nil || st.Size() != pt.Segment.Bytes {
				return fmt.Errorf("segment %s not in place", pt.Segment.Name)
			}
		}
		return os.WriteFile(filepath.Join(storeDir, chunkstore.ManifestName), b, 0o644)
	})
}

// TestDistributedRemote: the Hive folder read as objects (URLs) through a
// Remote, the store written as objects: the same store as Run's of the
// local folder, but for the sources' names; every input read through the
// Remote.
func TestDistributedRemote(t *testing.T) {
	rm := &dirRemote{prefix: "mem://bucket/hive/", root: interop + "hive/data"}
	inputs := rm.list(t)
	if len(inputs) < 2 {
		t.Fatalf("inputs %v", inputs)
	}
	dir := t.TempDir()
	cfg := Config{Targets: []string{"color"}, ChunkRows: 37}
	cfg.Out = filepath.Join(dir, "local")
	want, err := Run(context.Background(), []string{interop + "hive/data"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, parts := range []int{1, 3} {
		rm.opens.Store(0)
		cfg.Out, cfg.Remote = "mem://bucket/store", rm
		storeDir := filepath.Join(dir, fmt.Sprintf("bucket-store-%d", parts))
		got, err := remoteIngest(t, inputs, cfg, parts, storeDir)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := storecmp.DiffIgnoring(filepath.Join(dir, "local"), storeDir, "sources"); err != nil || d != "" {
			t.Fatalf("parts %d: %v %s", parts, err, d)
		}
		r, err := chunkstore.Open(storeDir)
		if err != nil {
			t.Fatal(err)
		}
		src := r.Manifest().Sources
		r.Close()
		if len(src) != len(inputs) {
			t.Fatalf("%d sources for %d inputs", len(src), len(inputs))
		}
		for i, s := range src {
			if s.Path != inputs[i] {
				t.Fatalf("source %d is %q, want %q", i, s.Path, inputs[i])
			}
		}
		if got.Rows != want.Rows || got.Chunks != want.Chunks || strings.Join(got.Files, ",") != strings.Join(inputs, ",") {
			t.Fatalf("result %+v, want rows %d chunks %d", got, want.Rows, want.Chunks)
		}
		if rm.opens.Load() == 0 {
			t.Fatal("no input was opened through the Remote")
		}
	}
}

// TestRemoteErrors: a URL without a Remote, a missing object, a store at
// a URL without a Remote.
func TestRemoteErrors(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "s")
	_, err := Run(ctx, []string{"s3://bucket/x.csv"}, Config{Out: out})
	if err == nil || err.Error() != "s3://bucket/x.csv: a URL input is read only by an ingest that reaches object storage (falkon-ooc-beam ingest)" {
		t.Fatalf("got %v", err)
	}
	rm := &dirRemote{prefix: "mem://bucket/", root: t.TempDir()}
	_, err = NewPlan(ctx, []string{"mem://bucket/nothing.csv"}, Config{Out: out, Remote: rm})
	if err == nil || err.Error() != "mem://bucket/nothing.csv: no such object" {
		t.Fatalf("got %v", err)
	}
	_, err = NewPlan(ctx, []string{"mem://other/x.csv"}, Config{Out: out, Remote: rm})
	if err == nil || err.Error() != "mem://other/x.csv: no such bucket" {
		t.Fatalf("got %v", err)
	}
	_, err = NewPlan(ctx, []string{interop + "duckdb.csv"}, Config{Out: "s3://bucket/store"})
	if err == nil || err.Error() != "s3://bucket/store: a store at a URL is written only by an ingest that reaches object storage (falkon-ooc-beam ingest)" {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("left %s: %v", out, err)
	}
}
