#include "textflag.h"

// One LDR/STR per 32-bit access (no LDREX/STREX).

// func load32(p unsafe.Pointer) uint32
TEXT ·load32(SB), NOSPLIT|NOFRAME, $0-8
	MOVW	p+0(FP), R0
	MOVW	(R0), R1
	MOVW	R1, ret+4(FP)
	RET

// func store32(p unsafe.Pointer, v uint32)
TEXT ·store32(SB), NOSPLIT|NOFRAME, $0-8
	MOVW	p+0(FP), R0
	MOVW	v+4(FP), R1
	MOVW	R1, (R0)
	RET
