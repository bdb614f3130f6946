// Command xdpfloor is scripts/race-afxdp's kernel-only XDP helper, for
// kernels that xdp-tools' xdp-bench cannot load on (its statistics
// programs attach to tracepoints a newer kernel no longer has):
//
//	xdpfloor redirect IN OUT   forward every frame of IN out of OUT in the
//	                           kernel (bpf_redirect), the floor any
//	                           AF_XDP forwarder is measured against
//	xdpfloor sink IF           count and drop every frame of IF
//	xdpfloor source IF         send 64-byte UDP frames out of IF as fast
//	                           as the kernel makes them (an XDP_TX program
//	                           run in live-frame mode, BPF_PROG_RUN with
//	                           BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18 on:
//	                           what xdp-tools' xdp-trafficgen does), until
//	                           SIGINT or SIGTERM
//
// redirect and sink attach in native mode through a BPF link, count the
// frames their program saw in a per-CPU array, print the count on SIGUSR1
// (one line: "frames N") and on exit, and detach on SIGINT or SIGTERM (the
// link goes with the process whatever ends it). The programs are assembled
// here with cilium/ebpf's asm package, as the xdp package's steering
// program is.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

const (
	xdpDrop = 1
	xdpTx   = 3
	// liveFrames is BPF_F_TEST_XDP_LIVE_FRAMES: the frames a test run's
	// program returns XDP_TX or XDP_REDIRECT for are really sent.
	liveFrames = 1 << 1
)

// xdpMD is struct xdp_md, the context a test run takes.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// source sends frames out of ifname until a signal comes.
func source(ifname string) error {
	ifc, err := net.InterfaceByName(ifname)
	if err != nil {
		return err
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "floor_source", Type: ebpf.XDP, License: "BSD",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpTx), asm.Return()}})
	if err != nil {
		return fmt.Errorf("loading the program: %w", err)
	}
	defer prog.Close()
	// 02:00:00:00:00:02 <- 02:00:00:00:00:01, IPv4 10.0.0.1 -> 10.0.0.2,
	// UDP 9 -> 9, zero payload to 60 bytes; the IPv4 checksum is right.
	frame := []byte{
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,
		0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0, 9, 0, 9, 0, 26, 0, 0,
	}
	frame = append(frame, make([]byte, 60-len(frame))...)
	var sum uint32
	for i := 14; i < 34; i += 2 {
		sum += uint32(frame[i])<<8 | uint32(frame[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	frame[24], frame[25] = byte(^sum>>8), byte(^sum)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Fprintf(os.Stderr, "xdpfloor: sending on %s\n", ifname)
	var sent uint64
	for {
		select {
		case <-stop:
			fmt.Printf("frames %d\n", sent)
			return nil
		default:
		}
		const n = 1 << 16
		_, err := prog.Run(&ebpf.RunOptions{Data: frame, Repeat: n, Flags: liveFrames,
			Context: xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(ifc.Index)}})
		if err != nil {
			return fmt.Errorf("sending on %s (live-frame test runs need Linux 5.18): %w", ifname, err)
		}
		sent += n
	}
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "xdpfloor:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var in, out string
	switch {
	case len(args) == 3 && args[0] == "redirect":
		in, out = args[1], args[2]
	case len(args) == 2 && args[0] == "sink":
		in = args[1]
	case len(args) == 2 && args[0] == "source":
		return source(args[1])
	default:
		return fmt.Errorf("usage: xdpfloor redirect IN OUT | xdpfloor sink IF | xdpfloor source IF")
	}
	ifIn, err := net.InterfaceByName(in)
	if err != nil {
		return err
	}
	counts, err := ebpf.NewMap(&ebpf.MapSpec{Name: "floor_count", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		return fmt.Errorf("the count map: %w", err)
	}
	defer counts.Close()
	// count: *lookup(0) += 1, then the verdict.
	ins := asm.Instructions{
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, counts.FD()),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "verdict"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
	}
	name := "floor_sink"
	if out != "" {
		ifOut, err := net.InterfaceByName(out)
		if err != nil {
			return err
		}
		name = "floor_redirect"
		ins = append(ins,
			asm.Mov.Imm(asm.R1, int32(ifOut.Index)).WithSymbol("verdict"),
			asm.Mov.Imm(asm.R2, 0),
			asm.FnRedirect.Call(),
			asm.Return(),
		)
	} else {
		ins = append(ins,
			asm.Mov.Imm(asm.R0, xdpDrop).WithSymbol("verdict"),
			asm.Return(),
		)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: ebpf.XDP, License: "BSD", Instructions: ins})
	if err != nil {
		return fmt.Errorf("loading the program: %w", err)
	}
	defer prog.Close()
	l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifIn.Index, Flags: link.XDPDriverMode})
	if err != nil {
		return fmt.Errorf("attaching to %s in native mode: %w", in, err)
	}
	defer l.Close()
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGINT, syscall.SIGTERM)
	fmt.Fprintf(os.Stderr, "xdpfloor: %s on %s\n", name, in)
	for s := range sig {
		var per []uint64
		if err := counts.Lookup(uint32(0), &per); err != nil {
			return fmt.Errorf("reading the count: %w", err)
		}
		var n uint64
		for _, v := range per {
			n += v
		}
		fmt.Printf("frames %d\n", n)
		if s != syscall.SIGUSR1 {
			return nil
		}
	}
	return nil
}
