package outguard_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/outguard"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// predictions returns a Parquet file of one column, marked as falkon-ooc's
// predictions when mark.
func predictions(t *testing.T, mark bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := tabular.NewWriter(&buf, tabular.Parquet, nil, []string{"y_pred"})
	if err != nil {
		t.Fatal(err)
	}
	if mark {
		if err := w.MarkPredictions(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(nil, [][]float64{{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCheck runs every refusal of Check on files laid out as a user's
// folder: the message each gives, its kind (usage or not), and that the
// files a command owns are accepted.
func TestCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	write(t, "data.csv", []byte("a,y\n1,2\n"))
	write(t, "in/part-0.csv", []byte("a,y\n1,2\n"))
	write(t, "train.store/meta.json", []byte("{}"))
	write(t, "data.json", []byte("{}"))
	write(t, "user.json", []byte(`{"mine": true}`))
	write(t, "user.ckpt", []byte("my notes"))
	write(t, "own.falkon", []byte("FKOM\x01rest"))
	write(t, "own.falkon.json", []byte(`{"format": "falkon-ooc model"}`))
	write(t, "own.falkon.ckpt", []byte("FKCP\x01"))
	write(t, "plot.png", []byte("\x89PNG\r\n"))
	write(t, "a.pred.parquet", predictions(t, true))
	write(t, "b.parquet", predictions(t, false))
	write(t, "m.store.key", []byte("0123456789abcdef\n"))
	if err := os.Mkdir("m.store", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("mine.store", 0o755); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink("data.csv", "link.csv"); err != nil {
			t.Fatal(err)
		}
	}
	fit := func(model, plot string, store bool) []outguard.Output {
		return outguard.FitOutputs(model, plot, true, store)
	}
	pred := func(path string) []outguard.Output {
		return []outguard.Output{{Path: path, Flag: "--out", Kind: outguard.Predictions}}
	}
	for _, c := range []struct {
		name   string
		outs   []outguard.Output
		inputs []string
		force  bool
		usage  bool
		want   string // "" accepted
	}{
		{"model over a CSV", fit("data.csv", "", false), outguard.Inputs("train.store"), false, false,
			"--out data.csv exists and is not a falkon-ooc model: not replacing it; pass --force to replace it, or choose another --out"},
		{"model over a CSV, --force", fit("data.csv", "", false), outguard.Inputs("train.store"), true, false, ""},
		{"model inside the store it reads", fit("train.store/meta.json", "", false), outguard.Inputs("train.store"), true, false,
			"--out train.store/meta.json lies inside the store " + mustAbs(t, "train.store") + ", which it would damage; choose another --out"},
		{"a user's MODEL.json", fit("user", "", false), nil, false, false,
			"--out user: its summary user.json exists and is not the summary of a falkon-ooc model: not replacing it; pass --force to replace it, or choose another --out"},
		{"a user's MODEL.ckpt", fit("user", "", false)[2:], nil, false, false,
			"--out user: its checkpoint user.ckpt exists and is not a falkon-ooc checkpoint: not replacing it; pass --force to replace it, or choose another --out"},
		{"fit's own files", fit("own.falkon", "plot.png", false), nil, false, false, ""},
		{"plot over the model", fit("m.png", "m.png", false), nil, true, true,
			"--out m.png and --plot m.png name the same file: one would overwrite the other; choose another --plot"},
		{"plot over the summary", fit("m", "./m.json", false), nil, true, true,
			"--out m: its summary m.json and --plot ./m.json name the same file: one would overwrite the other; choose another --plot"},
		{"plot over a user's PNG-named file", fit("m", "user.json", false), nil, false, false,
			"--plot user.json exists and is not a PNG image"},
		{"model over the input", fit("data.csv", "", false), outguard.Inputs("data.csv"), true, true,
			"--out data.csv is the input data.csv: writing it would destroy the input; choose another --out"},
		{"model over an input found in a folder", fit("in/part-0.csv", "", false), outguard.Inputs("in"), true, true,
			"--out in/part-0.csv is the input in/part-0.csv: writing it would destroy the input; choose another --out"},
		{"model inside an input folder", fit("in/m.falkon", "", false), outguard.Inputs("in"), true, false,
			"--out in/m.falkon lies inside the input in; choose another --out"},
		{"summary over an input", fit("data", "", false), outguard.Inputs("data.json"), true, true,
			"--out data: its summary data.json is the input data.json"},
		{"a directory where a file goes", fit("in", "", false), nil, true, false, "--out in is a directory; name a file"},
		{"fit's store with its key", fit("m", "", true), nil, false, false, ""},
		{"a user's store folder", fit("mine", "", true), nil, false, false,
			"--out mine: its store of the ingested inputs mine.store exists and is not fit's (no mine.store.key beside it): not replacing it; pass --cache DIR to keep fit's store elsewhere, --force to replace it, or choose another --out"},
		{"predictions over a model that is an input", pred("own.falkon"), outguard.Inputs("own.falkon", "data.csv"), true, true,
			"--out own.falkon is the input own.falkon: writing it would destroy the input; choose another --out"},
		{"predictions over predictions", pred("a.pred.parquet"), nil, false, false, ""},
		{"predictions over a user's Parquet", pred("b.parquet"), nil, false, false,
			"--out b.parquet exists and is not predictions written by falkon-ooc: not replacing it; pass --force to replace it, or choose another --out"},
		{"an object", pred("s3://bucket/x.parquet"), nil, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := outguard.Check(c.outs, c.inputs, c.force)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ge *outguard.Error
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ge) || ge.Usage != c.usage {
				t.Fatalf("got %v (usage %v); want %q (usage %v)", err, ge != nil && ge.Usage, c.want, c.usage)
			}
		})
	}
	if runtime.GOOS != "windows" {
		err := outguard.Check(fit("data.csv", "", false), outguard.Inputs("link.csv"), true)
		if err == nil || !strings.Contains(err.Error(), "--out data.csv is the input link.csv") {
			t.Fatalf("a link to the output: %v", err)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPrepare: an unwritable directory is found before any work, and the
// check of the path is made again.
func TestPrepare(t *testing.T) {
	t.Chdir(t.TempDir())
	write(t, "afile", nil)
	_, _, err := outguard.Prepare(outguard.Output{Path: "afile/x.store", Flag: "--out", Dir: true}, nil)
	if err == nil || err.Error() != "--out afile/x.store: cannot write in afile: not a directory" {
		t.Fatalf("got %v", err)
	}
	write(t, "s.store/meta.json", []byte("{}"))
	_, _, err = outguard.Prepare(outguard.Output{Path: "s.store/m", Flag: "--out"}, nil)
	if err == nil || !strings.Contains(err.Error(), "lies inside the store") {
		t.Fatalf("got %v", err)
	}
	if removed, warn, err := outguard.Prepare(outguard.Output{Path: "m", Flag: "--out"}, nil); err != nil || warn != nil || len(removed) != 0 {
		t.Fatalf("a writable directory: %v %v %v", removed, warn, err)
	}
}
