#include "textflag.h"

// func spin(n uint64): one load, then SUB and CBNZ n times, then RET:
// 2n+2 instructions.
TEXT ·spin(SB), NOSPLIT|NOFRAME, $0-8
	MOVD	n+0(FP), R0
loop:
	SUB	$1, R0, R0
	CBNZ	R0, loop
	RET
