//go:build !linux || !amd64 || noasm

package tile

// Only Linux grants the AMX tile state here; elsewhere GramBF16 and
// KernelDistBF16 run their Go loops.
const hasAMX = false
