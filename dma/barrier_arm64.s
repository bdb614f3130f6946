#include "textflag.h"

// DMB OSHST: order stores in the outer-shareable domain (CPU and DMA masters).
TEXT ·writeBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DMB	$0x2
	RET

// DMB OSHLD: order an earlier load before later loads and stores.
TEXT ·ReadBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DMB	$0x1
	RET

// DSB ST: complete every earlier store before the next instruction (the
// MMIO doorbell write) executes.
TEXT ·doorbellBarrier(SB), NOSPLIT|NOFRAME, $0-0
	DSB	$0xe
	RET

// func cacheCleanRange(p, n uintptr): DC CVAC over every 64-byte line that
// [p, p+n) touches, then DSB SY so the lines reach the point of coherency.
TEXT ·cacheCleanRange(SB), NOSPLIT, $0-16
	MOVD	p+0(FP), R0
	MOVD	n+8(FP), R1
	ADD	R0, R1, R1
	AND	$~63, R0, R0
clean:
	CMP	R1, R0
	BHS	cleaned
	DC	CVAC, R0
	ADD	$64, R0, R0
	B	clean
cleaned:
	DSB	$0xf
	RET

// func cacheInvalidateRange(p, n uintptr): DC CIVAC (clean and invalidate:
// user space may not use DC IVAC) over every line of [p, p+n), then DSB SY.
TEXT ·cacheInvalidateRange(SB), NOSPLIT, $0-16
	MOVD	p+0(FP), R0
	MOVD	n+8(FP), R1
	ADD	R0, R1, R1
	AND	$~63, R0, R0
inval:
	CMP	R1, R0
	BHS	invalidated
	DC	CIVAC, R0
	ADD	$64, R0, R0
	B	inval
invalidated:
	DSB	$0xf
	RET
