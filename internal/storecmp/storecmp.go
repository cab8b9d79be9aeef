// Package storecmp compares the content of two chunk stores, for tests of
// writers that must give the same store another way (a distributed
// ingest): the same chunks, bit for bit, and the same manifest, but for
// the fields that describe where the chunks are (segments, and the store
// ID computed over the blocks' offsets) and when the store was written.
package storecmp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Differ lists the manifest fields Diff ignores: they may differ between
// two stores of the same content.
var Differ = []string{"segments", "store_id", "created", "checksum"}

// Diff returns "" when the stores at a and b have the same content, else
// the first difference found. It reads the segment files as FORMAT.md
// lays them out: the blocks of every chunk, in chunk order, fill each
// segment between its 8-byte header and its index; the index records
// every block's length, CRC and codec, and its offset, which is left out.
func Diff(a, b string) (string, error) {
	return DiffIgnoring(a, b)
}

// DiffIgnoring is Diff that also ignores the manifest fields named in
// fields (such as "sources", whose paths and times differ between a
// store built from local files and one built from the same files' copies
// on object storage).
func DiffIgnoring(a, b string, fields ...string) (string, error) {
	ma, err := manifest(a, fields)
	if err != nil {
		return "", err
	}
	mb, err := manifest(b, fields)
	if err != nil {
		return "", err
	}
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	if !bytes.Equal(ja, jb) {
		return fmt.Sprintf("manifests differ:\n%s\n%s", ja, jb), nil
	}
	da, ia, err := blocks(a)
	if err != nil {
		return "", err
	}
	db, ib, err := blocks(b)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(ia, ib) {
		return "the chunks' index records (offsets left out) differ", nil
	}
	if !bytes.Equal(da, db) {
		return fmt.Sprintf("the blocks differ (%d bytes against %d)", len(da), len(db)), nil
	}
	return "", nil
}

// manifest reads dir's meta.json as a map without the fields in Differ.
func manifest(dir string, more []string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range append(Differ, more...) {
		delete(m, k)
	}
	return m, nil
}

// blocks returns the concatenated blocks of dir's segments and their
// index records with the offsets zeroed.
func blocks(dir string) (data, index []byte, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, nil, err
	}
	var m struct {
		Segments []struct {
			Name string `json:"name"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, err
	}
	for _, s := range m.Segments {
		f, err := os.ReadFile(filepath.Join(dir, s.Name))
		if err != nil {
			return nil, nil, err
		}
		if len(f) < 56 {
			return nil, nil, fmt.Errorf("%s: %d bytes", s.Name, len(f))
		}
		ft := f[len(f)-48:]
		off, n := binary.LittleEndian.Uint64(ft), binary.LittleEndian.Uint64(ft[8:])
		cols := int(binary.LittleEndian.Uint32(ft[24:]))
		if off < 8 || off+n != uint64(len(f)-48) {
			return nil, nil, fmt.Errorf("%s: bad footer", s.Name)
		}
		data = append(data, f[8:off]...)
		idx := bytes.Clone(f[off : off+n])
		rec := 8 + 24*cols
		for r := 0; r+rec <= len(idx); r += rec {
			for c := range cols {
				clear(idx[r+8+24*c : r+8+24*c+8])
			}
		}
		index = append(index, idx...)
	}
	return data, index, nil
}
