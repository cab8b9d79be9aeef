package main

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/cliargs"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags/flagtest"
)

// settingsGolden holds what each of flagtest.Lines sets: falkon-ooc's
// test writes it (-update), and falkon-ooc-beam's expects the same from
// its own parser.
const settingsGolden = "../../internal/cliflags/testdata/settings.golden"

// parseSettings runs a command line of flagtest.Lines through fit's or
// tune's flag set and the checks runFit and runTune make before reading
// any input, and renders what it set (flagtest.Settings).
func parseSettings(line []string) (string, error) {
	cmd := cliflags.Fit
	if line[0] == "tune" {
		cmd = cliflags.Tune
	}
	fs := flag.NewFlagSet(line[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := &fitOpts{}
	o.register(fs, cmd)
	cliflags.AddAliases(fs)
	args, err := cliargs.Permute(fs, line[1:])
	if err == nil {
		err = fs.Parse(args)
	}
	if err != nil {
		return "", err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cmd == cliflags.Tune {
		base, err := o.Config(set)
		if err != nil {
			return "", err
		}
		tc, err := o.TuneConfig(base, set)
		if err != nil {
			return "", err
		}
		return flagtest.Settings(&o.Flags, base, nil, &tc), o.ValidateTune(tc)
	}
	if err := o.Holdout(set); err != nil {
		return "", err
	}
	cfg, err := o.Config(set)
	if err != nil {
		return "", err
	}
	if err := o.CheckFit(set); err != nil {
		return "", err
	}
	o.SetPatience(&cfg, set)
	if !o.Tune {
		return flagtest.Settings(&o.Flags, cfg, nil, nil), nil
	}
	tc, err := o.FitTunedConfig(cfg, set)
	return flagtest.Settings(&o.Flags, cfg, &tc, nil), err
}

// TestSharedSettings feeds every flag fit and tune share with
// falkon-ooc-beam (flagtest.Lines) through falkon-ooc's parser and checks
// the settings against the golden file that falkon-ooc-beam's
// TestSharedSettings checks its own parser's against.
func TestSharedSettings(t *testing.T) {
	var b strings.Builder
	for _, l := range flagtest.Lines {
		s, err := parseSettings(l)
		if err != nil {
			t.Errorf("%q: %v", l, err)
		}
		b.WriteString("$ " + strings.Join(l, " ") + "\n" + s + "\n\n")
	}
	if *update {
		if err := os.WriteFile(settingsGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(settingsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != b.String() {
		t.Errorf("the settings differ from %s (run with -update):\n%s", settingsGolden, b.String())
	}
}
