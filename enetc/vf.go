package enetc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
)

// VF-to-PF messages (docs/hardware-enetc.md §2.10). A VF's primary MAC
// (SIPMAR0/1) is the PF's PSIPMAR0/1(n): the VF cannot write it, it asks
// its PF with a VSI-to-PSI message. gopmd's PF answers those messages
// while it is started (every vfMsgPoll); a VF whose PF does not answer
// gets ErrNoPFAnswer naming what to do.

// Mailbox registers (§2.10). The same offsets are PSI* on a PF and VSI*
// on a VF.
const (
	regPSIMSGRR   = 0x204 // PF: message received (MR bits 2:1); VF: VSIMSGSR
	regVSIMSGSR   = 0x204
	regVSIMSGSND0 = 0x210 // VF: VSIMSGSNDAR0 (address low | size/32)
	regVSIMSGSND1 = 0x214 // VF: VSIMSGSNDAR1 (address high)

	vsimsgsr_MB   = 1 << 0 // message busy: sent, not answered yet
	vsimsgsr_MS   = 1 << 1 // the PF answered with an error code
	msgCodeShift  = 16     // bits 31:16: the PF's code
	psimsgrr_MR0  = 1 << 1 // MR bit of VF 0; VF 1 is bit 2
	maxVFs        = 2      // ENETC_MAX_NUM_VFS
	msgBufSize    = 1024   // the PF's receive buffer per VF (and the largest message)
	msgSetMACSize = 64     // the set-MAC message, padded to a multiple of 32

	// Message header: type, action (Linux enetc_msg_cmd_header).
	msgTypeMAC    = 1 // ENETC_MSG_CMD_MNG_MAC
	msgActionAdd  = 1 // ENETC_MSG_CMD_MNG_ADD
	msgStatusOK   = 0
	msgStatusFail = 1
)

func regPSIVMSGRCVAR0(n int) uint32 { return 0x210 + 8*uint32(n) }
func regPSIVMSGRCVAR1(n int) uint32 { return 0x214 + 8*uint32(n) }

// vfMsgTimeout bounds how long a VF waits for its PF's answer (Linux waits
// 100 times 1 to 2 ms).
var vfMsgTimeout = 250 * time.Millisecond

// vfMsgPoll is how often a started PF looks for VF messages (no
// interrupts in poll mode).
const vfMsgPoll = 10 * time.Millisecond

// ErrNoPFAnswer is wrapped when a VF's message to its PF gets no answer.
var ErrNoPFAnswer = errors.New("the PF did not answer the VF's message")

// allocMsg allocates the mailbox memory: a PF's receive buffers for its
// VFs, a VF's send buffer.
func (p *Port) allocMsg() error {
	n := msgSetMACSize
	if p.pf {
		n = maxVFs * msgBufSize
	}
	reg, err := dma.Alloc(p.dev.Mapper, n, dma.Options{Attr: dma.Attr{Contiguous: true, Name: p.name + " VF messages"}})
	if err != nil {
		return fmt.Errorf("mailbox memory: %w", err)
	}
	p.msgMem = reg
	return nil
}

// setMsgBuffers points the device at the PF's receive buffers (on=false:
// at nothing, before the memory goes away).
func (p *Port) setMsgBuffers(on bool) {
	for n := 0; n < maxVFs; n++ {
		var iova uint64
		if on {
			iova = p.msgMem.IOVAAt(n * msgBufSize)
		}
		p.regs.Write32(regPSIVMSGRCVAR1(n), uint32(iova>>32))
		p.regs.Write32(regPSIVMSGRCVAR0(n), uint32(iova))
	}
}

// serveVFMessagesLocked answers the VF messages that arrived (PSIMSGRR):
// set-MAC writes PSIPMAR0/1(VF+1), anything else is refused. Caller holds
// the port lock.
func (p *Port) serveVFMessagesLocked() {
	mr := p.regs.Read32(regPSIMSGRR)
	for n := 0; n < maxVFs; n++ {
		bit := uint32(psimsgrr_MR0) << n
		if mr&bit == 0 {
			continue
		}
		msg := p.msgMem.Bytes()[n*msgBufSize : (n+1)*msgBufSize]
		code := uint32(msgStatusFail)
		typ, act := binary.LittleEndian.Uint16(msg[0:2]), binary.LittleEndian.Uint16(msg[2:4])
		mac := net.HardwareAddr(msg[6:12])
		if typ == msgTypeMAC && act == msgActionAdd && driver.MACProblem(mac) == "" {
			p.regs.Write32(regPSIPMAR0(n+1), macLo(mac))
			p.regs.Write32(regPSIPMAR1(n+1), macHi(mac))
			p.keepVFMAC(n, mac)
			code = msgStatusOK
		}
		p.vfMsgs.Add(1)
		p.regs.Write32(regPSIMSGRR, code<<msgCodeShift|bit) // answers, and clears MR (write 1)
	}
}

// askPFSetMAC sends the set-MAC message to the PF and waits for its
// answer, then checks SIPMAR shows the address. Caller holds the read side
// of the ERR050089 lock (and, after New, the port lock); it is let go
// while waiting, so a PF in this process can answer.
func (p *Port) askPFSetMAC(mac net.HardwareAddr) error {
	b := p.msgMem.Bytes()[:msgSetMACSize]
	clear(b)
	binary.LittleEndian.PutUint16(b[0:], msgTypeMAC)
	binary.LittleEndian.PutUint16(b[2:], msgActionAdd)
	binary.LittleEndian.PutUint16(b[4:], 1) // sa_family: ARPHRD_ETHER, as Linux's VF sends it
	copy(b[6:12], mac)
	r := p.regs
	if r.Read32(regVSIMSGSR)&vsimsgsr_MB != 0 {
		return fmt.Errorf("asking the PF to set MAC %s: an earlier message is still unanswered (VSIMSGSR.MB): %w; %s", mac, ErrNoPFAnswer, noPFHint(mac))
	}
	iova := p.msgMem.IOVA()
	r.Write32(regVSIMSGSND1, uint32(iova>>32))
	r.Write32(regVSIMSGSND0, uint32(iova)|msgSetMACSize>>5) // sends it
	deadline := time.Now().Add(vfMsgTimeout)
	st := r.Read32(regVSIMSGSR)
	for st&vsimsgsr_MB != 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("asked the PF to set MAC %s (VSI-to-PSI message), no answer within %v: %w; %s", mac, vfMsgTimeout, ErrNoPFAnswer, noPFHint(mac))
		}
		p.chip.rw.RUnlock()
		time.Sleep(time.Millisecond)
		p.chip.rw.RLock()
		st = r.Read32(regVSIMSGSR)
	}
	if st&vsimsgsr_MS != 0 {
		return fmt.Errorf("the PF refused to set MAC %s (message code %d): a PF's administrator may have fixed this VF's MAC; set it on the PF side", mac, st>>msgCodeShift)
	}
	if got := macFromRegs(r.Read32(regSIPMAR0), r.Read32(regSIPMAR1)); got.String() != mac.String() {
		return fmt.Errorf("the PF answered the request for MAC %s but SIPMAR shows %s: the PF keeps a MAC its administrator set for this VF (Linux: ip link set <pf> vf <n> mac)", mac, got)
	}
	return nil
}

func noPFHint(mac net.HardwareAddr) string {
	return fmt.Sprintf("a VF's MAC is set by its PF: start the PF (a gopmd PF answers VF messages while started; Linux's fsl-enetc does), or set it from the PF side (Linux: ip link set <pf> vf <n> mac %s)", mac)
}

// VFMessages is how many VF messages the PF has answered.
func (p *Port) VFMessages() uint64 { return p.vfMsgs.Load() }
