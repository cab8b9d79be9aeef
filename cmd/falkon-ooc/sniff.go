package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// fileKind names what the file or directory at path is, from its first
// bytes, as a user would call it: "a CSV file", "a Parquet file", "a chunk
// store", "a fit's checkpoint", … ("" for a model or anything unknown).
func fileKind(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		if isStore(path) {
			return "a chunk store (a directory written by ingest)"
		}
		return "a directory"
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case n == 0:
		return "an empty file"
	case bytes.HasPrefix(head, []byte("FKOM")):
		return ""
	case bytes.HasPrefix(head, []byte("FKCP")):
		return "a fit's checkpoint"
	case bytes.HasPrefix(head, []byte("PAR1")):
		return "a Parquet file"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "a gzip-compressed file"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "a zstd-compressed file"
	}
	text := true
	for _, b := range head {
		if b < 0x09 || (b > 0x0d && b < 0x20) {
			text = false
			break
		}
	}
	if !text {
		return ""
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	switch {
	case bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")):
		return "a JSON file"
	case bytes.Contains(line, []byte("\t")):
		return "a TSV file"
	case bytes.Contains(line, []byte(",")) || bytes.Contains(line, []byte(";")):
		return "a CSV file"
	}
	return "a text file"
}

// loadModel loads the model file given by flag (--model, or inspect's
// argument), or says what path is instead when it is not a model.
func loadModel(path string) (*ooc.Model, error) {
	m, err := ooc.Load(path)
	if err == nil {
		return m, nil
	}
	kind := fileKind(path)
	if kind == "" {
		return nil, err
	}
	hint := "models are files written by `falkon-ooc fit` or `tune`"
	switch {
	case kind == "a fit's checkpoint":
		hint = "the model is " + strings.TrimSuffix(path, ".ckpt") + ", written when the fit ends"
	case kind == "a JSON file" && strings.HasSuffix(path, ".json"):
		hint = "a model's summary is MODEL.json; the model is " + strings.TrimSuffix(path, ".json")
	case strings.HasPrefix(kind, "a chunk store"):
		hint = "a store is the data a model is fitted on: `falkon-ooc fit --out MODEL " + filepath.Clean(path) + "` writes one"
	}
	return nil, fmt.Errorf("%s is %s, not a model (%s)", path, kind, hint)
}
