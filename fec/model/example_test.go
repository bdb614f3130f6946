package model_test

import (
	"encoding/binary"
	"fmt"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/fec/model"
	"github.com/gopmd/gopmd/sim/simdma"
)

type printWire struct{}

func (printWire) Transmit(f []byte) { fmt.Printf("wire: %d bytes to % x\n", len(f), f[:6]) }

// Example sends one frame through a legacy-descriptor TX ring, the way a
// driver brings the MAC up (docs/hardware-fec.md §5.3), with raw register offsets.
func Example() {
	mmu := simdma.NewIOMMU(true)
	dev, err := model.New(model.Config{SoC: "imx8mp", IOMMU: mmu})
	if err != nil {
		panic(err)
	}
	dev.SetWire(printWire{})
	ring, _ := dma.NewRegion(make([]byte, 4096), mmu, dma.Options{Attr: dma.Attr{Uncached: true, Name: "tx ring"}}, nil)
	buf, _ := dma.NewRegion(make([]byte, 4096), mmu, dma.Options{Attr: dma.Attr{Name: "tx buffers"}}, nil)

	const (
		ECR, RCR, TCR, TDSR, TDAR, PALR, PAUR = 0x024, 0x084, 0x0C4, 0x184, 0x014, 0x0E4, 0x0E8
	)
	dev.Write32(ECR, 1) // RESET
	dev.Write32(PALR, 0x02000000)
	dev.Write32(PAUR, 0x00010000)
	dev.Write32(TDSR, uint32(ring.IOVA()))
	dev.Write32(RCR, 1984<<16|1<<6|1<<2) // MAX_FL, RGMII_EN, MII_MODE; LOOP cleared
	dev.Write32(TCR, 1<<2)               // full duplex
	dev.Write32(ECR, 1<<8|1<<5|1<<1)     // DBSWP, SPEED (1000), ETHEREN

	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5})
	copy(buf.Bytes(), frame)
	buf.SyncForDevice(0, len(frame)) // clean: the DMA does not snoop caches

	bd := ring.Bytes()
	binary.LittleEndian.PutUint32(bd[4:], uint32(buf.IOVA()))
	// Word 0: status R|W|L|TC in bits 31:16, length in 15:0.
	binary.LittleEndian.PutUint32(bd[0:], uint32(0x8000|0x2000|0x0800|0x0400)<<16|uint32(len(frame)))
	dma.DoorbellBarrier()
	dev.Write32(TDAR, 0)

	fmt.Printf("R after TDAR: %v, TDAR %#x\n", binary.LittleEndian.Uint16(bd[2:])&0x8000 != 0, dev.Read32(TDAR))
	// Output:
	// wire: 60 bytes to ff ff ff ff ff ff
	// R after TDAR: false, TDAR 0x0
}
