#include "textflag.h"

// x86-64 keeps stores in order and loads in order (TSO) and maps MMIO
// uncached: these exist only so the compiler cannot move accesses across them.

TEXT ·writeBarrier(SB), NOSPLIT|NOFRAME, $0-0
	RET

TEXT ·readBarrier(SB), NOSPLIT|NOFRAME, $0-0
	RET

// SFENCE orders earlier (possibly write-combined) stores before the doorbell.
TEXT ·doorbellBarrier(SB), NOSPLIT|NOFRAME, $0-0
	SFENCE
	RET
