package main

import "testing"

// TestHelp checks --help of the commands against
// goldens (ingest and inspect: TestIngestHelp). The command list has no
// golden: each new command would change it.
func TestHelp(t *testing.T) {
	for _, cmd := range []string{"fit", "predict", "demo", "serve"} {
		for _, args := range [][]string{{cmd, "--help"}, {"help", cmd}} {
			code, out, errOut := runCLI(args...)
			if code != 0 || errOut != "" {
				t.Fatalf("%q: exit %d, stderr %q", args, code, errOut)
			}
			golden(t, cmd+"_help.golden", mask(t, out, t.TempDir()))
		}
	}
}
