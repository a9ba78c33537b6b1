//go:build !purego

#include "textflag.h"

// The bytes pairScan compares with, sixteen of each: the case fold, then the
// second letters r, a, x and the first letters e, t, w, f, p.
DATA pairs<>+0x00(SB)/8, $0x2020202020202020 // fold
DATA pairs<>+0x08(SB)/8, $0x2020202020202020
DATA pairs<>+0x10(SB)/8, $0x7272727272727272 // r
DATA pairs<>+0x18(SB)/8, $0x7272727272727272
DATA pairs<>+0x20(SB)/8, $0x6161616161616161 // a
DATA pairs<>+0x28(SB)/8, $0x6161616161616161
DATA pairs<>+0x30(SB)/8, $0x7878787878787878 // x
DATA pairs<>+0x38(SB)/8, $0x7878787878787878
DATA pairs<>+0x40(SB)/8, $0x6565656565656565 // e
DATA pairs<>+0x48(SB)/8, $0x6565656565656565
DATA pairs<>+0x50(SB)/8, $0x7474747474747474 // t
DATA pairs<>+0x58(SB)/8, $0x7474747474747474
DATA pairs<>+0x60(SB)/8, $0x7777777777777777 // w
DATA pairs<>+0x68(SB)/8, $0x7777777777777777
DATA pairs<>+0x70(SB)/8, $0x6666666666666666 // f
DATA pairs<>+0x78(SB)/8, $0x6666666666666666
DATA pairs<>+0x80(SB)/8, $0x7070707070707070 // p
DATA pairs<>+0x88(SB)/8, $0x7070707070707070
GLOBL pairs<>(SB), RODATA|NOPTR, $144

// func pairScan(b []byte) (i int, mask uint32)
//
// Per 16 bytes: X0 the bytes from i, X1 those from i+1 (the next letter),
// both folded; a byte of the result is set where er, ex, tr, wa, fa or pa
// starts.
TEXT ·pairScan(SB), NOSPLIT, $0-36
	MOVQ  b_base+0(FP), SI
	MOVQ  b_len+8(FP), CX
	MOVOU pairs<>+0x00(SB), X15 // fold
	MOVOU pairs<>+0x10(SB), X8  // r
	MOVOU pairs<>+0x20(SB), X9  // a
	MOVOU pairs<>+0x30(SB), X10 // x
	MOVOU pairs<>+0x40(SB), X11 // e
	MOVOU pairs<>+0x50(SB), X12 // t
	MOVOU pairs<>+0x60(SB), X13 // w
	MOVOU pairs<>+0x70(SB), X14 // f
	MOVOU pairs<>+0x80(SB), X7  // p
	XORQ  DX, DX

loop:
	LEAQ     17(DX), AX
	CMPQ     AX, CX
	JGT      none
	MOVOU    (SI)(DX*1), X0
	MOVOU    1(SI)(DX*1), X1
	POR      X15, X0
	POR      X15, X1
	MOVO     X1, X2
	PCMPEQB  X8, X2  // R: next is r
	MOVO     X1, X3
	PCMPEQB  X9, X3  // A: next is a
	PCMPEQB  X10, X1 // next is x
	POR      X2, X1  // R|X
	MOVO     X0, X4
	PCMPEQB  X11, X4 // e
	PAND     X4, X1  // er, ex
	MOVO     X0, X4
	PCMPEQB  X12, X4 // t
	PAND     X2, X4  // tr
	POR      X4, X1
	MOVO     X0, X4
	PCMPEQB  X13, X4 // w
	MOVO     X0, X5
	PCMPEQB  X14, X5 // f
	POR      X5, X4
	PCMPEQB  X7, X0  // p
	POR      X0, X4
	PAND     X3, X4  // wa, fa, pa
	POR      X4, X1
	PMOVMSKB X1, AX
	TESTL    AX, AX
	JNZ      found
	ADDQ     $16, DX
	JMP      loop

found:
	MOVQ DX, i+24(FP)
	MOVL AX, mask+32(FP)
	RET

none:
	MOVQ DX, i+24(FP)
	MOVL $0, mask+32(FP)
	RET
