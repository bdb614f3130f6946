package enetc

// Unexported layout constants, for the tests in package enetc_test that
// compare the driver's transcription of the reference with the model's.
const (
	BDSize      = bdSize
	BDRingAlign = bdRingAlign
	CBDSize     = cbdSize
	CBDClassRSS = cbdClassRSS
	CBDCmdSet   = cbdCmdSet
)

// PSIPMRUP and PSIPMRMP are the promiscuous bits of SI si in PSIPMR.
func PSIPMRUP(si int) uint32 { return psipmrUP(si) }
func PSIPMRMP(si int) uint32 { return psipmrMP(si) }
