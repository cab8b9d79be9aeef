package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// csvRows writes a CSV with columns a,b,y and n rows.
func csvRows(t *testing.T, path string, n int) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("a,b,y\n")
	for i := range n {
		fmt.Fprintf(&sb, "%d,%d.5,%d\n", i, i%7, i%3)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentIngest (issue 15 item 4): while one ingest writes --out, a
// second one to the same --out fails at once naming the lock, and the
// first one's store is installed intact.
func TestConcurrentIngest(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	csvRows(t, in, 5000)
	out := filepath.Join(dir, "out.store")
	started := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		var once bool
		_, err := Run(context.Background(), []string{in}, Config{Out: out, Targets: []string{"y"}, BatchRows: 1024,
			Progress: func(Progress) {
				if !once {
					once = true
					close(started)
					<-release
				}
			}})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("first ingest ended early: %v", err)
	}
	t0 := time.Now()
	_, err := Run(context.Background(), []string{in}, Config{Out: out, Targets: []string{"y"}})
	if !errors.Is(err, chunkstore.ErrBusy) || !strings.Contains(err.Error(), "is writing a store there already") {
		t.Fatalf("second ingest = %v, want ErrBusy", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("second ingest took %v to fail", d)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("first ingest: %v", err)
	}
	s := readStore(t, out)
	if got := len(s.col(t, "b")); got != 5000 {
		t.Fatalf("store holds %d rows, want 5000", got)
	}
	// A third one after the first finished is refused as before, and
	// --force replaces the store.
	if _, err := Run(context.Background(), []string{in}, Config{Out: out, Targets: []string{"y"}}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("ingest over a store = %v, want already exists", err)
	}
	csvRows(t, in, 10)
	if _, err := Run(context.Background(), []string{in}, Config{Out: out, Targets: []string{"y"}, Force: true}); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if got := len(readStore(t, out).col(t, "b")); got != 10 {
		t.Fatalf("after --force: %d rows, want 10", got)
	}
	ents, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}
