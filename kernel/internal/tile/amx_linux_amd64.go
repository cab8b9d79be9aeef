//go:build linux && amd64 && !noasm

package tile

import (
	"syscall"

	"golang.org/x/sys/cpu"
)

// hasAMX: the CPU has AMX-BF16 and Linux granted this process the tile
// data state (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA; Linux
// 5.16 and later). A grant covers every thread of the process.
var hasAMX = amxInit()

func amxInit() bool {
	if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 || !cpu.X86.HasAVX512F {
		return false
	}
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}

// amxCfg is the tile configuration of gramBF16AMXAsm (LDTILECFG's 64
// bytes): palette 1, tiles 0–7 all 16 rows of 64 bytes.
var amxCfg = func() (c [64]byte) {
	c[0] = 1
	for t := 0; t < 8; t++ {
		c[16+2*t] = 64 // colsb, little-endian uint16
		c[48+t] = 16   // rows
	}
	return c
}()

// gramBF16AMXAsm is GramBF16 on the AMX unit: lda and bstride in bytes
// (the stride between chunks of the centres: np·1 KiB), b at panel p0 of
// chunk 0. It configures the tiles, runs, and releases them within the
// call (an assembly function is never preempted, so the goroutine keeps
// its thread and tile state throughout).
//
//go:noescape
func gramBF16AMXAsm(dst *float32, ldd int, a *uint16, lda, rows, kc int, b *uint16, bstride, npanels int, cfg *byte)

func gramBF16AMX(dst []float32, ldd int, a []uint16, rows, kc int, b []uint16, np, p0, ncols int) {
	gramBF16AMXAsm(&dst[0], ldd, &a[0], kc*KB*2, rows, kc, &b[p0*NRB*KB], np*NRB*KB*2, ncols/NRB, &amxCfg[0])
}
