package precond

import (
	"math/rand/v2"
	"testing"
)

// TestPopulateParts holds populateParts to its contract: the parts tile
// [lo, hi) in order, there are at most workers of them and at most one
// per 16 MiB, and every inner boundary is on a huge page.
func TestPopulateParts(t *testing.T) {
	const mib = 1 << 20
	base := uintptr(1 << 30)
	for _, c := range []struct {
		lo, hi  uintptr
		workers int
		want    int // number of parts
	}{
		{base, base + 800*mib, 2, 2},
		{base + 4096, base + 800*mib, 2, 2},
		{base, base + 31*mib, 2, 1},
		{base, base + 32*mib, 2, 2},
		{base, base + 64*mib, 3, 3},
		{base, base + 64*mib, 8, 4},
		{base, base + 800*mib, 1, 1},
		{base, base + 800*mib, 0, 1},
		{base, base + 4096, 4, 1},
	} {
		parts := populateParts(c.lo, c.hi, c.workers)
		if len(parts) != c.want {
			t.Errorf("populateParts(%#x, %#x, %d): %d parts, want %d", c.lo, c.hi, c.workers, len(parts), c.want)
		}
		checkParts(t, c.lo, c.hi, c.workers, parts)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		lo := base + uintptr(rnd.IntN(1<<20))*4096
		hi := lo + uintptr(1+rnd.IntN(1<<18))*4096
		w := rnd.IntN(9)
		checkParts(t, lo, hi, w, populateParts(lo, hi, w))
	}
}

func checkParts(t *testing.T, lo, hi uintptr, workers int, parts [][2]uintptr) {
	t.Helper()
	if len(parts) == 0 || len(parts) > max(1, workers) || (len(parts) > 1 && uintptr(len(parts)) > (hi-lo)/(16<<20)) {
		t.Fatalf("populateParts(%#x, %#x, %d) = %d parts", lo, hi, workers, len(parts))
	}
	a := lo
	for i, p := range parts {
		if p[0] != a || p[1] <= p[0] {
			t.Fatalf("populateParts(%#x, %#x, %d): part %d is [%#x, %#x), want it to start at %#x and be nonempty", lo, hi, workers, i, p[0], p[1], a)
		}
		if i < len(parts)-1 && p[1]%hugePage != 0 {
			t.Fatalf("populateParts(%#x, %#x, %d): inner boundary %#x not on a huge page", lo, hi, workers, p[1])
		}
		a = p[1]
	}
	if a != hi {
		t.Fatalf("populateParts(%#x, %#x, %d) ends at %#x", lo, hi, workers, a)
	}
}

// TestPrefault checks that prefault leaves every element of the buffer
// zero and writable, for any number of workers.
func TestPrefault(t *testing.T) {
	for _, w := range []int{1, 2, 3} {
		for _, n := range []int{0, 1, 1000, 10 << 20} {
			buf := make([]float32, n)
			prefault(buf, w)
			for i, v := range buf {
				if v != 0 {
					t.Fatalf("workers %d, n %d: buf[%d] = %v after prefault", w, n, i, v)
				}
			}
			for i := range buf {
				buf[i] = 1
			}
		}
	}
}
