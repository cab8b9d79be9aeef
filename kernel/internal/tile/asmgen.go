//go:build ignore

// asmgen writes tile_amd64.s: go run asmgen.go > tile_amd64.s
//
// The AVX-512 and AVX2 variants of each routine share one template; the
// exp is the same algorithm in both (Cody–Waite reduction by ln 2, a
// Taylor polynomial, the exponent added in integer arithmetic, results
// below 2^-1021 (float64) or 2^-125 (float32) flushed to zero), so the two
// variants give bit-identical kernel values.
package main

import (
	"fmt"
	"math"
	"os"
	"strings"
)

var out strings.Builder

func p(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// precision-dependent names
type prec struct {
	name     string // "64" or "32"
	sfx      string // D or S (as in VADDPD, VADDPS)
	esize    int    // bytes per element
	bcast    string // VBROADCASTSD / VBROADCASTSS
	sll      string // VPSLLQ $52 / VPSLLD $23
	padd     string // VPADDQ / VPADDD
	deg      int    // Taylor degree of exp
	tab      string // constant table symbol
	frameSz  int    // applyDist frame size
	xnOff    int    // applyDist xn offset
	fsz      int    // float arg size
	dotFrame int    // applyDot frame size
}

var p64 = prec{"64", "D", 8, "VBROADCASTSD", "VPSLLQ $52", "VPADDQ", 13, "expc64", 64, 24, 8, 40}
var p32 = prec{"32", "S", 4, "VBROADCASTSS", "VPSLLD $23", "VPADDD", 7, "expc32", 48, 24, 4, 32}

// isa-dependent names
type isa struct {
	name  string // AVX512 / AVX2
	reg   string // Z / Y
	vbyte int    // bytes per vector
}

var avx512 = isa{"AVX512", "Z", 64}
var avx2 = isa{"AVX2", "Y", 32}

func constNames(pr prec) []string {
	n := []string{"neg2", "log2e", "shifter", "ln2hi", "ln2lo", "maxarg", "one", "zero"}
	n = append(n, "log2e16", "ln2hi16", "ln2lo16", "maxargt", "sixteenth")
	for k := 2; k <= pr.deg; k++ {
		n = append(n, fmt.Sprintf("q%d", k))
	}
	return n
}

func constVal(pr prec, name string) float64 {
	switch name {
	case "neg2":
		return -2
	case "log2e":
		return math.Log2E
	case "shifter":
		if pr.esize == 8 {
			return 0x1.8p52
		}
		return 0x1.8p23
	case "ln2hi":
		if pr.esize == 8 {
			return 6.93147180369123816490e-01
		}
		return 0.693359375
	case "ln2lo":
		if pr.esize == 8 {
			return 1.90821492927058770002e-10
		}
		return -2.12194440e-4
	case "maxarg":
		if pr.esize == 8 {
			return 708
		}
		return 86
	case "log2e16":
		return 16 * math.Log2E
	case "ln2hi16":
		return constVal(pr, "ln2hi") / 16
	case "ln2lo16":
		return constVal(pr, "ln2lo") / 16
	case "maxargt":
		if pr.esize == 8 {
			return 707
		}
		return 86
	case "one":
		return 1
	case "sixteenth":
		return 1.0 / 16
	case "zero":
		return 0
	}
	var k int
	fmt.Sscanf(name, "q%d", &k)
	f := 1.0
	for i := 2; i <= k; i++ {
		f *= float64(i)
	}
	if k%2 == 1 {
		return -1 / f
	}
	return 1 / f
}

func constOff(pr prec, name string) int {
	for i, n := range constNames(pr) {
		if n == name {
			return i * 32
		}
	}
	panic(name)
}

func csym(pr prec, name string) string {
	return fmt.Sprintf("%s<>+%d(SB)", pr.tab, constOff(pr, name))
}

// bcastConsts broadcasts the kernel function's constants names into Z31,
// Z30, … in order (c1 and c2 from (DX) and 32(DX), the parameters the
// routine was given; the others from their symbols) and returns the
// register of each.
func bcastConsts(pr prec, names ...string) map[string]string {
	c := map[string]string{}
	for i, n := range names {
		src := ""
		switch n {
		case "c1":
			src = "(DX)"
		case "c2":
			src = "32(DX)"
		default:
			src = csym(pr, n)
		}
		r := fmt.Sprintf("Z%d", 31-i)
		p("\t%s %s, %s", pr.bcast, src, r)
		c[n] = r
	}
	return c
}

func tables() {
	for _, pr := range []prec{p64, p32} {
		names := constNames(pr)
		for i, n := range names {
			v := constVal(pr, n)
			for r := 0; r < 32/pr.esize; r++ {
				off := i*32 + r*pr.esize
				if pr.esize == 8 {
					p("DATA %s<>+%d(SB)/8, $0x%016x // %s = %v", pr.tab, off, math.Float64bits(v), n, v)
				} else {
					p("DATA %s<>+%d(SB)/4, $0x%08x // %s = %v", pr.tab, off, math.Float32bits(float32(v)), n, float32(v))
				}
			}
		}
		p("GLOBL %s<>(SB), RODATA|NOPTR, $%d", pr.tab, len(names)*32)
		p("")
	}
	// 2^(j/16), j = 0..15, for the table-driven float64 exp (AVX-512).
	for j := 0; j < 16; j++ {
		v := math.Exp2(float64(j) / 16)
		p("DATA exptab64<>+%d(SB)/8, $0x%016x // 2^(%d/16) = %v", 8*j, math.Float64bits(v), j, v)
	}
	p("GLOBL exptab64<>(SB), RODATA|NOPTR, $128")
	p("")
	for j := 0; j < 16; j++ {
		v := float32(math.Exp2(float64(j) / 16))
		p("DATA exptab32<>+%d(SB)/4, $0x%08x // 2^(%d/16) = %v", 4*j, math.Float32bits(v), j, v)
	}
	p("GLOBL exptab32<>(SB), RODATA|NOPTR, $64")
	p("")
}

// tableExp reports whether the code uses the table-driven exp (AVX-512):
// 16 entries 2^(j/16) held in two zmm registers (float64, VPERMI2PD) or
// one (float32, VPERMPS), which shortens the Taylor polynomial from degree
// 13 to 7 (float64; |t| ≤ ln2/32: remainder t⁸/8! < 1.3e-18) or from 7 to 3
// (float32; t⁴/4! < 1e-8) and so takes 5 resp. 3 FMAs per vector off the
// FMA pipe, the kernel's bottleneck. AVX2 has no 16-entry permute.
func tableExp(pr prec, is isa) bool { return is.name == "AVX512" }

// tableDeg is the degree of the polynomial of the table-driven exp.
func tableDeg(pr prec) int {
	if pr.esize == 8 {
		return 7
	}
	return 3
}

// gram emits gram{64,32}{AVX512,AVX2}(dst, ldd, x, rows, d, cp, npanels).
// Panels are 128 bytes wide per feature (16 float64 or 32 float32). The
// AVX-512 kernel covers a panel with 2 zmm per row; AVX2 covers it in two
// halves of 2 ymm per row. MR = 4 rows, so 8 accumulators.
func gram(pr prec, is isa) {
	fn := "gram" + pr.name + is.name
	R := is.reg
	p("// func %s(dst *float%s, ldd int, x *float%s, rows, d int, cp *float%s, npanels int)", fn, pr.name, pr.name, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-56", fn)
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ ldd+8(FP), R8")
	p("\tSHLQ $%d, R8", log2(pr.esize)) // ldd in bytes
	p("\tMOVQ x+16(FP), SI")
	p("\tMOVQ rows+24(FP), R9")
	p("\tMOVQ d+32(FP), R10")
	p("\tMOVQ cp+40(FP), DX")
	p("\tMOVQ npanels+48(FP), R11")
	p("\tMOVQ R10, R12")
	p("\tSHLQ $%d, R12", log2(pr.esize)) // x row stride in bytes
	p("\tIMULQ R12, R9")
	p("\tADDQ SI, R9") // end of x
	p("%s_panel:", fn)
	p("\tTESTQ R11, R11")
	p("\tJZ %s_done", fn)
	halves := []int{0}
	if is.name == "AVX2" {
		halves = []int{0, 64}
	}
	for _, h := range halves {
		lbl := fmt.Sprintf("%s_h%d", fn, h)
		p("\tMOVQ SI, AX")
		p("\tMOVQ DI, BX")
		p("%s_rows:", lbl)
		p("\tCMPQ AX, R9")
		p("\tJAE %s_next", lbl)
		for a := 0; a < 8; a++ {
			p("\tVXORP%s %s%d, %s%d, %s%d", pr.sfx, R, a, R, a, R, a)
		}
		p("\tMOVQ AX, R14")
		p("\tLEAQ (AX)(R12*2), R15")
		p("\tMOVQ DX, CX")
		p("\tMOVQ R10, R13")
		p("%s_k:", lbl)
		p("\tVMOVUP%s %d(CX), %s8", pr.sfx, h, R)
		p("\tVMOVUP%s %d(CX), %s9", pr.sfx, h+is.vbyte, R)
		src := []string{"(R14)", "(R14)(R12*1)", "(R15)", "(R15)(R12*1)"}
		for r := 0; r < 4; r++ {
			p("\t%s %s, %s%d", pr.bcast, src[r], R, 10+r)
			p("\tVFMADD231P%s %s8, %s%d, %s%d", pr.sfx, R, R, 10+r, R, 2*r)
			p("\tVFMADD231P%s %s9, %s%d, %s%d", pr.sfx, R, R, 10+r, R, 2*r+1)
		}
		p("\tADDQ $%d, R14", pr.esize)
		p("\tADDQ $%d, R15", pr.esize)
		p("\tADDQ $128, CX")
		p("\tDECQ R13")
		p("\tJNZ %s_k", lbl)
		dst := []string{"(BX)", "(BX)(R8*1)", "(R14)", "(R14)(R8*1)"}
		p("\tLEAQ (BX)(R8*2), R14")
		for r := 0; r < 4; r++ {
			p("\tVMOVUP%s %s%d, %d%s", pr.sfx, R, 2*r, h, dst[r])
			p("\tVMOVUP%s %s%d, %d%s", pr.sfx, R, 2*r+1, h+is.vbyte, dst[r])
		}
		p("\tLEAQ (AX)(R12*4), AX")
		p("\tLEAQ (BX)(R8*4), BX")
		p("\tJMP %s_rows", lbl)
		p("%s_next:", lbl)
	}
	p("\tMOVQ R10, R14")
	p("\tSHLQ $7, R14")
	p("\tADDQ R14, DX")
	p("\tADDQ $128, DI")
	p("\tDECQ R11")
	p("\tJMP %s_panel", fn)
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// applyDist emits applyDist{64,32}{AVX512,AVX2}(buf, cn, n, xn, pc, mode):
// buf_j = f(max(xn + cn_j - 2 buf_j, 0)), where mode 0 is the Gaussian form
// f(s) = exp(-s) and mode 1 takes s = sqrt(r²) and multiplies by the
// factor 1 + s(c1 + c2 s); pc points to c1 and c2, each repeated to fill
// 32 bytes.
func applyDist(pr prec, is isa) {
	fn := "applyDist" + pr.name + is.name
	p("// func %s(buf, cn *float%s, n int, xn float%s, pc *float%s, mode int)", fn, pr.name, pr.name, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-48", fn)
	p("\tMOVQ buf+0(FP), SI")
	p("\tMOVQ cn+8(FP), DI")
	p("\tMOVQ n+16(FP), CX")
	p("\tMOVQ pc+32(FP), DX")
	lanes := is.vbyte / pr.esize
	p("\tSHRQ $%d, CX", log2(2*lanes))
	p("\tJZ %s_done", fn)
	var c map[string]string
	if is.name == "AVX512" {
		p("\t%s xn+24(FP), Z31", pr.bcast)
		c = loadConsts512(pr, 30, 23, "DX")
		c["xn"] = "Z31"
	} else {
		p("\t%s xn+24(FP), Y15", pr.bcast)
		c = consts256(pr, "DX", []string{"Y14", "Y13", "Y12", "Y11", "Y10", "Y9", "Y8"})
		c["xn"] = "Y15"
	}
	p("\tMOVQ mode+40(FP), AX")
	p("\tTESTQ AX, AX")
	p("\tJNZ %s_m1", fn)
	for mode := 0; mode < 2; mode++ {
		lbl := fmt.Sprintf("%s_m%d", fn, mode)
		p("%s:", lbl)
		var chains [2][]string
		for ch := 0; ch < 2; ch++ {
			R := is.reg
			r := func(i int) string { return fmt.Sprintf("%s%d", R, 4*ch+i) }
			off := ch * is.vbyte
			chains[ch] = distChain(pr, is, c, chainOps{
				load:  fmt.Sprintf("%d(SI)", off),
				acc:   r(0),
				cn:    fmt.Sprintf("%d(DI)", off),
				xn:    c["xn"],
				temps: [3]string{r(1), r(2), r(3)},
				mask:  fmt.Sprintf("K%d", ch+1),
				store: fmt.Sprintf("%d(SI)", off),
			}, mode == 1)
		}
		for i := 0; i < len(chains[0]); i++ {
			p("\t%s", chains[0][i])
			p("\t%s", chains[1][i])
		}
		p("\tADDQ $%d, SI", 2*is.vbyte)
		p("\tADDQ $%d, DI", 2*is.vbyte)
		p("\tDECQ CX")
		p("\tJNZ %s", lbl)
		p("\tJMP %s_done", fn)
	}
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// loadConsts512 broadcasts c1, c2 (from the params block at pcReg) and
// the exp constants into nreg Z registers counting down from Z<top>; the
// rest stay in memory, used as embedded-broadcast operands ("BCST:").
func loadConsts512(pr prec, top, nreg int, pcReg string) map[string]string {
	c := map[string]string{}
	names := []string{"c1", "c2", "neg2", "zero", "log2e", "shifter", "ln2hi", "ln2lo", "maxarg", "one"}
	deg := pr.deg
	if tableExp(pr, avx512) {
		names = []string{"c1", "c2", "neg2", "zero", "log2e16", "shifter", "ln2hi16", "ln2lo16", "maxargt", "one", "tlo", "thi"}
		if pr.esize == 4 {
			names = names[:len(names)-1] // one register holds the table
		}
		deg = tableDeg(pr)
	}
	for k := deg; k >= 2; k-- {
		names = append(names, fmt.Sprintf("q%d", k))
	}
	if tableExp(pr, avx512) {
		names = append(names, "sixteenth")
	}
	for i, n := range names {
		src := ""
		switch n {
		case "c1":
			src = fmt.Sprintf("(%s)", pcReg)
		case "c2":
			src = fmt.Sprintf("32(%s)", pcReg)
		case "tlo":
			src = fmt.Sprintf("exptab%s<>+0(SB)", pr.name)
		case "thi":
			src = "exptab64<>+64(SB)"
		default:
			src = csym(pr, n)
		}
		if i < nreg {
			r := fmt.Sprintf("Z%d", top-i)
			if n == "tlo" || n == "thi" {
				p("\tVMOVUP%s %s, %s", pr.sfx, src, r)
			} else {
				p("\t%s %s, %s", pr.bcast, src, r)
			}
			c[n] = r
		} else {
			if n == "c1" || n == "c2" || n == "tlo" || n == "thi" {
				panic(n + " must be in a register")
			}
			c[n] = "BCST:" + src
		}
	}
	return c
}

// consts256 assigns the first constants to the given Y registers (loaded
// here) and leaves the rest as 32-byte memory operands.
func consts256(pr prec, pcReg string, regs []string) map[string]string {
	c := map[string]string{
		"c1": fmt.Sprintf("(%s)", pcReg),
		"c2": fmt.Sprintf("32(%s)", pcReg),
	}
	names := []string{"zero", "neg2", "shifter", "log2e", "one", "maxarg", "ln2hi", "ln2lo"}
	for k := pr.deg; k >= 2; k-- {
		names = append(names, fmt.Sprintf("q%d", k))
	}
	for i, n := range names {
		if i < len(regs) {
			p("\tVMOVUP%s %s, %s", pr.sfx, csym(pr, n), regs[i])
			c[n] = regs[i]
		} else {
			c[n] = csym(pr, n)
		}
	}
	return c
}

// chainOps are the operands of one vector of kernel values.
type chainOps struct {
	load  string    // memory operand of the dot products, "" if already in acc
	acc   string    // register of the dot products (clobbered)
	cn    string    // centre norms: register or memory operand
	xn    string    // row norm: register, "BCST:mem" (AVX-512) or "LOAD:mem" (broadcast into temps[0])
	temps [3]string // scratch registers
	mask  string    // opmask register (AVX-512)
	store string    // destination memory operand
}

// distChain returns the instructions computing one vector of distance
// kernel values (see applyDist). Every variant and caller runs exactly this
// sequence, so all give bit-identical results.
func distChain(pr prec, is isa, c map[string]string, o chainOps, general bool) []string {
	s := pr.sfx
	var l []string
	e := func(format string, args ...any) { l = append(l, fmt.Sprintf(format, args...)) }
	// op emits instr with its first (source) operand possibly an
	// embedded broadcast.
	op := func(instr, src string, rest ...string) {
		if strings.HasPrefix(src, "BCST:") {
			instr += ".BCST"
			src = strings.TrimPrefix(src, "BCST:")
		}
		e("%s %s", instr, strings.Join(append([]string{src}, rest...), ", "))
	}
	// mov loads a constant into a register.
	mov := func(src, dst string) {
		switch {
		case strings.HasPrefix(src, "BCST:"):
			e("%s %s, %s", pr.bcast, strings.TrimPrefix(src, "BCST:"), dst)
		case strings.HasPrefix(src, "Y") || strings.HasPrefix(src, "Z"):
			e("VMOVAP%s %s, %s", s, src, dst)
		default:
			e("VMOVUP%s %s, %s", s, src, dst)
		}
	}
	acc, t1, t2, t3 := o.acc, o.temps[0], o.temps[1], o.temps[2]
	if o.load != "" {
		e("VMOVUP%s %s, %s", s, o.load, acc)
	}
	if tableExp(pr, is) {
		return append(l, tableChain(pr, c, o, general)...)
	}
	switch {
	case strings.HasPrefix(o.xn, "BCST:"):
		op("VADDP"+s, o.xn, o.cn, t1) // t1 = cn + xn
	case strings.HasPrefix(o.xn, "LOAD:"):
		e("%s %s, %s", pr.bcast, strings.TrimPrefix(o.xn, "LOAD:"), t1)
		op("VADDP"+s, o.cn, t1, t1)
	default:
		op("VADDP"+s, o.cn, o.xn, t1)
	}
	op("VFMADD231P"+s, c["neg2"], acc, t1) // r2 = xn + cn - 2 g
	op("VMAXP"+s, c["zero"], t1, t1)
	if general {
		e("VSQRTP%s %s, %s", s, t1, t1)
	}
	if is.name == "AVX512" {
		op("VCMPP"+s, "$2", c["maxarg"], t1, o.mask) // s <= maxarg
		l[len(l)-1] = fixCmp(l[len(l)-1])
	}
	mov(c["shifter"], acc)
	op("VFNMADD231P"+s, c["log2e"], t1, acc) // z = shifter - s log2e
	op("VSUBP"+s, c["shifter"], acc, t2)     // kf
	e("VMOVAP%s %s, %s", s, t1, t3)
	op("VFMADD231P"+s, c["ln2hi"], t2, t3) // t = s + kf hi
	op("VFMADD231P"+s, c["ln2lo"], t2, t3) // t += kf lo
	mov(c[fmt.Sprintf("q%d", pr.deg)], t2)
	for q := pr.deg - 1; q >= 2; q-- {
		op("VFMADD213P"+s, c[fmt.Sprintf("q%d", q)], t3, t2)
	}
	op("VFMSUB213P"+s, c["one"], t3, t2) // P = tP - 1
	op("VFMADD213P"+s, c["one"], t3, t2) // P = tP + 1
	e("%s, %s, %s", pr.sll, acc, acc)
	e("%s %s, %s, %s", pr.padd, acc, t2, t2)
	if general {
		mov(c["c2"], acc)
		op("VFMADD213P"+s, c["c1"], t1, acc)
		op("VFMADD213P"+s, c["one"], t1, acc)
	}
	if is.name == "AVX512" {
		if general {
			e("VMULP%s.Z %s, %s, %s, %s", s, acc, t2, o.mask, t2)
		} else {
			e("VMOVAP%s.Z %s, %s, %s", s, t2, o.mask, t2)
		}
	} else {
		if general {
			e("VMULP%s %s, %s, %s", s, acc, t2, t2)
		}
		op("VCMPP"+s, "$2", c["maxarg"], t1, t3)
		l[len(l)-1] = fixCmp(l[len(l)-1])
		e("VANDP%s %s, %s, %s", s, t3, t2, t2)
	}
	e("VMOVUP%s %s, %s", s, t2, o.store)
	return l
}

// tableChain is distChain for float64 AVX-512 with the table-driven exp:
// kf = round(−16 s log2 e), t = s + kf·ln2/16 (two parts), T' = 2^(kf>>4)·
// 2^((kf&15)/16) assembled from the table and the exponent bits, and
// exp(−s) = T' + T'·(exp(−t) − 1) with exp(−t) − 1 = t·Σ_{k=1..7} (−t)^(k−1)/k!.
// Results for s > 707 are flushed to zero (the exponent addition needs
// 2^(kf>>4) normal).
func tableChain(pr prec, c map[string]string, o chainOps, general bool) []string {
	x := pr.sfx
	var l []string
	e := func(format string, args ...any) { l = append(l, fmt.Sprintf(format, args...)) }
	op := func(instr, src string, rest ...string) {
		if strings.HasPrefix(src, "BCST:") {
			instr += ".BCST"
			src = strings.TrimPrefix(src, "BCST:")
		}
		e("%s %s", instr, strings.Join(append([]string{src}, rest...), ", "))
	}
	mov := func(src, dst string) {
		if strings.HasPrefix(src, "BCST:") {
			e("%s %s, %s", pr.bcast, strings.TrimPrefix(src, "BCST:"), dst)
		} else {
			e("VMOVAP%s %s, %s", x, src, dst)
		}
	}
	acc, t1, t2, t3 := o.acc, o.temps[0], o.temps[1], o.temps[2]
	if strings.HasPrefix(o.xn, "BCST:") {
		op("VADDP"+x, o.xn, o.cn, t1)
	} else {
		op("VADDP"+x, o.cn, o.xn, t1)
	}
	op("VFMADD231P"+x, c["neg2"], acc, t1)
	op("VMAXP"+x, c["zero"], t1, t1)
	if general {
		e("VSQRTP%s %s, %s", x, t1, t1)
	}
	e("VCMPP%s $2, %s, %s, %s", x, c["maxargt"], t1, o.mask)
	mov(c["shifter"], acc)
	op("VFNMADD231P"+x, c["log2e16"], t1, acc) // z = shifter − 16 s log2e
	op("VSUBP"+x, c["shifter"], acc, t2)       // kf
	e("VMOVAP%s %s, %s", x, t1, t3)
	op("VFMADD231P"+x, c["ln2hi16"], t2, t3) // t = s + kf ln2hi/16
	op("VFMADD231P"+x, c["ln2lo16"], t2, t3) // t += kf ln2lo/16
	if general {
		mov(c["c2"], t2)
		op("VFMADD213P"+x, c["c1"], t1, t2)
		op("VFMADD213P"+x, c["one"], t1, t2) // factor 1 + s(c1 + c2 s)
	}
	// The Gaussian (t2 free) scales by 2^(kf>>4) at the end with
	// VSCALEF: kf/16 is exact and VSCALEF takes its floor, and
	// 2^n·(T + T·P') rounds as 2^n·T + 2^n·T·P' does (no result of
	// s ≤ maxargt is subnormal), so the values are those of adding
	// kf>>4 to T's exponent first, in two instructions fewer (the
	// shifts, the add and the masking move). The general kernels need
	// t2 for their factor and add the exponent in integers.
	scalef := !general
	if pr.esize == 8 {
		e("VMOVAPD %s, %s", acc, t1)
		e("VPERMI2PD %s, %s, %s", c["thi"], c["tlo"], t1) // T = 2^((kf&15)/16)
		if !scalef {
			e("VPSRAQ $4, %s, %s", acc, acc)
			e("VPSLLQ $52, %s, %s", acc, acc)
			e("VPADDQ %s, %s, %s", acc, t1, t1) // T' = 2^(kf>>4) T
		}
	} else {
		e("VPERMPS %s, %s, %s", c["tlo"], acc, t1)
		if !scalef {
			e("VPSRAD $4, %s, %s", acc, acc)
			e("VPSLLD $23, %s, %s", acc, acc)
			e("VPADDD %s, %s, %s", acc, t1, t1)
		}
	}
	if scalef {
		op("VMULP"+x, c["sixteenth"], t2, t2) // kf/16
	}
	deg := tableDeg(pr)
	mov(c[fmt.Sprintf("q%d", deg)], acc)
	for q := deg - 1; q >= 2; q-- {
		op("VFMADD213P"+x, c[fmt.Sprintf("q%d", q)], t3, acc)
	}
	op("VFMSUB213P"+x, c["one"], t3, acc)        // P = q1 + t(...)
	e("VMULP%s %s, %s, %s", x, t3, acc, acc)     // P' = t P = exp(−t) − 1
	e("VFMADD213P%s %s, %s, %s", x, t1, t1, acc) // T' P' + T'
	switch {
	case general:
		e("VMULP%s.Z %s, %s, %s, %s", x, t2, acc, o.mask, acc)
	default:
		e("VSCALEFP%s.Z %s, %s, %s, %s", x, t2, acc, o.mask, acc) // 2^(kf>>4) (T + T P')
	}
	e("VMOVUP%s %s, %s", x, acc, o.store)
	return l
}

// fixCmp moves a .BCST suffix that op attached for the second operand of a
// compare (whose first operand is the immediate) into place.
func fixCmp(line string) string {
	if strings.Contains(line, "BCST:") {
		line = strings.Replace(line, "BCST:", "", 1)
		i := strings.Index(line, " ")
		line = line[:i] + ".BCST" + line[i:]
	}
	return line
}

// kern emits kern{64,32}{AVX512,AVX2}(dst, ldd, x, rows, d, cp, npanels,
// xn, cn, pc, mode): the Gram micro-kernel followed, while the 4-row block
// is still in registers, by the distance kernel of applyDist.
func kern(pr prec, is isa) {
	fn := "kern" + pr.name + is.name
	R := is.reg
	p("// func %s(dst *float%s, ldd int, x *float%s, rows, d int, cp *float%s, npanels int, xn, cn, pc *float%s, mode int)", fn, pr.name, pr.name, pr.name, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-88", fn)
	var c map[string]string
	if is.name == "AVX512" {
		p("\tMOVQ pc+72(FP), DX")
		c = loadConsts512(pr, 31, 16, "DX")
	} else {
		c = consts256(pr, "DX", []string{"Y14", "Y15"})
		c["c1"], c["c2"] = "(R15)", "32(R15)"
	}
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ ldd+8(FP), R8")
	p("\tSHLQ $%d, R8", log2(pr.esize))
	p("\tMOVQ x+16(FP), SI")
	p("\tMOVQ rows+24(FP), R9")
	p("\tMOVQ d+32(FP), R12")
	p("\tSHLQ $%d, R12", log2(pr.esize))
	p("\tMOVQ cp+40(FP), DX")
	p("\tMOVQ npanels+48(FP), R11")
	p("\tIMULQ R12, R9")
	p("\tADDQ SI, R9")
	p("%s_panel:", fn)
	p("\tTESTQ R11, R11")
	p("\tJZ %s_done", fn)
	halves := []int{0}
	if is.name == "AVX2" {
		halves = []int{0, 64}
	}
	for _, h := range halves {
		lbl := fmt.Sprintf("%s_h%d", fn, h)
		p("\tMOVQ SI, AX")
		p("\tMOVQ DI, BX")
		p("\tMOVQ xn+56(FP), R10")
		p("%s_rows:", lbl)
		p("\tCMPQ AX, R9")
		p("\tJAE %s_next", lbl)
		for a := 0; a < 8; a++ {
			p("\tVXORP%s %s%d, %s%d, %s%d", pr.sfx, R, a, R, a, R, a)
		}
		p("\tMOVQ AX, R14")
		p("\tLEAQ (AX)(R12*2), R15")
		p("\tMOVQ DX, CX")
		p("\tMOVQ d+32(FP), R13")
		p("%s_k:", lbl)
		p("\tVMOVUP%s %d(CX), %s8", pr.sfx, h, R)
		p("\tVMOVUP%s %d(CX), %s9", pr.sfx, h+is.vbyte, R)
		src := []string{"(R14)", "(R14)(R12*1)", "(R15)", "(R15)(R12*1)"}
		for r := 0; r < 4; r++ {
			p("\t%s %s, %s%d", pr.bcast, src[r], R, 10+r)
			p("\tVFMADD231P%s %s8, %s%d, %s%d", pr.sfx, R, R, 10+r, R, 2*r)
			p("\tVFMADD231P%s %s9, %s%d, %s%d", pr.sfx, R, R, 10+r, R, 2*r+1)
		}
		p("\tADDQ $%d, R14", pr.esize)
		p("\tADDQ $%d, R15", pr.esize)
		p("\tADDQ $128, CX")
		p("\tDECQ R13")
		p("\tJNZ %s_k", lbl)
		// Kernel function on the 4 × (2 vectors) block.
		p("\tMOVQ DI, R13")
		p("\tSUBQ dst+0(FP), R13")
		p("\tADDQ cn+64(FP), R13")
		if is.name == "AVX512" {
			p("\tVMOVUP%s %d(R13), %s8", pr.sfx, h, R)
			p("\tVMOVUP%s %d(R13), %s9", pr.sfx, h+is.vbyte, R)
		} else {
			p("\tMOVQ pc+72(FP), R15")
		}
		p("\tLEAQ (BX)(R8*2), R14")
		dst := []string{"(BX)", "(BX)(R8*1)", "(R14)", "(R14)(R8*1)"}
		p("\tCMPQ mode+80(FP), $0")
		p("\tJNE %s_gen", lbl)
		for mode := 0; mode < 2; mode++ {
			if mode == 1 {
				p("%s_gen:", lbl)
			}
			for r := 0; r < 4; r++ {
				var chains [2][]string
				for hv := 0; hv < 2; hv++ {
					o := chainOps{
						acc:   fmt.Sprintf("%s%d", R, 2*r+hv),
						cn:    fmt.Sprintf("%s%d", R, 8+hv),
						store: fmt.Sprintf("%d%s", h+hv*is.vbyte, dst[r]),
					}
					if is.name == "AVX512" {
						o.xn = fmt.Sprintf("BCST:%d(R10)", r*pr.esize)
						o.temps = [3]string{fmt.Sprintf("Z%d", 10+3*hv), fmt.Sprintf("Z%d", 11+3*hv), fmt.Sprintf("Z%d", 12+3*hv)}
						o.mask = fmt.Sprintf("K%d", hv+1)
					} else {
						// 16 registers: the centre norms stay in
						// memory and the row norm is broadcast into
						// the first temporary, freeing Y8, Y9 and
						// Y13 for a second chain.
						o.cn = fmt.Sprintf("%d(R13)", h+hv*is.vbyte)
						o.xn = fmt.Sprintf("LOAD:%d(R10)", r*pr.esize)
						o.temps = [3]string{"Y10", "Y11", "Y12"}
						if hv == 1 {
							o.temps = [3]string{"Y8", "Y9", "Y13"}
						}
					}
					chains[hv] = distChain(pr, is, c, o, mode == 1)
				}
				for i := range chains[0] {
					p("\t%s", chains[0][i])
					p("\t%s", chains[1][i])
				}
			}
			if mode == 0 {
				p("\tJMP %s_adv", lbl)
			}
		}
		p("%s_adv:", lbl)
		p("\tADDQ $%d, R10", 4*pr.esize)
		p("\tLEAQ (AX)(R12*4), AX")
		p("\tLEAQ (BX)(R8*4), BX")
		p("\tJMP %s_rows", lbl)
		p("%s_next:", lbl)
	}
	p("\tMOVQ d+32(FP), R14")
	p("\tSHLQ $7, R14")
	p("\tADDQ R14, DX")
	p("\tADDQ $128, DI")
	p("\tDECQ R11")
	p("\tJMP %s_panel", fn)
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// kern8 emits kern32AVX512 (same arguments and results as kern) with
// micro-tiles of 8 rows × 32 centres: 16 accumulators, twice the 8 that
// the FMA units' latency × throughput needs, so that the Gram chain keeps
// the FMA units busy while the kernel function of the tile before drains
// (with 8, the OoO window could not overlap the two and the fused kernel
// ran at about 65 % of its port limit). The last 4 rows of a row count
// that is not a multiple of 8 take a 4-row tile with the same registers.
// Each accumulator still adds feature 0 first, one FMA a feature, and the
// kernel function is distChain's instruction sequence, so every value is
// bit for bit the 4-row kernel's (TestKernelDist holds it to Gram32 +
// ApplyDist32). Registers: Z0–Z15 accumulators, Z16–Z17 the centre panel
// (then its norms), Z18–Z23 broadcasts and temporaries, Z24–Z31 constants;
// the other constants are embedded-broadcast memory operands.
func kern8(pr prec) {
	is := avx512
	fn := "kern" + pr.name + is.name
	p("// func %s(dst *float%s, ldd int, x *float%s, rows, d int, cp *float%s, npanels int, xn, cn, pc *float%s, mode int)", fn, pr.name, pr.name, pr.name, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-88", fn)
	p("\tMOVQ pc+72(FP), DX")
	c := bcastConsts(pr, "c1", "c2", "neg2", "zero", "maxargt", "shifter", "log2e16", "ln2hi16")
	for _, n := range []string{"ln2lo16", "one", "q3", "q2", "sixteenth"} {
		c[n] = "BCST:" + csym(pr, n)
	}
	c["tlo"] = "exptab" + pr.name + "<>+0(SB)"
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ ldd+8(FP), R8")
	p("\tSHLQ $%d, R8", log2(pr.esize))
	p("\tMOVQ x+16(FP), SI")
	p("\tMOVQ rows+24(FP), R9")
	p("\tMOVQ d+32(FP), R12")
	p("\tSHLQ $%d, R12", log2(pr.esize))
	p("\tMOVQ cp+40(FP), DX")
	p("\tMOVQ npanels+48(FP), R11")
	p("\tIMULQ R12, R9")
	p("\tADDQ R9, SI") // SI = end of x
	p("%s_panel:", fn)
	p("\tTESTQ R11, R11")
	p("\tJZ %s_done", fn)
	p("\tMOVQ x+16(FP), AX")
	p("\tMOVQ DI, BX")
	p("\tMOVQ xn+56(FP), R10")
	p("%s_rows:", fn)
	p("\tLEAQ (AX)(R12*8), R14")
	p("\tCMPQ R14, SI")
	p("\tJA %s_tail", fn)
	kern8Block(pr, c, fn+"_r8", 8)
	p("\tADDQ $%d, R10", 8*pr.esize)
	p("\tLEAQ (AX)(R12*8), AX")
	p("\tLEAQ (BX)(R8*8), BX")
	p("\tJMP %s_rows", fn)
	p("%s_tail:", fn)
	p("\tCMPQ AX, SI")
	p("\tJAE %s_next", fn)
	kern8Block(pr, c, fn+"_r4", 4)
	p("%s_next:", fn)
	p("\tMOVQ d+32(FP), R14")
	p("\tSHLQ $7, R14")
	p("\tADDQ R14, DX")
	p("\tADDQ $128, DI")
	p("\tDECQ R11")
	p("\tJMP %s_panel", fn)
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// kern8Block emits one micro-tile of kern8: nr (8 or 4) rows from AX
// (norms at R10) against the panel at DX, stored at BX.
func kern8Block(pr prec, c map[string]string, lbl string, nr int) {
	for a := 0; a < 2*nr; a++ {
		p("\tVXORPS Z%d, Z%d, Z%d", a, a, a)
	}
	// Row r of x: R14 + r·R12 for r < 3, R15 = R14 + 3·R12 for 3..5,
	// R9 = R14 + 6·R12 for 6..7.
	p("\tMOVQ AX, R14")
	p("\tLEAQ (AX)(R12*2), R15")
	p("\tADDQ R12, R15")
	if nr == 8 {
		p("\tLEAQ (R15)(R12*2), R9")
		p("\tADDQ R12, R9")
	}
	p("\tMOVQ DX, CX")
	p("\tMOVQ d+32(FP), R13")
	p("%s_k:", lbl)
	p("\tVMOVUPS (CX), Z16")
	p("\tVMOVUPS 64(CX), Z17")
	src := []string{"(R14)", "(R14)(R12*1)", "(R14)(R12*2)", "(R15)", "(R15)(R12*1)", "(R15)(R12*2)", "(R9)", "(R9)(R12*1)"}
	for r := 0; r < nr; r++ {
		b := 18 + r%4
		p("\t%s %s, Z%d", pr.bcast, src[r], b)
		p("\tVFMADD231PS Z16, Z%d, Z%d", b, 2*r)
		p("\tVFMADD231PS Z17, Z%d, Z%d", b, 2*r+1)
	}
	p("\tADDQ $%d, R14", pr.esize)
	p("\tADDQ $%d, R15", pr.esize)
	if nr == 8 {
		p("\tADDQ $%d, R9", pr.esize)
	}
	p("\tADDQ $128, CX")
	p("\tDECQ R13")
	p("\tJNZ %s_k", lbl)
	// Kernel function on the nr × (2 vectors) block.
	p("\tMOVQ DI, R13")
	p("\tSUBQ dst+0(FP), R13")
	p("\tADDQ cn+64(FP), R13")
	p("\tVMOVUPS (R13), Z16")
	p("\tVMOVUPS 64(R13), Z17")
	// Row r of dst: BX + r·R8 for r < 3, R14 = BX + 3·R8 for 3..5,
	// R15 = BX + 6·R8 for 6..7.
	p("\tLEAQ (BX)(R8*2), R14")
	p("\tADDQ R8, R14")
	p("\tLEAQ (R14)(R8*2), R15")
	p("\tADDQ R8, R15")
	dst := []string{"(BX)", "(BX)(R8*1)", "(BX)(R8*2)", "(R14)", "(R14)(R8*1)", "(R14)(R8*2)", "(R15)", "(R15)(R8*1)"}
	p("\tCMPQ mode+80(FP), $0")
	p("\tJNE %s_gen", lbl)
	for mode := 0; mode < 2; mode++ {
		if mode == 1 {
			p("%s_gen:", lbl)
		}
		for r := 0; r < nr; r++ {
			var chains [2][]string
			for hv := 0; hv < 2; hv++ {
				o := chainOps{
					acc:   fmt.Sprintf("Z%d", 2*r+hv),
					cn:    fmt.Sprintf("Z%d", 16+hv),
					store: fmt.Sprintf("%d%s", hv*64, dst[r]),
					xn:    fmt.Sprintf("BCST:%d(R10)", r*pr.esize),
					temps: [3]string{fmt.Sprintf("Z%d", 18+3*hv), fmt.Sprintf("Z%d", 19+3*hv), fmt.Sprintf("Z%d", 20+3*hv)},
					mask:  fmt.Sprintf("K%d", hv+1),
				}
				chains[hv] = distChain(pr, avx512, c, o, mode == 1)
			}
			for i := range chains[0] {
				p("\t%s", chains[0][i])
				p("\t%s", chains[1][i])
			}
		}
		if mode == 0 {
			p("\tJMP %s_adv", lbl)
		}
	}
	p("%s_adv:", lbl)
}

// applyDot emits applyDot{64,32}{AVX512,AVX2}(g, n, gamma, coef0, deg):
// g = (gamma g + coef0)^deg by binary powering, two vectors per step.
func applyDot(pr prec, is isa) {
	fn := "applyDot" + pr.name + is.name
	R := is.reg
	s := pr.sfx
	fs := pr.fsz
	p("// func %s(buf *float%s, n int, gamma, coef0 float%s, deg int)", fn, pr.name, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-%d", fn, pr.dotFrame)
	p("\tMOVQ buf+0(FP), SI")
	p("\tMOVQ n+8(FP), CX")
	lanes := is.vbyte / pr.esize
	p("\tSHRQ $%d, CX", log2(2*lanes))
	p("\tJZ %s_done", fn)
	p("\t%s gamma+16(FP), %s15", pr.bcast, R)
	p("\t%s coef0+%d(FP), %s14", pr.bcast, 16+fs, R)
	p("\tMOVQ deg+%d(FP), DX", 16+2*fs)
	p("\tDECQ DX")
	p("%s_loop:", fn)
	for ch := 0; ch < 2; ch++ {
		b := 3 * ch
		p("\tVMOVUP%s %d(SI), %s%d", s, ch*is.vbyte, R, b)
		p("\tVMOVAP%s %s14, %s%d", s, R, R, b+1)
		p("\tVFMADD231P%s %s15, %s%d, %s%d", s, R, R, b, R, b+1) // base
		p("\tVMOVAP%s %s%d, %s%d", s, R, b+1, R, b+2)            // result
	}
	p("\tMOVQ DX, AX")
	p("%s_pow:", fn)
	p("\tTESTQ AX, AX")
	p("\tJZ %s_store", fn)
	p("\tTESTQ $1, AX")
	p("\tJZ %s_sq", fn)
	p("\tVMULP%s %s1, %s2, %s2", s, R, R, R)
	p("\tVMULP%s %s4, %s5, %s5", s, R, R, R)
	p("%s_sq:", fn)
	p("\tSHRQ $1, AX")
	p("\tJZ %s_store", fn)
	p("\tVMULP%s %s1, %s1, %s1", s, R, R, R)
	p("\tVMULP%s %s4, %s4, %s4", s, R, R, R)
	p("\tJMP %s_pow", fn)
	p("%s_store:", fn)
	p("\tVMOVUP%s %s2, (SI)", s, R)
	p("\tVMOVUP%s %s5, %d(SI)", s, R, is.vbyte)
	p("\tADDQ $%d, SI", 2*is.vbyte)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", fn)
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// dot emits dot{64,32}{AVX512,AVX2}(a, b, n) float64: Σ a_j b_j with a
// float64 or float32 (converted), b float64; n a multiple of 16.
func dot(pr prec, is isa) {
	fn := "dot" + pr.name + is.name
	R := is.reg
	lanes := is.vbyte / 8 // float64 lanes
	nacc := 16 / lanes    // vectors per 16 elements
	p("// func %s(a *float%s, b *float64, n int) float64", fn, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-32", fn)
	p("\tMOVQ a+0(FP), SI")
	p("\tMOVQ b+8(FP), DI")
	p("\tMOVQ n+16(FP), CX")
	p("\tSHRQ $4, CX")
	for a := 0; a < nacc; a++ {
		p("\tVXORPD %s%d, %s%d, %s%d", R, a, R, a, R, a)
	}
	p("\tTESTQ CX, CX")
	p("\tJZ %s_red", fn)
	p("%s_loop:", fn)
	for a := 0; a < nacc; a++ {
		if pr.esize == 8 {
			p("\tVMOVUPD %d(SI), %s%d", a*is.vbyte, R, 4+a)
		} else {
			p("\tVCVTPS2PD %d(SI), %s%d", a*is.vbyte/2, R, 4+a)
		}
		p("\tVFMADD231PD %d(DI), %s%d, %s%d", a*is.vbyte, R, 4+a, R, a)
	}
	p("\tADDQ $%d, SI", 16*pr.esize)
	p("\tADDQ $128, DI")
	p("\tDECQ CX")
	p("\tJNZ %s_loop", fn)
	p("%s_red:", fn)
	if nacc == 4 {
		p("\tVADDPD Y1, Y0, Y0")
		p("\tVADDPD Y3, Y2, Y2")
		p("\tVADDPD Y2, Y0, Y0")
	} else {
		p("\tVADDPD Z1, Z0, Z0")
		p("\tVEXTRACTF64X4 $1, Z0, Y1")
		p("\tVADDPD Y1, Y0, Y0")
	}
	p("\tVEXTRACTF128 $1, Y0, X1")
	p("\tVADDPD X1, X0, X0")
	p("\tVPERMILPD $1, X0, X1")
	p("\tVADDSD X1, X0, X0")
	p("\tVMOVSD X0, ret+24(FP)")
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// axpy emits axpy{64,32}{AVX512,AVX2}(alpha, x, y, n): y += alpha x.
func axpy(pr prec, is isa) {
	fn := "axpy" + pr.name + is.name
	R := is.reg
	lanes := is.vbyte / 8
	nv := 16 / lanes
	p("// func %s(alpha float64, x *float%s, y *float64, n int)", fn, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-32", fn)
	p("\tVBROADCASTSD alpha+0(FP), %s15", R)
	p("\tMOVQ x+8(FP), SI")
	p("\tMOVQ y+16(FP), DI")
	p("\tMOVQ n+24(FP), CX")
	p("\tSHRQ $4, CX")
	p("\tJZ %s_done", fn)
	p("%s_loop:", fn)
	for a := 0; a < nv; a++ {
		p("\tVMOVUPD %d(DI), %s%d", a*is.vbyte, R, a)
		if pr.esize == 8 {
			p("\tVFMADD231PD %d(SI), %s15, %s%d", a*is.vbyte, R, R, a)
		} else {
			p("\tVCVTPS2PD %d(SI), %s%d", a*is.vbyte/2, R, 4+a)
			p("\tVFMADD231PD %s%d, %s15, %s%d", R, 4+a, R, R, a)
		}
		p("\tVMOVUPD %s%d, %d(DI)", R, a, a*is.vbyte)
	}
	p("\tADDQ $%d, SI", 16*pr.esize)
	p("\tADDQ $128, DI")
	p("\tDECQ CX")
	p("\tJNZ %s_loop", fn)
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

func norms32() {
	p("// func norms32FMA(dst, x *float32, rows, d int)")
	p("TEXT ·norms32FMA(SB), NOSPLIT, $0-32")
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ x+8(FP), SI")
	p("\tMOVQ rows+16(FP), CX")
	p("\tMOVQ d+24(FP), DX")
	p("\tTESTQ CX, CX")
	p("\tJZ norms32_done")
	p("norms32_row:")
	p("\tVXORPS X0, X0, X0")
	p("\tMOVQ DX, AX")
	p("norms32_k:")
	p("\tVMOVSS (SI), X1")
	p("\tVFMADD231SS X1, X1, X0")
	p("\tADDQ $4, SI")
	p("\tDECQ AX")
	p("\tJNZ norms32_k")
	p("\tVMOVSS X0, (DI)")
	p("\tADDQ $4, DI")
	p("\tDECQ CX")
	p("\tJNZ norms32_row")
	p("norms32_done:")
	p("\tRET")
	p("")
}

// dot4 emits dot4x{64,32}{AVX512,AVX2}(a *float, lda int, b *float64, n
// int, out *float64): out[r] = Σ_j a[r*lda+j] b[j] for r < 4, with a float64
// or float32 (converted); n a multiple of 16.
func dot4(pr prec, is isa) {
	fn := "dot4x" + pr.name + is.name
	R := is.reg
	step := 2 * is.vbyte / 8 // float64 elements per iteration
	p("// func %s(a *float%s, lda int, b *float64, n int, out *float64)", fn, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-40", fn)
	p("\tMOVQ a+0(FP), SI")
	p("\tMOVQ lda+8(FP), R8")
	p("\tSHLQ $%d, R8", log2(pr.esize))
	p("\tMOVQ b+16(FP), DI")
	p("\tMOVQ n+24(FP), CX")
	p("\tSHRQ $%d, CX", log2(step))
	p("\tLEAQ (SI)(R8*2), R9")
	for a := 0; a < 8; a++ {
		p("\tVXORPD %s%d, %s%d, %s%d", R, a, R, a, R, a)
	}
	p("\tTESTQ CX, CX")
	p("\tJZ %s_red", fn)
	p("%s_loop:", fn)
	p("\tVMOVUPD (DI), %s8", R)
	p("\tVMOVUPD %d(DI), %s9", is.vbyte, R)
	rows := []string{"(SI)", "(SI)(R8*1)", "(R9)", "(R9)(R8*1)"}
	for r := 0; r < 4; r++ {
		for h := 0; h < 2; h++ {
			off := h * is.vbyte * pr.esize / 8
			mem := fmt.Sprintf("%d%s", off, rows[r])
			if pr.esize == 8 {
				p("\tVFMADD231PD %s, %s%d, %s%d", mem, R, 8+h, R, 2*r+h)
			} else {
				p("\tVCVTPS2PD %s, %s%d", mem, R, 10+h)
				p("\tVFMADD231PD %s%d, %s%d, %s%d", R, 10+h, R, 8+h, R, 2*r+h)
			}
		}
	}
	p("\tADDQ $%d, SI", step*pr.esize)
	p("\tADDQ $%d, R9", step*pr.esize)
	p("\tADDQ $%d, DI", step*8)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", fn)
	p("%s_red:", fn)
	p("\tMOVQ out+32(FP), DX")
	for r := 0; r < 4; r++ {
		a, b := 2*r, 2*r+1
		p("\tVADDPD %s%d, %s%d, %s%d", R, b, R, a, R, a)
		if is.name == "AVX512" {
			p("\tVEXTRACTF64X4 $1, Z%d, Y%d", a, b)
			p("\tVADDPD Y%d, Y%d, Y%d", b, a, a)
		}
		p("\tVEXTRACTF128 $1, Y%d, X%d", a, b)
		p("\tVADDPD X%d, X%d, X%d", b, a, a)
		p("\tVPERMILPD $1, X%d, X%d", a, b)
		p("\tVADDSD X%d, X%d, X%d", b, a, a)
		p("\tVMOVSD X%d, %d(DX)", a, 8*r)
	}
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// axpy4 emits axpy4x{64,32}{AVX512,AVX2}(alpha *float64, x *float, ldx int,
// y *float64, n int): y_j += Σ_r alpha[r] x[r*ldx+j] for r < 4, added in
// order r = 0..3 with fused multiply-adds; n a multiple of 16.
func axpy4(pr prec, is isa) {
	fn := "axpy4x" + pr.name + is.name
	R := is.reg
	step := 2 * is.vbyte / 8
	p("// func %s(alpha *float64, x *float%s, ldx int, y *float64, n int)", fn, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-40", fn)
	p("\tMOVQ alpha+0(FP), DX")
	for r := 0; r < 4; r++ {
		p("\tVBROADCASTSD %d(DX), %s%d", 8*r, R, 12+r)
	}
	p("\tMOVQ x+8(FP), SI")
	p("\tMOVQ ldx+16(FP), R8")
	p("\tSHLQ $%d, R8", log2(pr.esize))
	p("\tMOVQ y+24(FP), DI")
	p("\tMOVQ n+32(FP), CX")
	p("\tSHRQ $%d, CX", log2(step))
	p("\tJZ %s_done", fn)
	p("\tLEAQ (SI)(R8*2), R9")
	p("%s_loop:", fn)
	p("\tVMOVUPD (DI), %s0", R)
	p("\tVMOVUPD %d(DI), %s1", is.vbyte, R)
	rows := []string{"(SI)", "(SI)(R8*1)", "(R9)", "(R9)(R8*1)"}
	for r := 0; r < 4; r++ {
		for h := 0; h < 2; h++ {
			off := h * is.vbyte * pr.esize / 8
			mem := fmt.Sprintf("%d%s", off, rows[r])
			if pr.esize == 8 {
				p("\tVFMADD231PD %s, %s%d, %s%d", mem, R, 12+r, R, h)
			} else {
				p("\tVCVTPS2PD %s, %s%d", mem, R, 2+2*r+h)
				p("\tVFMADD231PD %s%d, %s%d, %s%d", R, 2+2*r+h, R, 12+r, R, h)
			}
		}
	}
	p("\tVMOVUPD %s0, (DI)", R)
	p("\tVMOVUPD %s1, %d(DI)", R, is.vbyte)
	p("\tADDQ $%d, SI", step*pr.esize)
	p("\tADDQ $%d, R9", step*pr.esize)
	p("\tADDQ $%d, DI", step*8)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", fn)
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// gram1 emits gram1x{64,32}{AVX512,AVX2}(dst, x, d, cp, npanels): the Gram
// products of one row x with the centres of npanels panels, dst[c] =
// x · centre_c, each accumulated like gram's (from zero, feature 0 first,
// one fused multiply-add a feature), so that a row computed alone has
// the bits it has in a block of MR rows. One row has no rows to reuse a
// loaded panel across, so it covers several panels at once to keep
// eight independent accumulators in flight: 4 panels of 2 zmm (AVX-512)
// or 2 panels of 4 ymm (AVX2), then the rest one panel at a time.
func gram1(pr prec, is isa) {
	fn := "gram1x" + pr.name + is.name
	R := is.reg
	v := 128 / is.vbyte // vectors per panel
	g := 8 / v          // panels per group
	p("// func %s(dst *float%s, x *float%s, d int, cp *float%s, npanels int)", fn, pr.name, pr.name, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-40", fn)
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ x+8(FP), SI")
	p("\tMOVQ d+16(FP), R10")
	p("\tMOVQ cp+24(FP), DX")
	p("\tMOVQ npanels+32(FP), R11")
	p("\tMOVQ R10, R12")
	p("\tSHLQ $7, R12") // panel stride in bytes: d × 128
	// bases[q] addresses panel q of a group; the loop advances CX and BX.
	bases := []string{"(CX)", "(CX)(R12*1)", "(BX)", "(BX)(R12*1)"}
	for _, grp := range []int{g, 1} {
		lbl := fmt.Sprintf("%s_g%d", fn, grp)
		p("%s:", lbl)
		p("\tCMPQ R11, $%d", grp)
		if grp == 1 {
			p("\tJB %s_done", fn)
		} else {
			p("\tJB %s_g1", fn)
		}
		nacc := grp * v
		for a := 0; a < nacc; a++ {
			p("\tVXORP%s %s%d, %s%d, %s%d", pr.sfx, R, a, R, a, R, a)
		}
		p("\tMOVQ SI, R14")
		p("\tMOVQ DX, CX")
		if grp > 2 {
			p("\tLEAQ (DX)(R12*2), BX")
		}
		p("\tMOVQ R10, R13")
		p("%s_k:", lbl)
		p("\t%s (R14), %s%d", pr.bcast, R, nacc)
		for q := 0; q < grp; q++ {
			for h := 0; h < v; h++ {
				p("\tVFMADD231P%s %d%s, %s%d, %s%d", pr.sfx, h*is.vbyte, bases[q], R, nacc, R, q*v+h)
			}
		}
		p("\tADDQ $%d, R14", pr.esize)
		p("\tADDQ $128, CX")
		if grp > 2 {
			p("\tADDQ $128, BX")
		}
		p("\tDECQ R13")
		p("\tJNZ %s_k", lbl)
		for a := 0; a < nacc; a++ {
			p("\tVMOVUP%s %s%d, %d(DI)", pr.sfx, R, a, a*is.vbyte)
		}
		p("\tADDQ $%d, DI", grp*128)
		for q := 0; q < grp; q++ {
			p("\tADDQ R12, DX")
		}
		p("\tSUBQ $%d, R11", grp)
		p("\tJMP %s", lbl)
	}
	p("%s_done:", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// dot1 emits dot1x{64,32}{AVX512,AVX2}(a *float, b *float64, n int)
// float64: Σ_j a_j b_j for one row, accumulated and reduced exactly as
// dot4 does each of its rows, so that a row alone gives the bits it gets
// among four; n a multiple of 16.
func dot1(pr prec, is isa) {
	fn := "dot1x" + pr.name + is.name
	R := is.reg
	step := 2 * is.vbyte / 8
	p("// func %s(a *float%s, b *float64, n int) float64", fn, pr.name)
	p("TEXT ·%s(SB), NOSPLIT, $0-32", fn)
	p("\tMOVQ a+0(FP), SI")
	p("\tMOVQ b+8(FP), DI")
	p("\tMOVQ n+16(FP), CX")
	p("\tSHRQ $%d, CX", log2(step))
	for a := 0; a < 2; a++ {
		p("\tVXORPD %s%d, %s%d, %s%d", R, a, R, a, R, a)
	}
	p("\tTESTQ CX, CX")
	p("\tJZ %s_red", fn)
	p("%s_loop:", fn)
	p("\tVMOVUPD (DI), %s8", R)
	p("\tVMOVUPD %d(DI), %s9", is.vbyte, R)
	for h := 0; h < 2; h++ {
		mem := fmt.Sprintf("%d(SI)", h*is.vbyte*pr.esize/8)
		if pr.esize == 8 {
			p("\tVFMADD231PD %s, %s%d, %s%d", mem, R, 8+h, R, h)
		} else {
			p("\tVCVTPS2PD %s, %s%d", mem, R, 10+h)
			p("\tVFMADD231PD %s%d, %s%d, %s%d", R, 10+h, R, 8+h, R, h)
		}
	}
	p("\tADDQ $%d, SI", step*pr.esize)
	p("\tADDQ $%d, DI", step*8)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", fn)
	p("%s_red:", fn)
	p("\tVADDPD %s1, %s0, %s0", R, R, R)
	if is.name == "AVX512" {
		p("\tVEXTRACTF64X4 $1, Z0, Y1")
		p("\tVADDPD Y1, Y0, Y0")
	}
	p("\tVEXTRACTF128 $1, Y0, X1")
	p("\tVADDPD X1, X0, X0")
	p("\tVPERMILPD $1, X0, X1")
	p("\tVADDSD X1, X0, X0")
	p("\tVMOVSD X0, ret+24(FP)")
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// peak emits peakFMA{AVX512,AVX2}(n): n × 12 independent float64 FMAs, the
// machine's FMA throughput for benchmarks to compare with.
func peak(is isa) {
	fn := "peakFMA" + is.name
	R := is.reg
	p("// func %s(n int)", fn)
	p("TEXT ·%s(SB), NOSPLIT, $0-8", fn)
	p("\tMOVQ n+0(FP), CX")
	for a := 0; a < 12; a++ {
		p("\tVXORPD %s%d, %s%d, %s%d", R, a, R, a, R, a)
	}
	p("\tVXORPD %s12, %s12, %s12", R, R, R)
	p("\tVXORPD %s13, %s13, %s13", R, R, R)
	p("%s_loop:", fn)
	for a := 0; a < 12; a++ {
		p("\tVFMADD231PD %s12, %s13, %s%d", R, R, R, a)
	}
	p("\tDECQ CX")
	p("\tJNZ %s_loop", fn)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

func main() {
	p("// Code generated by asmgen.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !noasm")
	p("")
	p(`#include "textflag.h"`)
	p("")
	tables()
	for _, is := range []isa{avx512, avx2} {
		for _, pr := range []prec{p64, p32} {
			gram(pr, is)
			applyDist(pr, is)
			if is.name == "AVX512" && pr.esize == 4 {
				kern8(pr)
			} else {
				kern(pr, is)
			}
			dot4(pr, is)
			axpy4(pr, is)
			applyDot(pr, is)
			dot(pr, is)
			axpy(pr, is)
		}
	}
	for _, is := range []isa{avx512, avx2} {
		for _, pr := range []prec{p64, p32} {
			gram1(pr, is)
			dot1(pr, is)
		}
	}
	norms32()
	peak(avx512)
	peak(avx2)
	amxKern()
	os.Stdout.WriteString(out.String())
}

// The AMX instructions, which the Go assembler does not know, encoded
// here as BYTE directives (VEX, map 0F38; the forms below only).
// regNum maps a Go register name to its encoding.
func regNum(r string) int {
	for i, n := range []string{"AX", "CX", "DX", "BX", "SP", "BP", "SI", "DI"} {
		if r == n {
			return i
		}
	}
	var k int
	if _, err := fmt.Sscanf(r, "R%d", &k); err != nil || k < 8 || k > 15 {
		panic("regNum: " + r)
	}
	return k
}

// amxBytes emits one AMX instruction as a BYTE line with the
// instruction in the comment.
func amxBytes(comment string, b ...byte) {
	s := make([]string, len(b))
	for i, v := range b {
		s[i] = fmt.Sprintf("BYTE $0x%02x", v)
	}
	p("\t%s // %s", strings.Join(s, "; "), comment)
}

// vex3 returns the three VEX bytes of a map-0F38 instruction: r, x, b
// are the high bits of ModRM.reg, SIB.index and the base, vvvv the
// second source (0 when unused), pp 0 (none), 2 (F3) or 3 (F2).
func vex3(r, x, b, vvvv, pp int) []byte {
	b1 := byte(0x02)
	if r == 0 {
		b1 |= 0x80
	}
	if x == 0 {
		b1 |= 0x40
	}
	if b == 0 {
		b1 |= 0x20
	}
	return []byte{0xc4, b1, byte((^vvvv&15)<<3 | pp)}
}

// tileMem emits TILELOADD (store false) or TILESTORED of tile t at
// disp(base)(index*1): rows at stride index bytes.
func tileMem(store bool, t int, disp int, base, index string) {
	bn, in := regNum(base), regNum(index)
	if in == 4 {
		panic("tileMem: SP as index")
	}
	pp, name := 3, "TILELOADD"
	if store {
		pp, name = 2, "TILESTORED"
	}
	b := vex3(0, in>>3, bn>>3, 0, pp)
	b = append(b, 0x4b)
	mod := 0
	switch {
	case disp == 0 && bn&7 != 5:
	case disp >= -128 && disp < 128:
		mod = 1
	default:
		mod = 2
	}
	b = append(b, byte(mod<<6|t<<3|4), byte((in&7)<<3|bn&7))
	switch mod {
	case 1:
		b = append(b, byte(int8(disp)))
	case 2:
		b = append(b, byte(disp), byte(disp>>8), byte(disp>>16), byte(disp>>24))
	}
	if store {
		amxBytes(fmt.Sprintf("%s T%d, %d(%s)(%s*1)", name, t, disp, base, index), b...)
	} else {
		amxBytes(fmt.Sprintf("%s %d(%s)(%s*1), T%d", name, disp, base, index, t), b...)
	}
}

// tdp emits TDPBF16PS: tile c += a·b (a rows × pairs, b pairs × columns).
func tdp(c, a, b int) {
	amxBytes(fmt.Sprintf("TDPBF16PS T%d += T%d·T%d", c, a, b), append(vex3(0, 0, 0, b, 2), 0x5c, byte(0xc0|c<<3|a))...)
}

func tileZero(t int) {
	amxBytes(fmt.Sprintf("TILEZERO T%d", t), append(vex3(0, 0, 0, 0, 3), 0x49, byte(0xc0|t<<3))...)
}

// amxKern emits kernBF16AMX(dst *float32, ldd int, a *uint16, lda, rows,
// kc int, b *uint16, npairs int, xn, cn, pc *float32, mode int, scratch
// *float32, cfg *byte): the bfloat16 cross term of GramBF16 on the AMX
// unit and, while each 32 × 32 block is in L1, the distance kernel of
// ApplyDist32 (mode 0 Gaussian, 1 the general form) or nothing (mode 2:
// the dot products themselves), written to dst.
//
// For each pair of centre panels (32 centres; b at the pair, its chunks
// contiguous: panel-major layout), and each pair of 16-row blocks of a
// (then a last single block when rows mod 32 = 16): four accumulator
// tiles T0–T3 (2 row blocks × 2 panels) take kc chunks of A (T4, T5)
// and B (T6, T7), TDPBF16PS each; the block is then stored to the 4 KiB
// scratch (row r of the block at 128·r bytes). The AVX-512 kernel
// function of the previous block runs while the AMX unit computes this
// one, interleaved with its chunks: ⌈16/kc⌉ row pairs after each
// chunk's four TDPBF16PS, so that the in-order retirement of the long
// TDPBF16PS does not hold the AVX-512 work behind it (with the kernel
// function after all the chunks, the fused loop took 4, 8 and 14 % more
// time at d = 18, 28, 90, the other vCPU busy). Each chunk's products
// also prefetch the same chunk of the next pair of panels into L2:
// inside KtKvAdd, where each 32-row tile streams all the centres from
// L3, that gave 0.48–0.74 against 0.36–0.50 Gelem/s at d = 90 (8 of 8
// interleaved pairs faster, one core, quiet), 6 of 8 pairs faster at
// d = 28 and no clear change at d = 18. Every dot product accumulates
// chunk 0 first from zero, one TDPBF16PS a chunk, whatever the
// blocking, so its bits are GramBF16's; the kernel function is
// distChain's sequence, ApplyDist32's.
//
// Registers: R8 lda, R9 64, R10 ldd in bytes, R15 kc·1024; the block's
// products R11, R12 (A of its two row blocks), R13, R14 (B of its two
// panels), CX (chunks left); the previous block's kernel function AX
// (scratch), SI (norms), DI (dst), DX (row pairs left), BX (row pairs
// before the next chunk). SI, DI, DX, BX hold the block's A, dst, norms
// and B between blocks and are saved in the frame while it runs.
func amxKern() {
	const fn = "kernBF16AMX"
	p("// func %s(dst *float32, ldd int, a *uint16, lda, rows, kc int, b *uint16, npairs int, xn, cn, pc *float32, mode int, scratch *float32, cfg *byte)", fn)
	p("TEXT ·%s(SB), NOSPLIT, $112-112", fn)
	p("\tMOVQ cfg+104(FP), AX")
	amxBytes("LDTILECFG (AX)", 0xc4, 0xe2, 0x78, 0x49, 0x00)
	p("\tMOVQ pc+80(FP), DX")
	c := bcastConsts(p32, "c1", "c2", "neg2", "zero", "maxargt", "shifter", "log2e16", "ln2hi16", "ln2lo16", "one", "q3", "q2", "sixteenth")
	p("\tVMOVUPS exptab32<>+0(SB), Z18")
	c["tlo"] = "Z18"
	// Row pairs of kernel function per chunk: ⌈16/kc⌉.
	p("\tMOVQ kc+40(FP), CX")
	p("\tLEAQ 15(CX), AX")
	p("\tXORQ DX, DX")
	p("\tDIVQ CX")
	p("\tMOVQ AX, apk-104(SP)")
	p("\tMOVQ $0, final-112(SP)")
	p("\tMOVQ lda+24(FP), R8")
	p("\tMOVQ $64, R9")
	p("\tMOVQ ldd+8(FP), R10")
	p("\tSHLQ $2, R10")
	p("\tMOVQ kc+40(FP), R15")
	p("\tSHLQ $10, R15")
	p("\tMOVQ b+48(FP), BX")
	p("\tMOVQ dst+0(FP), AX")
	p("\tMOVQ AX, dcol-8(SP)")
	p("\tMOVQ cn+72(FP), AX")
	p("\tMOVQ AX, ccol-16(SP)")
	p("\tMOVQ npairs+56(FP), AX")
	p("\tMOVQ AX, pairs-32(SP)")
	p("\tMOVQ $0, prows-64(SP)")
	p("%s_pair:", fn)
	p("\tCMPQ pairs-32(SP), $0")
	p("\tJEQ %s_last", fn)
	p("\tMOVQ a+16(FP), SI")
	p("\tMOVQ dcol-8(SP), DI")
	p("\tMOVQ xn+64(FP), DX")
	p("\tMOVQ rows+32(FP), AX")
	p("\tMOVQ AX, left-24(SP)")
	p("%s_rows:", fn)
	p("\tCMPQ left-24(SP), $32")
	p("\tJLT %s_tail", fn)
	for _, nb := range []int{2, 1} {
		lbl := fmt.Sprintf("%s_b%d", fn, nb)
		if nb == 1 {
			p("%s_tail:", fn)
			p("\tCMPQ left-24(SP), $0")
			p("\tJEQ %s_next", fn)
		}
		for t := 0; t < 2*nb; t++ {
			tileZero(t)
		}
		p("\tMOVQ SI, R11")
		p("\tMOVQ BX, R13")
		p("\tLEAQ (BX)(R15*1), R14")
		if nb == 2 {
			p("\tMOVQ R8, R12")
			p("\tSHLQ $4, R12")
			p("\tADDQ SI, R12")
		}
		p("\tMOVQ kc+40(FP), CX")
		p("\tMOVQ SI, csi-72(SP)")
		p("\tMOVQ DI, cdi-80(SP)")
		p("\tMOVQ DX, cdx-88(SP)")
		p("\tMOVQ BX, cbx-96(SP)")
		p("%s_prep:", lbl)
		p("\tMOVQ prows-64(SP), DX")
		p("\tSHRQ $1, DX")
		p("\tMOVQ scratch+96(FP), AX")
		p("\tMOVQ pxn-48(SP), SI")
		p("\tMOVQ pdst-40(SP), DI")
		p("\tMOVQ pcn-56(SP), BX")
		p("\tTESTQ DX, DX")
		p("\tJZ %s_nocn", lbl)
		p("\tVMOVUPS (BX), Z16")
		p("\tVMOVUPS 64(BX), Z17")
		p("%s_nocn:", lbl)
		p("\tCMPQ mode+88(FP), $1")
		p("\tJEQ %s_m1", lbl)
		p("\tJGT %s_m2", lbl)
		for mode := 0; mode < 3; mode++ {
			ml := fmt.Sprintf("%s_m%d", lbl, mode)
			p("%s:", ml)
			p("\tTESTQ CX, CX")
			p("\tJZ %s_nok", ml)
			tileMem(false, 4, 0, "R11", "R8")
			tileMem(false, 6, 0, "R13", "R9")
			tdp(0, 4, 6)
			tileMem(false, 7, 0, "R14", "R9")
			tdp(1, 4, 7)
			if nb == 2 {
				tileMem(false, 5, 0, "R12", "R8")
				tdp(2, 5, 6)
				tdp(3, 5, 7)
				p("\tADDQ $64, R12")
			}
			// The next pair's chunk into L2 (past the end of b for
			// the last pair: prefetches never fault).
			for l := 0; l < 16; l++ {
				p("\tPREFETCHT1 %d(R13)(R15*2)", 64*l)
				p("\tPREFETCHT1 %d(R14)(R15*2)", 64*l)
			}
			p("\tADDQ $64, R11")
			p("\tADDQ $1024, R13")
			p("\tADDQ $1024, R14")
			p("\tDECQ CX")
			p("\tMOVQ apk-104(SP), BX")
			p("\tJMP %s_avx", ml)
			p("%s_nok:", ml)
			p("\tTESTQ DX, DX")
			p("\tJZ %s_store", lbl)
			p("\tMOVQ $0x40000000, BX")
			p("%s_avx:", ml)
			p("\tTESTQ DX, DX")
			p("\tJZ %s", ml)
			amxRowPair(c, mode, "AX", "SI", "DI")
			p("\tADDQ $256, AX")
			p("\tADDQ $8, SI")
			p("\tLEAQ (DI)(R10*2), DI")
			p("\tDECQ DX")
			p("\tDECQ BX")
			p("\tJNZ %s_avx", ml)
			p("\tJMP %s", ml)
		}
		p("%s_store:", lbl)
		if nb == 1 {
			p("\tCMPQ final-112(SP), $0")
			p("\tJNE %s_done", fn)
		}
		p("\tMOVQ csi-72(SP), SI")
		p("\tMOVQ cdi-80(SP), DI")
		p("\tMOVQ cdx-88(SP), DX")
		p("\tMOVQ cbx-96(SP), BX")
		p("\tMOVQ scratch+96(FP), AX")
		p("\tMOVQ $128, R13")
		tileMem(true, 0, 0, "AX", "R13")
		tileMem(true, 1, 64, "AX", "R13")
		if nb == 2 {
			tileMem(true, 2, 2048, "AX", "R13")
			tileMem(true, 3, 2112, "AX", "R13")
		}
		p("\tMOVQ DI, pdst-40(SP)")
		p("\tMOVQ DX, pxn-48(SP)")
		p("\tMOVQ ccol-16(SP), AX")
		p("\tMOVQ AX, pcn-56(SP)")
		p("\tMOVQ $%d, prows-64(SP)", 16*nb)
		if nb == 2 {
			p("\tMOVQ R8, AX")
			p("\tSHLQ $5, AX")
			p("\tADDQ AX, SI")
			p("\tMOVQ R10, AX")
			p("\tSHLQ $5, AX")
			p("\tADDQ AX, DI")
			p("\tADDQ $128, DX")
			p("\tSUBQ $32, left-24(SP)")
			p("\tJMP %s_rows", fn)
		}
	}
	p("%s_next:", fn)
	p("\tLEAQ (BX)(R15*2), BX")
	p("\tADDQ $128, dcol-8(SP)")
	p("\tADDQ $128, ccol-16(SP)")
	p("\tDECQ pairs-32(SP)")
	p("\tJMP %s_pair", fn)
	// The last block's kernel function: the single-block path with no
	// chunks, ending before its store.
	p("%s_last:", fn)
	p("\tMOVQ $1, final-112(SP)")
	p("\tXORQ CX, CX")
	p("\tJMP %s_b1_prep", fn)
	p("%s_done:", fn)
	amxBytes("TILERELEASE", 0xc4, 0xe2, 0x78, 0x49, 0xc0)
	p("\tVZEROUPPER")
	p("\tRET")
	p("")
}

// amxRowPair emits the kernel function (mode 0, 1) or the copy (mode 2)
// of two rows of the scratch block at scr (norms at xn) into dst (rows
// R10 bytes apart): four vectors, four chains. It clobbers Z0–Z15 and
// K1–K4; Z16, Z17 hold the block's centre norms.
func amxRowPair(c map[string]string, mode int, scr, xn, dst string) {
	d := []string{"0(" + dst + ")", "64(" + dst + ")", "0(" + dst + ")(R10*1)", "64(" + dst + ")(R10*1)"}
	if mode == 2 {
		for v := 0; v < 4; v++ {
			p("\tVMOVUPS %d(%s), Z%d", 64*v, scr, v)
		}
		for v := 0; v < 4; v++ {
			p("\tVMOVUPS Z%d, %s", v, d[v])
		}
		return
	}
	var chains [4][]string
	for v := 0; v < 4; v++ {
		chains[v] = distChain(p32, avx512, c, chainOps{
			load:  fmt.Sprintf("%d(%s)", 64*v, scr),
			acc:   fmt.Sprintf("Z%d", 4*v),
			cn:    fmt.Sprintf("Z%d", 16+v%2),
			xn:    fmt.Sprintf("BCST:%d(%s)", 4*(v/2), xn),
			temps: [3]string{fmt.Sprintf("Z%d", 4*v+1), fmt.Sprintf("Z%d", 4*v+2), fmt.Sprintf("Z%d", 4*v+3)},
			mask:  fmt.Sprintf("K%d", v+1),
			store: d[v],
		}, mode == 1)
	}
	for i := range chains[0] {
		for v := 0; v < 4; v++ {
			p("\t%s", chains[v][i])
		}
	}
}
