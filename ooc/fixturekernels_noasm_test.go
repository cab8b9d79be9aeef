//go:build noasm

package ooc_test

// fixtureKernels: the pure-Go twins did not write the fixtures (see
// fixturekernels_asm_test.go).
const fixtureKernels = false
