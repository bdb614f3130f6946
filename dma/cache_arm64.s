#include "textflag.h"

// WALK_SPANS issues OP (a DC instruction on R4, or a count) once for
// every 64-byte line of every span of mem that lies inside mem: the
// caller's spans, so each is checked here, with two unsigned compares that
// also refuse a negative offset or length and an empty span. Off and Len
// are loaded as one pair; the line loop runs at least once (off < end).
//	R0 mem's first byte  R1 len(mem)  R2 the next span  R3 past the last
#define WALK_SPANS(OP) \
	MOVD	mem_base+0(FP), R0; \
	MOVD	mem_len+8(FP), R1; \
	MOVD	spans_base+24(FP), R2; \
	MOVD	spans_len+32(FP), R3; \
	ADD	R3<<4, R2, R3; \
	CMP	R3, R2; \
	BEQ	walked; \
span: \
	LDP.P	16(R2), (R4, R5); \
	ADD	R4, R5, R5; \
	CMP	R1, R5; \
	BHI	next; \
	CMP	R5, R4; \
	BHS	next; \
	ADD	R0, R4, R4; \
	ADD	R0, R5, R5; \
	AND	$~63, R4, R4; \
line: \
	OP; \
	ADD	$64, R4, R4; \
	CMP	R5, R4; \
	BLO	line; \
next: \
	CMP	R3, R2; \
	BNE	span; \
walked:

// The OPs (a macro argument cannot hold a comma).
#define DC_CVAC_R4 DC CVAC, R4
#define DC_CIVAC_R4 DC CIVAC, R4
#define COUNT_R6 ADD $1, R6, R6

// func cacheCleanSpans(mem []byte, spans []Span): DC CVAC over every line
// of every span inside mem, then one DSB SY for them all, so the lines
// reach the point of coherency before the caller publishes descriptors.
TEXT ·cacheCleanSpans(SB), NOSPLIT|NOFRAME, $0-48
	WALK_SPANS(DC_CVAC_R4)
	DSB	$0xf
	RET

// func cacheInvalidateSpans(mem []byte, spans []Span): DC CIVAC (clean and
// invalidate: user space may not use DC IVAC) over every line of every
// span inside mem, then one DSB SY for them all.
TEXT ·cacheInvalidateSpans(SB), NOSPLIT|NOFRAME, $0-48
	WALK_SPANS(DC_CIVAC_R4)
	DSB	$0xf
	RET

// func spanLines(mem []byte, spans []Span) int: the number of DC
// instructions cacheCleanSpans and cacheInvalidateSpans issue for these
// arguments, from the same walk with a count for the DC (tests check the
// walk with it).
TEXT ·spanLines(SB), NOSPLIT|NOFRAME, $0-56
	MOVD	ZR, R6
	WALK_SPANS(COUNT_R6)
	MOVD	R6, ret+48(FP)
	RET
