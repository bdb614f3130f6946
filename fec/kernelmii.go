package fec

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// KernelMII is the kernel's MII ioctls on a network interface it owns
// (linux/sockios.h, linux/mii.h): SIOCGMIIPHY reports the address of the
// interface's PHY, SIOCGMIIREG and SIOCSMIIREG read and write a clause-22
// register of any address on the MDIO bus of the interface's PHY (the
// kernel's phy_mii_ioctl). The kernel's fec answers them only while the
// interface is up (fec_enet_ioctl). A port whose PHY sits on the bus of a
// MAC the kernel owns reaches it this way (mdiobus.go).
type KernelMII interface {
	MIIPHY(ifname string) (int, error)
	MIIRead(ifname string, phy, reg int) (uint16, error)
	MIIWrite(ifname string, phy, reg int, v uint16) error
}

// miiIfreq is struct ifreq with struct mii_ioctl_data in its union, as the
// MII ioctls take it: the name, then phy_id, reg_num, val_in, val_out
// (u16 each), padded to the largest struct ifreq (40 bytes on 64-bit
// kernels; 32 on 32-bit ones, which copy only that much).
type miiIfreq struct {
	Name   [unix.IFNAMSIZ]byte
	PhyID  uint16
	RegNum uint16
	ValIn  uint16
	ValOut uint16
	_      [16]byte
}

// The ioctl numbers (linux/sockios.h).
const (
	siocGMIIPHY = 0x8947
	siocGMIIREG = 0x8948
	siocSMIIREG = 0x8949
)

// sockMII is KernelMII through an AF_INET datagram socket, as ethtool and
// mii-tool do.
type sockMII struct{}

func (sockMII) do(ifname string, req uintptr, r *miiIfreq) error {
	if len(ifname) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q longer than %d bytes", ifname, unix.IFNAMSIZ-1)
	}
	copy(r.Name[:], ifname)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket for the MII ioctls: %w", err)
	}
	defer unix.Close(fd)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(r))); e != 0 {
		return e
	}
	return nil
}

func (s sockMII) MIIPHY(ifname string) (int, error) {
	var r miiIfreq
	if err := s.do(ifname, siocGMIIPHY, &r); err != nil {
		return 0, fmt.Errorf("SIOCGMIIPHY on %s: %w", ifname, err)
	}
	return int(r.PhyID), nil
}

func (s sockMII) MIIRead(ifname string, phy, reg int) (uint16, error) {
	r := miiIfreq{PhyID: uint16(phy), RegNum: uint16(reg)}
	if err := s.do(ifname, siocGMIIREG, &r); err != nil {
		return 0, fmt.Errorf("SIOCGMIIREG on %s: %w", ifname, err)
	}
	return r.ValOut, nil
}

func (s sockMII) MIIWrite(ifname string, phy, reg int, v uint16) error {
	r := miiIfreq{PhyID: uint16(phy), RegNum: uint16(reg), ValIn: v}
	if err := s.do(ifname, siocSMIIREG, &r); err != nil {
		return fmt.Errorf("SIOCSMIIREG on %s: %w", ifname, err)
	}
	return nil
}
