package model_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/model"
)

// TestFixturesRewrite: every committed model file (format versions 1 and
// 2) loads, and writing it again gives its bytes exactly: the reader
// keeps everything the writer needs, including the trainer's
// configuration and record it does not read.
func TestFixturesRewrite(t *testing.T) {
	for _, path := range []string{
		"../ooc/testdata/model_v1_multiclass_f64.fkom",
		"../ooc/testdata/model_v1_regression_f32.fkom",
		"../ooc/testdata/model_v2_regression_std.fkom",
		"../cmd/falkon-ooc/testdata/model_v1.falkon",
		"../cmd/falkon-ooc/testdata/model_v1_binary.falkon",
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := model.Parse(want)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			n, err := m.WriteTo(&got)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(got.Len()) || !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("rewritten: %d bytes (reported %d), differing from the file's %d", got.Len(), n, len(want))
			}
		})
	}
}
