#include "textflag.h"

// One LDR/STR per access (no LDXR/STXR, no LDAR/STLR): plain single-copy
// atomic accesses, which Device memory requires to be aligned.

// func load32(p unsafe.Pointer) uint32
TEXT ·load32(SB), NOSPLIT|NOFRAME, $0-12
	MOVD	p+0(FP), R0
	MOVWU	(R0), R1
	MOVW	R1, ret+8(FP)
	RET

// func store32(p unsafe.Pointer, v uint32)
TEXT ·store32(SB), NOSPLIT|NOFRAME, $0-12
	MOVD	p+0(FP), R0
	MOVWU	v+8(FP), R1
	MOVW	R1, (R0)
	RET

// func load64(p unsafe.Pointer) uint64
TEXT ·load64(SB), NOSPLIT|NOFRAME, $0-16
	MOVD	p+0(FP), R0
	MOVD	(R0), R1
	MOVD	R1, ret+8(FP)
	RET

// func store64(p unsafe.Pointer, v uint64)
TEXT ·store64(SB), NOSPLIT|NOFRAME, $0-16
	MOVD	p+0(FP), R0
	MOVD	v+8(FP), R1
	MOVD	R1, (R0)
	RET
