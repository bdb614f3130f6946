package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// progName is the name the steering program carries in the kernel
// (bpftool prog, ip link): a later run that finds a program of this name
// on the interface knows it for one a crashed run left, and replaces it.
const progName = "gopmd_xsk"

// passRules are the frames the program leaves to the kernel's stack
// (XDP_PASS) even on a queue whose socket is bound: the spec option pass=.
type passRules struct {
	ARP  bool // EtherType 0x0806
	ND   bool // ICMPv6 types 133 to 137 (router and neighbour discovery, redirect) without extension headers
	Host bool // IPv4 and IPv6 frames to an address the interface had when the port opened
}

// steering is the loaded program and its maps.
type steering struct {
	prog  *ebpf.Program
	xsks  *ebpf.Map // XSKMAP: RX queue index -> socket
	host4 *ebpf.Map // IPv4 addresses of the host (pass=host)
	host6 *ebpf.Map // IPv6 addresses of the host (pass=host)
}

func (s *steering) close() {
	for _, c := range []interface{ Close() error }{s.prog, s.xsks, s.host4, s.host6} {
		if c != nil {
			_ = c.Close()
		}
	}
}

// Offsets in struct xdp_md.
const (
	mdData         = 0
	mdDataEnd      = 4
	mdRxQueueIndex = 16
	xdpPass        = 2
)

// Offsets in the frame, and the values compared, as a little-endian load
// of the big-endian field sees them on the hosts this runs on.
const (
	offEtherType  = 12
	offIPv4Dst    = 14 + 16
	offIPv6Next   = 14 + 6
	offIPv6Dst    = 14 + 24
	offICMPv6Type = 14 + 40
	protoICMPv6   = 58
)

// etherType is the value a 16-bit load of the EtherType field yields on a
// host of this byte order.
func etherType(t uint16) int32 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], t)
	return int32(binary.NativeEndian.Uint16(b[:]))
}

// program assembles the steering program: frames the rules pass go to the
// kernel; every other frame goes to the socket bound at its RX queue
// (bpf_redirect_map on the XSKMAP), and to the kernel when the queue has
// no socket (the lookup's default action, XDP_PASS, since Linux 5.3).
func program(r passRules, s *steering) asm.Instructions {
	in := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, mdData, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, mdDataEnd, asm.Word),
	}
	if r.ARP || r.ND || r.Host {
		in = append(in,
			asm.Mov.Reg(asm.R4, asm.R2),
			asm.Add.Imm(asm.R4, 14),
			asm.JGT.Reg(asm.R4, asm.R3, "redirect"),
			asm.LoadMem(asm.R5, asm.R2, offEtherType, asm.Half),
		)
		if r.ARP {
			in = append(in, asm.JEq.Imm(asm.R5, etherType(0x0806), "pass"))
		}
		if r.Host {
			in = append(in,
				asm.JNE.Imm(asm.R5, etherType(0x0800), "not4"),
				asm.Mov.Reg(asm.R4, asm.R2),
				asm.Add.Imm(asm.R4, offIPv4Dst+4),
				asm.JGT.Reg(asm.R4, asm.R3, "redirect"),
				asm.Add.Imm(asm.R2, offIPv4Dst),
				asm.LoadMapPtr(asm.R1, s.host4.FD()),
				asm.FnMapLookupElem.Call(),
				asm.JNE.Imm(asm.R0, 0, "pass"),
				asm.Ja.Label("redirect"),
				asm.Mov.Reg(asm.R5, asm.R5).WithSymbol("not4"),
			)
		}
		if r.ND || r.Host {
			in = append(in, asm.JNE.Imm(asm.R5, etherType(0x86dd), "redirect"))
		}
		if r.ND {
			in = append(in,
				asm.Mov.Reg(asm.R4, asm.R2),
				asm.Add.Imm(asm.R4, offICMPv6Type+1),
				asm.JGT.Reg(asm.R4, asm.R3, "nd_done"),
				asm.LoadMem(asm.R4, asm.R2, offIPv6Next, asm.Byte),
				asm.JNE.Imm(asm.R4, protoICMPv6, "nd_done"),
				asm.LoadMem(asm.R4, asm.R2, offICMPv6Type, asm.Byte),
				asm.JLT.Imm(asm.R4, 133, "nd_done"),
				asm.JLE.Imm(asm.R4, 137, "pass"),
				asm.Mov.Reg(asm.R5, asm.R5).WithSymbol("nd_done"),
			)
		}
		if r.Host {
			in = append(in,
				asm.Mov.Reg(asm.R4, asm.R2),
				asm.Add.Imm(asm.R4, offIPv6Dst+16),
				asm.JGT.Reg(asm.R4, asm.R3, "redirect"),
				asm.Add.Imm(asm.R2, offIPv6Dst),
				asm.LoadMapPtr(asm.R1, s.host6.FD()),
				asm.FnMapLookupElem.Call(),
				asm.JNE.Imm(asm.R0, 0, "pass"),
			)
		}
	}
	in = append(in,
		asm.LoadMem(asm.R2, asm.R6, mdRxQueueIndex, asm.Word).WithSymbol("redirect"),
		asm.LoadMapPtr(asm.R1, s.xsks.FD()),
		asm.Mov.Imm(asm.R3, xdpPass),
		asm.FnRedirectMap.Call(),
		asm.Return(),
	)
	if r.ARP || r.ND || r.Host {
		in = append(in,
			asm.Mov.Imm(asm.R0, xdpPass).WithSymbol("pass"),
			asm.Return(),
		)
	}
	return in
}

// loadSteering creates the maps and loads the program for an interface
// with nq RX queues and the host addresses addrs.
func loadSteering(nq int, r passRules, addrs []net.IP) (*steering, error) {
	s := &steering{}
	var err error
	s.xsks, err = ebpf.NewMap(&ebpf.MapSpec{Name: "gopmd_xsks", Type: ebpf.XSKMap, KeySize: 4, ValueSize: 4, MaxEntries: uint32(nq)})
	if err != nil {
		return nil, fmt.Errorf("creating the XSKMAP of %d entries: %w", nq, err)
	}
	if r.Host {
		var v4, v6 [][]byte
		for _, a := range addrs {
			if a4 := a.To4(); a4 != nil {
				v4 = append(v4, a4)
			} else if a16 := a.To16(); a16 != nil {
				v6 = append(v6, a16)
			}
		}
		for _, m := range []struct {
			dst  **ebpf.Map
			name string
			size uint32
			keys [][]byte
		}{{&s.host4, "gopmd_host4", 4, v4}, {&s.host6, "gopmd_host6", 16, v6}} {
			*m.dst, err = ebpf.NewMap(&ebpf.MapSpec{Name: m.name, Type: ebpf.Hash, KeySize: m.size, ValueSize: 4, MaxEntries: uint32(max(1, len(m.keys)))})
			if err != nil {
				s.close()
				return nil, fmt.Errorf("creating the host address map: %w", err)
			}
			for _, k := range m.keys {
				if err := (*m.dst).Put(k, uint32(1)); err != nil {
					s.close()
					return nil, fmt.Errorf("adding host address %v: %w", net.IP(k), err)
				}
			}
		}
	}
	s.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: progName, Type: ebpf.XDP, License: "BSD", Instructions: program(r, s)})
	if err != nil {
		s.close()
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("the kernel's verifier refused the steering program: %+v", ve)
		}
		return nil, fmt.Errorf("loading the steering program: %w", err)
	}
	return s, nil
}
