package precond_test

import (
	"context"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/precond"
)

// TestDiskFull checks that a write that fails (the file size limit stands
// in for a full disk: the write fails with EFBIG where a full disk fails
// with ENOSPC) names the directory and the space the factors need.
func TestDiskFull(t *testing.T) {
	const m = 200 // T alone takes 160 KiB
	ref := gaussKMM(m, 14)
	dir := t.TempDir()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	lim := old
	lim.Cur = 64 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	_, err := precond.Build(context.Background(), m, symRows(ref), 1e-3,
		precond.Options{Jitter: 1e-10, OutOfCore: &precond.OutOfCore{Dir: dir, MaxBytes: precond.DiskMemoryBytes(m, 32)}})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "OutOfCore.Dir") ||
		!strings.Contains(err.Error(), "writing panel") {
		t.Errorf("full disk: %v", err)
	}
}
