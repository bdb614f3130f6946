package model

import (
	"encoding/binary"
	"fmt"

	"github.com/gopmd/gopmd/dma"
)

// frameCounter is a wire that counts what leaves the port.
type frameCounter struct{ n, bytes int }

func (c *frameCounter) Transmit(f []byte) { c.n++; c.bytes += len(f) }

// A PF brought up as docs/hardware-enetc.md §9 says, one TX ring, one short frame:
// the model fetches the BD by IOVA, pads the frame to 60 bytes and moves
// the consumer index.
func Example() {
	iommu := dma.NewSimIOMMU(false)
	dev := New(Config{Name: "enetc0", PF: true, IOMMU: iommu})
	wire := &frameCounter{}
	dev.SetWire(wire)

	dev.Write32(regPM0_RX_FIFO, 1)
	dev.Write32(regPM0_CMD_CFG, pm_cmd_cfg_TXP|pm_cmd_cfg_TX_EN|pm_cmd_cfg_RX_EN)
	dev.Write32(regPMR, pmr_EN)
	dev.Write32(regSIMR, simr_EN)

	ring := make([]byte, 8*BDSize)
	rm, _ := iommu.Map(ring, dma.Attr{Name: "txbd", Contiguous: true})
	buf := make([]byte, 2048)
	bm, _ := iommu.Map(buf, dma.Attr{Name: "txbuf"})
	copy(buf, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5})

	dev.Write32(regTBBAR0, uint32(rm.IOVA))
	dev.Write32(regTBBAR1, uint32(rm.IOVA>>32))
	dev.Write32(regTBLENR, 8)
	pi := dev.Read32(regTBPIR) // adopt the hardware's index (erratum)
	dev.Write32(regTBMR, tbmr_EN)

	bd := ring[pi*BDSize:]
	binary.LittleEndian.PutUint64(bd[0:], bm.IOVA)
	binary.LittleEndian.PutUint16(bd[8:], 14)  // buf_len
	binary.LittleEndian.PutUint16(bd[10:], 14) // frm_len
	bd[15] = TxFlagF
	dev.Write32(regTBPIR, (pi+1)%8) // synchronous mode: sent before this returns

	fmt.Println("frames", wire.n, "bytes", wire.bytes, "TBCIR", dev.Read32(regTBCIR))
	fmt.Println("TFRM", dev.Read32(regPM0_TFRM), "TEOCT", dev.Read64(regPM0_TEOCT))
	// Output:
	// frames 1 bytes 60 TBCIR 1
	// TFRM 1 TEOCT 64
}
