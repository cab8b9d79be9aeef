//go:build linux && amd64 && !noasm

#include "textflag.h"

// The AMX instructions, which the Go assembler does not know, as bytes
// (encoded by GNU as; the register operands are fixed).
// ldtilecfg (%rax)
#define LDTILECFG_AX BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00
// tilerelease
#define TILERELEASE BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0
// tilezero %tmm0
#define TILEZERO_T0 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0
// tilezero %tmm1
#define TILEZERO_T1 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8
// tilezero %tmm2
#define TILEZERO_T2 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0
// tilezero %tmm3
#define TILEZERO_T3 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8
// tileloadd (%r11,%r8,1), %tmm4
#define TILELOADD_A_T4 BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x03
// tileloadd (%rdx,%r9,1), %tmm5
#define TILELOADD_B0_T5 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x0a
// tileloadd 1024(%rdx,%r9,1), %tmm6
#define TILELOADD_B1_T6 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0xb4; BYTE $0x0a; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00
// tileloadd 2048(%rdx,%r9,1), %tmm7
#define TILELOADD_B2_T7 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0xbc; BYTE $0x0a; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00
// tileloadd 3072(%rdx,%r9,1), %tmm5
#define TILELOADD_B3_T5 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0xac; BYTE $0x0a; BYTE $0x00; BYTE $0x0c; BYTE $0x00; BYTE $0x00
// tdpbf16ps %tmm5, %tmm4, %tmm0
#define TDPBF16PS_T0_T4_T5 BYTE $0xc4; BYTE $0xe2; BYTE $0x52; BYTE $0x5c; BYTE $0xc4
// tdpbf16ps %tmm6, %tmm4, %tmm1
#define TDPBF16PS_T1_T4_T6 BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xcc
// tdpbf16ps %tmm7, %tmm4, %tmm2
#define TDPBF16PS_T2_T4_T7 BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xd4
// tdpbf16ps %tmm5, %tmm4, %tmm3
#define TDPBF16PS_T3_T4_T5 BYTE $0xc4; BYTE $0xe2; BYTE $0x52; BYTE $0x5c; BYTE $0xdc
// tilestored %tmm0, (%r14,%r10,1)
#define TILESTORED_T0 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x16
// tilestored %tmm1, 64(%r14,%r10,1)
#define TILESTORED_T1 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x16; BYTE $0x40
// tilestored %tmm2, 128(%r14,%r10,1)
#define TILESTORED_T2 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x94; BYTE $0x16; BYTE $0x80; BYTE $0x00; BYTE $0x00; BYTE $0x00
// tilestored %tmm3, 192(%r14,%r10,1)
#define TILESTORED_T3 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x9c; BYTE $0x16; BYTE $0xc0; BYTE $0x00; BYTE $0x00; BYTE $0x00

// func gramBF16AMXAsm(dst *float32, ldd int, a *uint16, lda, rows, kc int, b *uint16, bstride, npanels int, cfg *byte)
//
// For each block of 16 rows (A tile, tmm4) and each group of four
// 16-centre panels (C tiles tmm0–3, B tiles tmm5–7), then a last pair if
// npanels mod 4 = 2: zero C, and for each of the kc chunks load A and
// each panel's B and accumulate C += A·B (TDPBF16PS); store C to dst.
// Four independent accumulators cover the dot product's latency.
//
// DI dst row block, R10 ldd bytes, SI a row block, R8 lda, BX b,
// AX bstride, R9 = 64 (B row stride), R12 row blocks left, R13 panels
// left, CX the group's panel 0 in chunk 0, R14 its dst, R11 and DX the
// A and B chunk, R15 chunks left.
TEXT ·gramBF16AMXAsm(SB), NOSPLIT, $0-80
	MOVQ cfg+72(FP), AX
	LDTILECFG_AX
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R10
	SHLQ $2, R10
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), R8
	MOVQ rows+32(FP), R12
	SHRQ $4, R12
	MOVQ b+48(FP), BX
	MOVQ bstride+56(FP), AX
	MOVQ $64, R9

rowblk:
	TESTQ R12, R12
	JZ done
	MOVQ npanels+64(FP), R13
	MOVQ DI, R14
	MOVQ BX, CX

group:
	CMPQ R13, $4
	JB pair
	TILEZERO_T0
	TILEZERO_T1
	TILEZERO_T2
	TILEZERO_T3
	MOVQ SI, R11
	MOVQ CX, DX
	MOVQ kc+40(FP), R15

k4:
	TILELOADD_A_T4
	TILELOADD_B0_T5
	TDPBF16PS_T0_T4_T5
	TILELOADD_B1_T6
	TDPBF16PS_T1_T4_T6
	TILELOADD_B2_T7
	TDPBF16PS_T2_T4_T7
	TILELOADD_B3_T5
	TDPBF16PS_T3_T4_T5
	ADDQ $64, R11
	ADDQ AX, DX
	DECQ R15
	JNZ k4
	TILESTORED_T0
	TILESTORED_T1
	TILESTORED_T2
	TILESTORED_T3
	ADDQ $256, R14
	ADDQ $4096, CX
	SUBQ $4, R13
	JMP group

pair:
	TESTQ R13, R13
	JZ nextrow
	TILEZERO_T0
	TILEZERO_T1
	MOVQ SI, R11
	MOVQ CX, DX
	MOVQ kc+40(FP), R15

k2:
	TILELOADD_A_T4
	TILELOADD_B0_T5
	TDPBF16PS_T0_T4_T5
	TILELOADD_B1_T6
	TDPBF16PS_T1_T4_T6
	ADDQ $64, R11
	ADDQ AX, DX
	DECQ R15
	JNZ k2
	TILESTORED_T0
	TILESTORED_T1
	ADDQ $128, R14
	ADDQ $2048, CX
	SUBQ $2, R13
	JMP group

nextrow:
	MOVQ R8, R15
	SHLQ $4, R15
	ADDQ R15, SI
	MOVQ R10, R15
	SHLQ $4, R15
	ADDQ R15, DI
	DECQ R12
	JMP rowblk

done:
	TILERELEASE
	RET
