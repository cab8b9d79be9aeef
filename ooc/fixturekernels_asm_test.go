//go:build !noasm

package ooc_test

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// fixtureKernels says whether this build runs the kernels that wrote the
// bit-for-bit fixtures in testdata (the AVX-512 assembly). The AVX2
// kernel and the pure-Go twins (-tags noasm) round exp and the sums
// differently, and a fit at λ = 1e-12 carries that into its iterates.
var fixtureKernels = runtime.GOARCH == "amd64" && cpu.X86.HasAVX512F
