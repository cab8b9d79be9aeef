package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/clidoc"
)

// TestCLIReference keeps docs/CLI.md's falkon-ooc section in step with the
// commands' own --help: it fails, naming the command and flag, when a
// flag's help and the reference disagree (go test ./cmd/falkon-ooc -run
// TestCLIReference -update rewrites the section). It also holds the help
// to two rules: 'falkon-ooc help' lists every command with its line, and
// every flag's help gives at most one default.
func TestCLIReference(t *testing.T) {
	code, list, errOut := runCLI("help")
	if code != 0 || errOut != "" {
		t.Fatalf("help: exit %d, stderr %q", code, errOut)
	}
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var cmds []clidoc.Command
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(n) + ` +` + regexp.QuoteMeta(commands[n].Short) + `$`).MatchString(list) {
			t.Errorf("'falkon-ooc help' does not list %s with its line %q:\n%s", n, commands[n].Short, list)
		}
		code, out, errOut := runCLI(n, "--help")
		if code != 0 || errOut != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", n, code, errOut)
		}
		_, flags := clidoc.Parse(out)
		if len(flags) == 0 {
			t.Errorf("%s --help lists no flags:\n%s", n, out)
		}
		for _, f := range flags {
			if c := strings.Count(f.Usage, "(default"); c > 1 {
				t.Errorf("falkon-ooc %s %s gives %d defaults: %s", n, f.Name, c, f.Usage)
			}
		}
		cmds = append(cmds, clidoc.Command{Name: "falkon-ooc " + n, Help: out})
	}
	begin, end := clidoc.Markers("falkon-ooc", "go test ./cmd/falkon-ooc -run TestCLIReference")
	if err := clidoc.Sync("../../docs/CLI.md", begin, end, clidoc.Render("falkon-ooc", list, cmds), *update); err != nil {
		t.Fatal(err)
	}
}
