package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/clidoc"
)

// updateDocs reports -update, which rewrites falkon-ooc-beam's section of
// docs/CLI.md. The flag is the Dataflow runner's own boolean --update
// (linked into this binary, so a test cannot define another): this test
// only reads it.
func updateDocs() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestCLIReference keeps docs/CLI.md's falkon-ooc-beam section in step with
// the commands' own --help: it fails, naming the command and flag, when a
// flag's help and the reference disagree (go test ./cmd/falkon-ooc-beam
// -run TestCLIReference -update, in beam/, rewrites the section). Every
// flag's help gives at most one default.
func TestCLIReference(t *testing.T) {
	code, list, errOut := runCmd("help")
	if code != exitOK || errOut != "" {
		t.Fatalf("help: exit %d, stderr %q", code, errOut)
	}
	var cmds []clidoc.Command
	for _, c := range beamCommands {
		if c.name == "version" {
			continue
		}
		code, out, errOut := runCmd(c.name, "--help")
		if code != exitOK || errOut != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", c.name, code, errOut)
		}
		_, flags := clidoc.Parse(out)
		if len(flags) == 0 {
			t.Errorf("%s --help lists no flags:\n%s", c.name, out)
		}
		for _, f := range flags {
			if n := strings.Count(f.Usage, "(default"); n > 1 {
				t.Errorf("falkon-ooc-beam %s %s gives %d defaults: %s", c.name, f.Name, n, f.Usage)
			}
		}
		cmds = append(cmds, clidoc.Command{Name: "falkon-ooc-beam " + c.name, Help: out})
	}
	begin, end := clidoc.Markers("falkon-ooc-beam", "go test ./cmd/falkon-ooc-beam -run TestCLIReference (in beam/)")
	if err := clidoc.Sync("../../../docs/CLI.md", begin, end, clidoc.Render("falkon-ooc-beam", list, cmds), updateDocs()); err != nil {
		t.Fatal(err)
	}
}
