package clidoc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// help prints a small command's help as the commands print theirs.
func help(usage string) string {
	var b bytes.Buffer
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(&b)
	fs.String("out", "", "write the model to this `file`")
	fs.Int("iters", 20, usage)
	b.WriteString("usage: prog x --out FILE\n\nX does things.\n\nflags:\n")
	fs.PrintDefaults()
	return b.String()
}

func TestParse(t *testing.T) {
	text, flags := Parse(help("iterations\nover the data"))
	if text != "usage: prog x --out FILE\n\nX does things." {
		t.Errorf("text %q", text)
	}
	want := []Flag{{"-iters int", "iterations over the data (default 20)"}, {"-out file", "write the model to this file"}}
	if len(flags) != len(want) {
		t.Fatalf("flags %q, want %q", flags, want)
	}
	for i := range want {
		if flags[i] != want[i] {
			t.Errorf("flag %d: %q, want %q", i, flags[i], want[i])
		}
	}
}

func TestRenderEscapes(t *testing.T) {
	got := Render("prog", "commands", []Command{{"prog x", help("a|b *c* d_e <f>")}})
	for _, s := range []string{"### prog x", "- [prog x](#prog-x)", "| `-iters int` | a\\|b \\*c\\* d\\_e &lt;f> (default 20) |"} {
		if !strings.Contains(got, s) {
			t.Errorf("Render lacks %q:\n%s", s, got)
		}
	}
}

// TestSync: -update writes the section and keeps the rest of the document;
// a changed flag's help is then reported by command and flag.
func TestSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "CLI.md")
	if err := os.WriteFile(path, []byte("# Reference\n\nprose kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	begin, end := Markers("prog", "go test")
	old := Render("prog", "commands", []Command{{"prog x", help("iterations")}})
	if err := Sync(path, begin, end, old, true); err != nil {
		t.Fatal(err)
	}
	if err := Sync(path, begin, end, old, false); err != nil {
		t.Errorf("in step after -update: %v", err)
	}
	changed := Render("prog", "commands", []Command{{"prog x", help("CG iterations")}})
	err := Sync(path, begin, end, changed, false)
	if err == nil || !strings.Contains(err.Error(), "prog x -iters") || !strings.Contains(err.Error(), `"| `+"`-iters int`"+` | CG iterations (default 20) |"`) {
		t.Errorf("stale reference: err = %v", err)
	}
	if err := Sync(path, begin, end, changed, true); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(doc), "# Reference\n\nprose kept\n\n"+begin) || strings.Count(string(doc), begin) != 1 || strings.Contains(string(doc), "| iterations (default 20)") {
		t.Errorf("document after two updates:\n%s", doc)
	}
}
