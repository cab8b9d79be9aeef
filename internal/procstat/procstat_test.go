package procstat

import (
	"runtime"
	"testing"
)

var sink []byte

func TestCountersMove(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the counters are checked on Linux")
	}
	c0, r0 := CPUSeconds(), PeakRSS()
	// 64 MiB touched raises the peak; a spin of about 50 ms of CPU.
	sink = make([]byte, 64<<20)
	for i := range sink {
		sink[i] = byte(i)
	}
	x := 0.0
	for i := range 50_000_000 {
		x += float64(i & 7)
	}
	if x < 0 {
		t.Log(x)
	}
	c1, r1 := CPUSeconds(), PeakRSS()
	if !(c1 > c0) {
		t.Errorf("CPU seconds did not grow: %g then %g", c0, c1)
	}
	// The peak is at least what is resident now: the 64 MiB touched. (Not
	// r0 + 64 MiB: pages the runtime had already touched and freed count
	// in r0 and may be reused.)
	if r1 < 64<<20 || r1 < r0 {
		t.Errorf("peak RSS %d bytes (before: %d) after touching 64 MiB", r1, r0)
	}
}
