#include "textflag.h"

// The write and read barriers are compiler-only on x86-64 (barrier_amd64.go).

// SFENCE orders earlier (possibly write-combined) stores before the doorbell.
TEXT ·doorbellBarrier(SB), NOSPLIT|NOFRAME, $0-0
	SFENCE
	RET
