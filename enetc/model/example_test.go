package model_test

import (
	"encoding/binary"
	"fmt"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/sim/simdma"
)

// frameCounter is a wire that counts what leaves the port.
type frameCounter struct{ n, bytes int }

func (c *frameCounter) Transmit(f []byte) { c.n++; c.bytes += len(f) }

// A PF brought up as docs/hardware-enetc.md §9 says, one TX ring, one short frame:
// the model fetches the BD by IOVA, pads the frame to 60 bytes and moves
// the consumer index. Registers and bits are named as the reference names
// them, through the model's own table (Lookup, Field).
func Example() {
	reg := func(name string) uint32 {
		r, ok := model.Lookup(name)
		if !ok {
			panic("no register " + name)
		}
		return r.Offset // ring registers: ring 0
	}
	bit := func(name string) uint32 {
		v, ok := model.Field(name)
		if !ok {
			panic("no field " + name)
		}
		return uint32(v)
	}
	iommu := simdma.NewIOMMU(false)
	dev := model.New(model.Config{Name: "enetc0", PF: true, IOMMU: iommu})
	wire := &frameCounter{}
	dev.SetWire(wire)

	dev.Write32(reg("PM0_RX_FIFO"), 1)
	dev.Write32(reg("PM0_CMD_CFG"), bit("PM0_CMD_CFG.TXP")|bit("PM0_CMD_CFG.TX_EN")|bit("PM0_CMD_CFG.RX_EN"))
	dev.Write32(reg("PMR"), bit("PMR.EN"))
	dev.Write32(reg("SIMR"), bit("SIMR.EN"))

	ring := make([]byte, 8*model.BDSize)
	rm, _ := iommu.Map(ring, dma.Attr{Name: "txbd", Contiguous: true})
	buf := make([]byte, 2048)
	bm, _ := iommu.Map(buf, dma.Attr{Name: "txbuf"})
	copy(buf, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5})

	dev.Write32(reg("TBBAR0"), uint32(rm.IOVA))
	dev.Write32(reg("TBBAR1"), uint32(rm.IOVA>>32))
	dev.Write32(reg("TBLENR"), 8)
	pi := dev.Read32(reg("TBPIR")) // adopt the hardware's index (erratum)
	dev.Write32(reg("TBMR"), bit("TBMR.EN"))

	bd := ring[pi*model.BDSize:]
	binary.LittleEndian.PutUint64(bd[0:], bm.IOVA)
	binary.LittleEndian.PutUint16(bd[8:], 14)  // buf_len
	binary.LittleEndian.PutUint16(bd[10:], 14) // frm_len
	bd[15] = model.TxFlagF
	dev.Write32(reg("TBPIR"), (pi+1)%8) // synchronous mode: sent before this returns

	fmt.Println("frames", wire.n, "bytes", wire.bytes, "TBCIR", dev.Read32(reg("TBCIR")))
	fmt.Println("TFRM", dev.Read32(reg("TFRM")), "TEOCT", dev.Read64(reg("TEOCT")))
	// Output:
	// frames 1 bytes 60 TBCIR 1
	// TFRM 1 TEOCT 64
}
