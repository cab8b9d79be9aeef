// Command storediff says whether two chunk stores have the same content:
// the same chunks, bit for bit, and the same manifest but for the fields
// that say where the chunks are and when the store was written
// (internal/storecmp). bench/BEAM.md uses it to compare falkon-ooc-beam
// ingest with falkon-ooc ingest.
//
//	storediff STORE_A STORE_B
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/internal/storecmp"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: storediff STORE_A STORE_B")
		os.Exit(2)
	}
	d, err := storecmp.Diff(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "storediff:", err)
		os.Exit(2)
	}
	if d != "" {
		fmt.Println("different:", d)
		os.Exit(1)
	}
	fmt.Printf("same content (ignoring %s)\n", strings.Join(storecmp.Differ, ", "))
}
