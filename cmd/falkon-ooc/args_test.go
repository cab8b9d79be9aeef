package main

import (
	"encoding/json"
	"flag"
	"github.com/falkon-ooc/falkon-ooc/internal/cliargs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestBadFlagEveryCommand: in every command an unknown flag, before or
// after the inputs, is a usage error (exit 2) with the same two lines on
// stderr and nothing on stdout.
func TestBadFlagEveryCommand(t *testing.T) {
	for name := range commands {
		for _, args := range [][]string{
			{name, "--no-such-flag", "INPUT"},
			{name, "INPUT", "--no-such-flag"},
			{name, "INPUT", "-no-such-flag=3"},
		} {
			code, out, errOut := runCLI(args...)
			want := "falkon-ooc " + name + ": unknown flag --no-such-flag\nrun 'falkon-ooc " + name + " --help' for usage\n"
			if code != exitUsage || out != "" || errOut != want {
				t.Errorf("%q: exit %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", args, code, out, errOut, want)
			}
		}
	}
}

// TestFlagValueErrors: a flag without its value or with a bad value is a
// usage error worded the same way in every command.
func TestFlagValueErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "store", "--out"}, "falkon-ooc fit: flag --out needs a value\n"},
		{[]string{"predict", "in.csv", "--workers", "many"}, `falkon-ooc predict: invalid value "many" for flag --workers: parse error` + "\n"},
		{[]string{"ingest", "in.csv", "--quiet=maybe"}, `falkon-ooc ingest: invalid boolean value "maybe" for flag --quiet: parse error` + "\n"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != exitUsage || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr\n%s\nwant exit 2 and a first line\n%s", c.args, code, errOut, c.want)
		}
	}
}

// TestFlagsAfterInputs runs every command that takes inputs with its
// flags after them; the results are those of the flags placed first.
func TestFlagsAfterInputs(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "in.csv")
	var b strings.Builder
	b.WriteString("a,b,c,y\n")
	for i := range 200 {
		x := float64(i%17) / 17
		b.WriteString(strings.Join([]string{ftoa(x), ftoa(1 - x*x), ftoa(float64(i%5) / 5), ftoa(x * 3)}, ",") + "\n")
	}
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "s")
	model := filepath.Join(dir, "m.falkon")
	preds := filepath.Join(dir, "p.csv")
	steps := []struct {
		name string
		args []string
		// check inspects stdout
		check func(t *testing.T, stdout string)
	}{
		{"ingest", []string{"ingest", csvPath, "--out", store, "--target", "y", "--quiet"}, nil},
		{"inspect", []string{"inspect", store, "--json"}, func(t *testing.T, out string) {
			if !json.Valid([]byte(out)) {
				t.Errorf("inspect STORE --json printed no JSON document:\n%s", out)
			}
		}},
		{"fit", []string{"fit", store, "--out", model, "--centers", "20", "--iters", "2", "--quiet"}, nil},
		{"predict", []string{"predict", store, "--model", model, "--out", preds, "--quiet"}, func(t *testing.T, out string) {
			if _, err := os.Stat(preds); err != nil {
				t.Errorf("predict ignored --out after the input: %v", err)
			}
		}},
		{"export", []string{"export", model, "--format", "onnx", "--out", filepath.Join(dir, "m.onnx"), "--json"}, func(t *testing.T, out string) {
			if !json.Valid([]byte(out)) || !strings.Contains(out, `"format": "onnx"`) {
				t.Errorf("export MODEL --json printed no summary:\n%s", out)
			}
		}},
		{"tune", []string{"tune", store, "--out", filepath.Join(dir, "t.falkon"), "--centers", "20", "--iters", "2", "--sigma", "1,2", "--lambda", "1e-6", "--quiet"}, nil},
		{"clean", []string{"clean", dir}, nil}, // no flags: only inputs
		// "--" ends the flags: what follows is an input even if it looks
		// like a flag.
		{"predict --", []string{"predict", "--model", model, "--quiet", "--", "--json"}, nil},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(s.args...)
		if s.name == "predict --" {
			if code != 1 || !strings.Contains(errOut, "--json") {
				t.Errorf("%q: exit %d, stderr %s; want an error about the input --json", s.args, code, errOut)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr:\n%s", s.args, code, errOut)
		}
		if s.check != nil {
			s.check(t, out)
		}
	}
	// Every command taking inputs is covered above; demo and serve take
	// none.
	covered := []string{"ingest", "inspect", "fit", "predict", "export", "tune", "clean", "demo", "serve"}
	for name := range commands {
		if !slices.Contains(covered, name) {
			t.Errorf("command %s has no case in TestFlagsAfterInputs: add one that puts its flags after its inputs", name)
		}
	}
}

func TestPermute(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("out", "", "")
	fs.Bool("quiet", false, "")
	fs.Float64("lambda", 0, "")
	for _, c := range []struct{ in, want string }{
		{"a --out o b", "--out o -- a b"},
		{"a --quiet b", "--quiet -- a b"},
		{"--quiet=false a", "--quiet=false -- a"},
		{"a --lambda -1", "--lambda -1 -- a"},
		{"a --out=o", "--out=o -- a"},
		{"a - --quiet", "--quiet -- a -"},
		{"a -- --quiet", "-- a --quiet"},
		{"--bogus a", "--bogus -- a"},
		{"a --out", "error: flag needs an argument: -out"},
		{"", ""},
	} {
		args, err := cliargs.Permute(fs, strings.Fields(c.in))
		if err != nil {
			args = []string{"error: " + err.Error()}
		}
		got := strings.Join(args, " ")
		if got != c.want {
			t.Errorf("Permute(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestFlagSpellings: the British spelling the documentation's prose uses
// is the same flag (--centres is --centers), and an unknown flag names
// the nearest one.
func TestFlagSpellings(t *testing.T) {
	dir := t.TempDir()
	train := makeStore(t, dir, 1500, 3, "y")
	code, out, errOut := runCLI("fit", "--out", dir+"/m.falkon", "--centres", "120", "--centres-sampling", "uniform", "--iters", "2", "--json", train)
	if code != 0 || !strings.Contains(out, `"centers": 120`) {
		t.Fatalf("fit --centres 120: exit %d, %s\n%s", code, errOut, out)
	}
	for _, tc := range []struct{ args, want string }{
		{"fit --centre 10", "falkon-ooc fit: unknown flag --centre (did you mean --centers?)"},
		{"tune --lamda 1", "falkon-ooc tune: unknown flag --lamda (did you mean --lambda?)"},
		{"predict --modle m", "falkon-ooc predict: unknown flag --modle (did you mean --model?)"},
		{"fit --tune-centre 5", "falkon-ooc fit: unknown flag --tune-centre (did you mean --tune-centers?)"},
		{"ingest --zzzzzz 1", "falkon-ooc ingest: unknown flag --zzzzzz\n"},
	} {
		code, _, errOut := runCLI(strings.Fields(tc.args)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestFlagErrorOneLine: a flag error stays on one line whatever the
// flag's name holds.
func TestFlagErrorOneLine(t *testing.T) {
	code, _, errOut := runCLI("fit", "--bad\nname")
	want := "falkon-ooc fit: unknown flag --bad\\nname\nrun 'falkon-ooc fit --help' for usage\n"
	if code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
}
