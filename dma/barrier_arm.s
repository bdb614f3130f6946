#include "textflag.h"

// ARMv7: DMB/DSB with the outer-shareable store option.
TEXT ·writeBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DMB	MB_OSHST
	RET

TEXT ·ReadBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DMB	MB_OSH
	RET

TEXT ·doorbellBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DMB	MB_ST
	RET
