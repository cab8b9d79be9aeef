package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrongFileMessages: a file that is not a model, given where a model
// goes, is named for what it is, with where models come from.
func TestWrongFileMessages(t *testing.T) {
	dir := t.TempDir()
	store := makeStore(t, dir, 300, 1, "y")
	csv := filepath.Join(dir, "data.csv")
	if err := os.WriteFile(csv, []byte("id,t\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "m.falkon.json")
	if err := os.WriteFile(js, []byte(`{"format": "falkon-ooc model"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--model", csv, "--out", filepath.Join(dir, "p.csv"), csv},
			"falkon-ooc predict: " + csv + " is a CSV file, not a model (models are files written by `falkon-ooc fit` or `tune`)"},
		{[]string{"predict", "--model", store, "--out", filepath.Join(dir, "p.csv"), csv},
			"falkon-ooc predict: " + store + " is a chunk store (a directory written by ingest), not a model (a store is the data a model is fitted on: `falkon-ooc fit --out MODEL " + store + "` writes one)"},
		{[]string{"predict", "--model", js, "--out", filepath.Join(dir, "p.csv"), csv},
			"falkon-ooc predict: " + js + " is a JSON file, not a model (a model's summary is MODEL.json; the model is " + filepath.Join(dir, "m.falkon") + ")"},
		{[]string{"inspect", js},
			"falkon-ooc inspect: " + js + " is a JSON file, not a model (a model's summary is MODEL.json; the model is " + filepath.Join(dir, "m.falkon") + ")"},
	} {
		code, _, errOut := runCLI(tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestLogTicksLabelOneDecade: a residual that stays within one decade
// still gets labelled ticks (1, 2, 5 × 10^k).
func TestLogTicksLabelOneDecade(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(0.013, 0.6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.02 0.05 0.1 0.2 0.5" {
		t.Errorf("labels %q, want \"0.02 0.05 0.1 0.2 0.5\"", got)
	}
}
