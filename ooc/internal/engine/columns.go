package engine

import (
	"sync"
	"sync/atomic"
)

// SetCols copies src (rows × k) into columns [c0, c0+k) of dst (rows × nc).
func SetCols(dst []float64, nc, c0 int, src []float64, k int) {
	for r := 0; r*k < len(src); r++ {
		copy(dst[r*nc+c0:r*nc+c0+k], src[r*k:(r+1)*k])
	}
}

// GetCols copies columns [c0, c0+k) of src (rows × nc) into dst (rows × k).
func GetCols(dst []float64, k int, src []float64, nc, c0 int) {
	for r := 0; r*k < len(dst); r++ {
		copy(dst[r*k:(r+1)*k], src[r*nc+c0:r*nc+c0+k])
	}
}

// Parallel calls fn(i) for i in [0, n) on up to workers goroutines.
func Parallel(n, workers int, fn func(i int)) {
	w := min(workers, n)
	if w <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}
