package chunkstore

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports keeps chunkstore a leaf (STYLE.md 1): within the module it
// imports only internal/mmap, internal/directio, internal/fileutil (OS
// code) and
// internal/colstats (the module's one statistics routine, shared with
// the solver) and featenc (the encoding the manifest records), each
// itself a leaf, and no Arrow.
func TestImports(t *testing.T) {
	const module = "github.com/falkon-ooc/falkon-ooc/"
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, module) && imp != module+"internal/mmap" && imp != module+"internal/directio" && imp != module+"internal/fileutil" && imp != module+"internal/colstats" && imp != module+"featenc" {
			t.Errorf("chunkstore imports %s; it must stay a leaf", imp)
		}
		if strings.Contains(imp, "arrow") {
			t.Errorf("chunkstore imports %s; Arrow stays in chunkstore/ingest", imp)
		}
	}
}
