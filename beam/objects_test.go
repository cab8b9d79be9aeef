package beam

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3" // s3://
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/storecmp"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// fakeS3 is gofakes3, a small S3 implementation (not a production
// server), serving on a loopback port for the tests of this binary, with
// bucket "bucket". The AWS SDK (Beam's s3 filesystem, and this package's
// range reads) reaches it through the standard AWS environment variables.
var fakeS3 struct {
	once sync.Once
	srv  *httptest.Server
	err  error
}

func startFakeS3(t *testing.T) {
	t.Helper()
	fakeS3.once.Do(func() {
		backend := s3mem.New()
		if fakeS3.err = backend.CreateBucket("bucket"); fakeS3.err != nil {
			return
		}
		fakeS3.srv = httptest.NewServer(gofakes3.New(backend).Server()) // 127.0.0.1
		for k, v := range map[string]string{
			"AWS_ENDPOINT_URL": fakeS3.srv.URL, "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
			"AWS_EC2_METADATA_DISABLED": "true",
			"AWS_CONFIG_FILE":           os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		} {
			os.Setenv(k, v)
		}
	})
	if fakeS3.err != nil {
		t.Fatal(fakeS3.err)
	}
}

// putTree copies the files under the local directory dir to objects under
// prefix, keeping their relative paths.
func putTree(t *testing.T, dir, prefix string) {
	t.Helper()
	ctx := context.Background()
	fs, err := openFS(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		return putFile(ctx, fs, p, prefix+"/"+filepath.ToSlash(rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fetchStore copies the store at loc to the new local directory dir.
func fetchStore(t *testing.T, loc, dir string) {
	t.Helper()
	ctx := context.Background()
	meta, err := readFile(ctx, joinURL(loc, chunkstore.ManifestName), 1<<26)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Segments []struct {
			Name string `json:"name"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Segments {
		b, err := readFile(ctx, joinURL(loc, s.Name), 1<<34)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, chunkstore.ManifestName), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}

func listObjects(t *testing.T, pattern string) []string {
	t.Helper()
	fs, err := filesystem.New(context.Background(), pattern)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fs.List(context.Background(), pattern)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestObjectStorage: on memfs:// and on s3:// (gofakes3 on loopback), a
// distributed ingest reads a Hive folder of Parquet files given as a
// prefix and CSV files given as a pattern, and writes the store as
// objects: the same store as ingest.Run's of the local files (chunks bit
// for bit, manifest equal but for the sources' names and times), no work
// objects left; a Beam fit and tune over the store at its URL give the
// models of the same over the local store, bit for bit.
func TestObjectStorage(t *testing.T) {
	startFakeS3(t)
	ctx := context.Background()
	dir := t.TempDir()
	csvDir := filepath.Join(dir, "csv")
	if err := os.Mkdir(csvDir, 0o777); err != nil {
		t.Fatal(err)
	}
	csvs := csvFiles(t, csvDir)
	for _, base := range []string{"memfs://objects-test", "s3://bucket/objects-test"} {
		putTree(t, interop+"hive/data", base+"/in/hive")
		putTree(t, csvDir, base+"/in/csv")
		cases := []struct {
			name   string
			local  []string
			remote []string
			cfg    ingest.Config
			parts  int
		}{
			{"hive", []string{interop + "hive/data"}, []string{base + "/in/hive"}, ingest.Config{Targets: []string{"color"}, ChunkRows: 37}, 3},
			{"csv", csvs, []string{base + "/in/csv/f*.csv"}, ingest.Config{Targets: []string{"y"}, Weight: "w", Nulls: "drop", ChunkRows: 8}, 4},
		}
		for _, c := range cases {
			what := base + " " + c.name
			local := filepath.Join(dir, strings.ReplaceAll(what, "/", "_")+"-local")
			c.cfg.Out = local
			want, err := ingest.Run(ctx, c.local, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.cfg.Out = base + "/stores/" + c.name
			got, err := Ingest(ctx, c.remote, c.cfg, Options{Partitions: c.parts})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			fetched := local + "-fetched"
			fetchStore(t, c.cfg.Out, fetched)
			if d, err := storecmp.DiffIgnoring(local, fetched, "sources"); err != nil || d != "" {
				t.Fatalf("%s: %v %s", what, err, d)
			}
			if got.Rows != want.Rows || got.Chunks != want.Chunks || len(got.Files) != len(want.Files) {
				t.Fatalf("%s: %d rows, %d chunks, %d files; want %d, %d, %d", what, got.Rows, got.Chunks, len(got.Files), want.Rows, want.Chunks, len(want.Files))
			}
			for _, f := range got.Files {
				if !strings.HasPrefix(f, base+"/in/") {
					t.Fatalf("%s: input %s", what, f)
				}
			}
			if left := listObjects(t, c.cfg.Out+".work-*/*/*/*"); len(left) > 0 {
				t.Fatalf("%s: work objects left: %v", what, left)
			}
			if c.name != "csv" {
				continue
			}
			cfg := ooc.Config{Centers: 20, Lambda: 1e-4, Iterations: 3, Seed: 3, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}}
			ml, err := Fit(ctx, cfg, ooc.RunOptions{}, Options{Store: local, Partitions: 3})
			if err != nil {
				t.Fatal(err)
			}
			mr, err := Fit(ctx, cfg, ooc.RunOptions{}, Options{Store: c.cfg.Out, Partitions: 3})
			if err != nil {
				t.Fatalf("%s: fit: %v", what, err)
			}
			assertSameModel(t, what+" fit", ml, mr)
			tc := ooc.TuneConfig{Base: cfg, Sigmas: []float64{1, 3}, Lambdas: []float64{1e-3, 1e-5}, ValFraction: 0.25, SigmaHalving: -1}
			tl, err := Tune(ctx, tc, ooc.RunOptions{}, Options{Store: local, Partitions: 2})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := Tune(ctx, tc, ooc.RunOptions{}, Options{Store: c.cfg.Out, Partitions: 2})
			if err != nil {
				t.Fatalf("%s: tune: %v", what, err)
			}
			if tl.Best != tr.Best {
				t.Fatalf("%s: tune picked %+v, over the local store %+v", what, tr.Best, tl.Best)
			}
			for i := range tl.Candidates {
				assertSameModel(t, what+" tune", tl.Candidates[i].Model(), tr.Candidates[i].Model())
			}

			// Predictions of an object, written beside it: the bytes of
			// the local file's predictions.
			model := filepath.Join(dir, strings.ReplaceAll(what, "/", "_")+".falkon")
			if err := mr.Save(model); err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, strings.ReplaceAll(what, "/", "_")+"-predict")
			if err := os.Mkdir(in, 0o777); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(csvs[3])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in, "f3.csv"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			pc := PredictConfig{Beside: true, Model: model, Inputs: []string{in}, Keep: []string{"row_id"}, Nulls: "drop"}
			if _, err := Predict(ctx, pc, Options{}); err != nil {
				t.Fatal(err)
			}
			pc.Inputs = []string{base + "/in/csv/f3.csv"}
			pr, err := Predict(ctx, pc, Options{})
			if err != nil {
				t.Fatalf("%s: predict: %v", what, err)
			}
			if len(pr.Files) != 1 || pr.Files[0].Output != base+"/in/csv/f3.pred.parquet" || pr.Rows == 0 {
				t.Fatalf("%s: predict result %+v", what, pr)
			}
			wantB, err := os.ReadFile(filepath.Join(in, "f3.pred.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			gotB, err := readFile(ctx, pr.Files[0].Output, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if string(gotB) != string(wantB) {
				t.Fatalf("%s: the predictions' object differs from the local file's predictions (%d bytes against %d)", what, len(gotB), len(wantB))
			}
			if _, err := Predict(ctx, pc, Options{}); err == nil || err.Error() != pr.Files[0].Output+" already exists; remove it or give --force" {
				t.Fatalf("%s: predict again: %v", what, err)
			}
			// --out under a prefix, the input a prefix: the object
			// mirrors the input's path below it; a local --out DIR for the
			// same object input holds the same bytes.
			pc = PredictConfig{Model: model, Inputs: []string{base + "/in/csv/"}, Keep: []string{"row_id"}, Nulls: "drop", Out: base + "/preds"}
			if pr, err = Predict(ctx, pc, Options{}); err != nil {
				t.Fatalf("%s: predict --out URL: %v", what, err)
			}
			var found bool
			for _, f := range pr.Files {
				if f.Input == base+"/in/csv/f3.csv" {
					found = f.Output == base+"/preds/f3.pred.parquet"
					if gotB, err = readFile(ctx, f.Output, 1<<30); err != nil || string(gotB) != string(wantB) {
						t.Fatalf("%s: --out URL: %v, %d bytes against %d", what, err, len(gotB), len(wantB))
					}
				}
			}
			if !found || len(pr.Skipped) != 1 {
				t.Fatalf("%s: predict --out URL: %+v", what, pr)
			}
			outDir := filepath.Join(dir, strings.ReplaceAll(what, "/", "_")+"-out")
			pc = PredictConfig{Model: model, Inputs: []string{base + "/in/csv/f3.csv"}, Keep: []string{"row_id"}, Nulls: "drop", Out: outDir}
			if _, err := Predict(ctx, pc, Options{}); err != nil {
				t.Fatalf("%s: predict --out DIR of an object: %v", what, err)
			}
			if gotB, err := os.ReadFile(filepath.Join(outDir, "f3.pred.parquet")); err != nil || string(gotB) != string(wantB) {
				t.Fatalf("%s: --out DIR of an object: %v", what, err)
			}
		}
	}
}

// TestObjectStorageErrors: what a user sees for a missing bucket, a
// missing input, a store URL that is taken, a store without a manifest;
// --force replaces a store, its manifest removed first.
func TestObjectStorageErrors(t *testing.T) {
	startFakeS3(t)
	ctx := context.Background()
	dir := t.TempDir()
	csvs := csvFiles(t, dir)
	base := "s3://bucket/errors-test"
	putTree(t, dir, base+"/in")
	cfg := ingest.Config{Targets: []string{"y"}, Nulls: "drop", ChunkRows: 8, Out: base + "/store"}
	if _, err := Ingest(ctx, []string{base + "/in/f0.csv"}, cfg, Options{}); err != nil {
		t.Fatal(err)
	}

	_, err := Ingest(ctx, []string{base + "/in/f0.csv"}, cfg, Options{})
	if err == nil || err.Error() != base+"/store already exists; remove it or choose another --out" {
		t.Fatalf("a taken store URL: %v", err)
	}
	_, err = Ingest(ctx, []string{base + "/in/nothing.csv"}, ingest.Config{Targets: []string{"y"}, Out: base + "/s2"}, Options{})
	if err == nil || err.Error() != base+"/in/nothing.csv: no such object, and no data objects below it (.parquet, .parq, .pq, .csv, .tsv, optionally .gz, up to 6 levels down)" {
		t.Fatalf("a missing input: %v", err)
	}
	_, err = Ingest(ctx, []string{"s3://no-such-bucket/f0.csv"}, ingest.Config{Targets: []string{"y"}, Out: base + "/s3"}, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "list s3://no-such-bucket/f0.csv: ") || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("a missing bucket: %v", err)
	}
	_, err = Fit(ctx, ooc.Config{Centers: 5}, ooc.RunOptions{}, Options{Store: "s3://no-such-bucket/store"})
	if err == nil || !strings.HasPrefix(err.Error(), "store s3://no-such-bucket/store: no manifest s3://no-such-bucket/store/meta.json (not a store, or one still being written: its manifest is written last): ") {
		t.Fatalf("a store in a missing bucket: %v", err)
	}

	// A store whose manifest is not (yet) written: its segments only.
	segs := listObjects(t, base+"/store/segment-*.dat")
	if len(segs) == 0 {
		t.Fatal("no segments")
	}
	for _, s := range segs {
		b, err := readFile(ctx, s, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFile(ctx, strings.Replace(s, "/store/", "/half/", 1), b); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Fit(ctx, ooc.Config{Centers: 5}, ooc.RunOptions{}, Options{Store: base + "/half"})
	if err == nil || !strings.HasPrefix(err.Error(), "store "+base+"/half: no manifest "+base+"/half/meta.json (not a store, or one still being written: its manifest is written last): ") {
		t.Fatalf("a store without manifest: %v", err)
	}
	_, err = Tune(ctx, ooc.TuneConfig{Base: ooc.Config{Centers: 5}}, ooc.RunOptions{}, Options{Store: base + "/half"})
	if err == nil || !strings.Contains(err.Error(), "no manifest "+base+"/half/meta.json") {
		t.Fatalf("tune, a store without manifest: %v", err)
	}

	// Predict: a NaN in an object gives falkon-ooc predict's message,
	// naming the object; nothing is written.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("row_id,x,c,w,y\n1,1,5,1,0\n2,NaN,5,1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.falkon")
	m, err := Fit(ctx, ooc.Config{Centers: 5, Iterations: 2, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}, ooc.RunOptions{}, Options{Store: cfg.Out})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(model); err != nil {
		t.Fatal(err)
	}
	_, want := Predict(ctx, PredictConfig{Beside: true, Model: model, Inputs: []string{bad}}, Options{})
	putTree(t, filepath.Dir(bad), base+"/bad")
	_, err = Predict(ctx, PredictConfig{Beside: true, Model: model, Inputs: []string{base + "/bad/bad.csv"}}, Options{})
	if want == nil || err == nil || err.Error() != strings.ReplaceAll(want.Error(), bad, base+"/bad/bad.csv") || !strings.HasPrefix(err.Error(), base+"/bad/bad.csv: row 2") {
		t.Fatalf("predict a bad object: %v\nlocally: %v", err, want)
	}
	if got := listObjects(t, base+"/bad/*"); len(got) != 1 {
		t.Fatalf("objects after a failed predict: %v", got)
	}

	// --force: the old store (1 file) is replaced by one of all the files.
	cfg.Force = true
	res, err := Ingest(ctx, []string{base + "/in/*.csv"}, cfg, Options{Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != len(csvs) {
		t.Fatalf("%d files, want %d", len(res.Files), len(csvs))
	}
	r, err := openStore(ctx, cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Rows() != res.Rows || len(r.Manifest().Segments) != 2 {
		t.Fatalf("the replaced store has %d rows in %d segments, want %d in 2", r.Rows(), len(r.Manifest().Segments), res.Rows)
	}
	if got := listObjects(t, base+"/store/*"); !slices.Equal(got, []string{base + "/store/meta.json", base + "/store/segment-000000.dat", base + "/store/segment-000001.dat"}) {
		t.Fatalf("objects of the replaced store: %v", got)
	}
}
