package cliflags_test

import (
	"flag"
	"io"
	"sort"
	"strings"
	"testing"

	. "github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags/flagtest"
)

// TestLinesCoverEveryFlag: the command lines both programs' tests parse
// (flagtest.Lines) give every flag Add declares for fit and for tune.
func TestLinesCoverEveryFlag(t *testing.T) {
	for _, cmd := range []struct {
		name string
		c    Command
	}{{"fit", Fit}, {"tune", Tune}} {
		fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
		var f Flags
		f.Add(fs, cmd.c)
		given := map[string]bool{}
		for _, l := range flagtest.Lines {
			if l[0] != cmd.name {
				continue
			}
			for _, a := range l[1:] {
				if name, ok := strings.CutPrefix(a, "--"); ok {
					if fs.Lookup(name) == nil {
						t.Errorf("%s: flagtest.Lines gives --%s, which Add does not declare", cmd.name, name)
					}
					given[name] = true
				}
			}
		}
		var missing []string
		fs.VisitAll(func(fl *flag.Flag) {
			if !given[fl.Name] {
				missing = append(missing, fl.Name)
			}
		})
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s: flagtest.Lines never gives %q", cmd.name, missing)
		}
	}
}

// TestRefuse: a refused flag parses, is left out of the help and of the
// suggestions, and Refused names it with the reason.
func TestRefuse(t *testing.T) {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f Flags
	f.Add(fs, Fit)
	Refuse(fs, "not here", "max-memory")
	if err := fs.Parse([]string{"--max-memory", "1GiB"}); err != nil {
		t.Fatal(err)
	}
	if err := Refused(fs); err == nil || err.Error() != "--max-memory: not here" {
		t.Errorf("Refused: %v", err)
	}
	var b strings.Builder
	fs.SetOutput(&b)
	PrintDefaults(fs)
	if strings.Contains(b.String(), "\n  --max-memory") || !strings.Contains(b.String(), "\n  --lambda LIST\n") {
		t.Errorf("help:\n%s", b.String())
	}
	if s := SuggestFlag(fs, "max-memry"); s != "" {
		t.Errorf("suggests --%s for a refused flag", s)
	}
	fs2 := flag.NewFlagSet("fit", flag.ContinueOnError)
	var f2 Flags
	f2.Add(fs2, Fit)
	if err := Refused(fs2); err != nil {
		t.Errorf("nothing refused: %v", err)
	}
}

// TestGridSyntax: --sigma and --lambda read one number, a LIST and a
// RANGE the same way for fit and tune.
func TestGridSyntax(t *testing.T) {
	for _, c := range []Command{Fit, Tune} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f Flags
		f.Add(fs, c)
		if err := fs.Parse([]string{"--sigma", "2,4", "--lambda", "1e-8:1e-6:3"}); err != nil {
			t.Fatal(err)
		}
		if got := f.Sigma.Values; len(got) != 2 || got[0] != 2 || got[1] != 4 {
			t.Errorf("%v: --sigma 2,4 gives %v", c, got)
		}
		if got := f.Lambda.Values; len(got) != 3 || got[0] != 1e-8 || got[1] != 1e-7 || got[2] != 1e-6 {
			t.Errorf("%v: --lambda 1e-8:1e-6:3 gives %v", c, got)
		}
		err := fs.Parse([]string{"--sigma", "1,x"})
		if err == nil || !strings.HasSuffix(err.Error(), `for flag -sigma: "x" is not a number > 0`) {
			t.Errorf("%v: --sigma 1,x: %v", c, err)
		}
	}
}
