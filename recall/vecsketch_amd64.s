#include "textflag.h"

// func sketchDotAVX2(w *int8, sk *byte, n int) int32
//
// 32 sketch bytes a round: their low and high nibbles (the codes of the
// even and odd dimensions, 0 to 15) are multiplied by the signed weights
// and added in pairs to 16 bits (VPMADDUBSW: at most 2·15·127 a pair, and
// 4·15·127 once the two halves are added), widened to 32 bits in pairs
// (VPMADDWD by ones) and accumulated.
TEXT ·sketchDotAVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ sk+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	MOVQ AX, X7
	VPBROADCASTQ X7, Y7
	MOVQ $0x0001000100010001, AX
	MOVQ AX, X6
	VPBROADCASTQ X6, Y6
	VPXOR Y0, Y0, Y0

loop:
	VMOVDQU (DI), Y1
	VPSRLW $4, Y1, Y2
	VPAND Y7, Y1, Y1
	VPAND Y7, Y2, Y2
	VPMADDUBSW (SI), Y1, Y1
	VPMADDUBSW 32(SI), Y2, Y2
	VPADDW Y1, Y2, Y1
	VPMADDWD Y6, Y1, Y1
	VPADDD Y1, Y0, Y0
	ADDQ $32, DI
	ADDQ $64, SI
	SUBQ $32, CX
	JNZ loop

	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, AX
	VZEROUPPER
	MOVL AX, ret+24(FP)
	RET
