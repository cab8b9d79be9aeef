package main

import (
	"strings"
	"testing"
)

// TestInspectModel describes committed model files (format version 1),
// in text and --json, against goldens. The fixtures were written by
// 'falkon-ooc fit' with --val-fraction 0.2, so they carry a validation
// history.
func TestInspectModel(t *testing.T) {
	for _, c := range []struct{ model, golden string }{
		{"testdata/model_v1.falkon", "inspect_model_text.golden"},
		{"testdata/model_v1_binary.falkon", "inspect_model_binary.golden"},
	} {
		code, out, errOut := runCLI("inspect", c.model)
		if code != 0 || errOut != "" {
			t.Fatalf("inspect %s: exit %d, stderr %q", c.model, code, errOut)
		}
		golden(t, c.golden, out)
	}
	code, out, errOut := runCLI("inspect", "testdata/model_v1.falkon", "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("inspect --json: exit %d, stderr %q", code, errOut)
	}
	golden(t, "inspect_model_json.golden", out)

	code, _, errOut = runCLI("inspect", "--verify", "testdata/model_v1.falkon")
	if want := "falkon-ooc inspect: --verify checks a store's blocks; testdata/model_v1.falkon is a file"; code != 2 || !strings.HasPrefix(errOut, want) {
		t.Errorf("inspect --verify MODEL: exit %d, stderr %q, want exit 2 and %q", code, errOut, want)
	}
	// A TSV file is data: described as ingest would read it.
	code, out, errOut = runCLI("inspect", "--no-header", "--quiet", "testdata/ingest_noheader.tsv")
	if want := "inputs    1 file, 24 B: testdata/ingest_noheader.tsv\nrows      3\nfeatures  3: c0, c1, c2\n"; code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("inspect on a TSV file: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, out, errOut, want)
	}
}
