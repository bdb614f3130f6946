#include "textflag.h"

// One MOV per access: x86 keeps the access whole when aligned, and a call
// into assembly is opaque to the Go compiler (nothing merged or moved).
// Stores are plain MOVs, not XCHG: no locked cycle reaches the device.

// func load32(p unsafe.Pointer) uint32
TEXT ·load32(SB), NOSPLIT|NOFRAME, $0-12
	MOVQ	p+0(FP), AX
	MOVL	(AX), BX
	MOVL	BX, ret+8(FP)
	RET

// func store32(p unsafe.Pointer, v uint32)
TEXT ·store32(SB), NOSPLIT|NOFRAME, $0-12
	MOVQ	p+0(FP), AX
	MOVL	v+8(FP), BX
	MOVL	BX, (AX)
	RET

// func load64(p unsafe.Pointer) uint64
TEXT ·load64(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	(AX), BX
	MOVQ	BX, ret+8(FP)
	RET

// func store64(p unsafe.Pointer, v uint64)
TEXT ·store64(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	v+8(FP), BX
	MOVQ	BX, (AX)
	RET
