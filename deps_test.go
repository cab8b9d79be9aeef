package falkonooc_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportEdges enforces the package boundaries of STYLE.md §1, in the
// manner of Pebble's TestForbiddenImports: chunkstore and precond are
// leaves, Arrow is confined to chunkstore/ingest and tabular, and nothing
// imports the command.
func TestImportEdges(t *testing.T) {
	const mod = "github.com/falkon-ooc/falkon-ooc/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], mod) {
			imports[strings.TrimPrefix(f[0], mod)] = f[1:]
		}
	}
	forbidden := map[string][]string{
		"chunkstore": {mod + "stream", mod + "ooc", mod + "kernel", mod + "precond", "github.com/apache/arrow-go"},
		"precond":    {mod + "stream", mod + "ooc", mod + "kernel", mod + "chunkstore"},
		"stream":     {mod + "ooc", mod + "precond", "github.com/apache/arrow-go"},
		"kernel":     {mod + "stream", mod + "ooc", mod + "chunkstore", mod + "precond"},
		"ooc":        {mod + "chunkstore", "github.com/apache/arrow-go"},
		"metrics":    {mod},
		// pass is the protocol of a pass over the data: what ooc drives
		// and beam runs; it knows nothing of training or stores.
		"pass": {mod + "ooc", mod + "precond", mod + "chunkstore", "github.com/apache/arrow-go"},
		// ooc/internal/engine is the numbers of CG and its shared passes:
		// the passes themselves (data, executors) are its callers'.
		"ooc/internal/engine": {mod + "ooc", mod + "stream", mod + "chunkstore", mod + "kernel", "github.com/apache/arrow-go"},
		// internal/loss is the losses' arithmetic, which the passes
		// (pass), the fits (ooc) and the model's probabilities share.
		"internal/loss": {mod},
		// model and model/predictfile predict: nothing of training.
		"model": {mod + "ooc", mod + "precond", mod + "chunkstore"},
		// internal/container is the model and checkpoint files' layout.
		"internal/container": {mod},
		// tabular streams Parquet/CSV rows in and out for predict (kept
		// columns of any type pass through as Arrow arrays); it knows
		// nothing of stores, kernels or models.
		"tabular": {mod},
		// internal/table is what ingest and tabular share to read a
		// table file: Arrow and the record limiter, nothing else.
		"internal/table": {mod + "chunkstore", mod + "stream", mod + "ooc", mod + "kernel", mod + "precond", mod + "tabular"},
		// export/onnx writes a fitted model as a graph: it reads the
		// model, nothing of data files, passes or training.
		"export": {mod + "ooc", mod + "chunkstore", mod + "stream", mod + "precond", mod + "tabular", mod + "model/predictfile", "github.com/apache/arrow-go"},
	}
	// The passes ooc drives are pass's jobs, not a copy of the protocol.
	if !slices.Contains(imports["ooc"], mod+"pass") {
		t.Error("ooc does not import pass: its passes over the data are pass.Jobs")
	}
	// The model stands apart from training: a service that predicts
	// links kernel, stream and metrics, and nothing that fits (featenc
	// is the encoding of its categorical and time inputs, a leaf).
	modelMay := map[string]bool{
		mod + "kernel": true, mod + "stream": true, mod + "metrics": true,
		mod + "internal/fileutil": true, mod + "internal/container": true, mod + "featenc": true,
		mod + "internal/loss": true,
	}
	for _, imp := range imports["model"] {
		if strings.HasPrefix(imp, mod) && !modelMay[imp] {
			t.Errorf("model must not import %s: it may import kernel, stream, metrics, featenc, internal/fileutil, internal/container and internal/loss", imp)
		}
	}
	// The server predicts and fits nothing: neither it nor anything it
	// links (the model, the kernel) reaches training, the stores or the
	// preconditioner.
	for _, root := range []string{"serve", "serve/client"} {
		seen := map[string]bool{}
		var walk func(pkg string)
		walk = func(pkg string) {
			if seen[pkg] {
				return
			}
			seen[pkg] = true
			for _, imp := range imports[pkg] {
				if !strings.HasPrefix(imp, mod) {
					continue
				}
				dep := strings.TrimPrefix(imp, mod)
				for _, bad := range []string{"ooc", "precond", "chunkstore", "tabular", "model/predictfile"} {
					if dep == bad || strings.HasPrefix(dep, bad+"/") {
						t.Errorf("%s links %s (through %s): a server imports the model, nothing of training", root, dep, pkg)
					}
				}
				walk(dep)
			}
		}
		if _, ok := imports[root]; ok {
			walk(root)
		}
	}
	for pkg, imps := range imports {
		if strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "bench/") {
			continue
		}
		for _, imp := range imps {
			if strings.HasPrefix(imp, mod+"cmd/") {
				t.Errorf("%s imports the command %s", pkg, imp)
			}
			// Arrow: ingest reads Parquet/CSV into stores; tabular streams
			// rows for predict and writes its Parquet/CSV output; serve and
			// its client speak the Arrow IPC stream on the wire.
			if strings.HasPrefix(imp, "github.com/apache/arrow-go") && pkg != "chunkstore/ingest" && !strings.HasPrefix(pkg, "chunkstore/ingest/") && pkg != "tabular" && pkg != "internal/table" && pkg != "serve" && pkg != "serve/client" {
				t.Errorf("%s imports Arrow (%s): only chunkstore/ingest, tabular, internal/table (what they share), serve and serve/client may", pkg, imp)
			}
			for prefix, bad := range forbidden {
				if pkg != prefix && !strings.HasPrefix(pkg, prefix+"/") {
					continue
				}
				if prefix == "chunkstore" && strings.HasPrefix(pkg, "chunkstore/ingest") {
					continue
				}
				// tabular shares ingest's record limiter (internal/textlimit)
				// and its table reading (internal/table: Parquet footer
				// checks, text kinds and number parsing), so that predict
				// refuses what ingest refuses, and reads categorical levels
				// as the codes of featenc, as ingest stores them.
				if prefix == "tabular" && (imp == mod+"internal/textlimit" || imp == mod+"internal/table" || imp == mod+"featenc") {
					continue
				}
				for _, b := range bad {
					if strings.HasPrefix(imp, b) && imp != mod+pkg {
						t.Errorf("%s must not import %s", pkg, imp)
					}
				}
			}
		}
	}
}

// TestNoBeam: the Apache Beam SDK lives only in the beam/ module; the main
// module neither requires it nor links it.
func TestNoBeam(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mod), "apache/beam") {
		t.Error("go.mod requires the Apache Beam SDK: only beam/go.mod may")
	}
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/apache/beam") || strings.HasPrefix(p, "github.com/falkon-ooc/falkon-ooc/beam") {
			t.Errorf("the main module links %s", p)
		}
	}
}
