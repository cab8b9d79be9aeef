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
