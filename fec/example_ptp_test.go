package fec_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/facebook/time/ptp/protocol"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/fec" // the FEC driver
	"github.com/gopmd/gopmd/sim"
)

// Two ports on a cable synchronise their 1588 clocks with IEEE 1588
// two-step end-to-end delay measurement over hardware timestamps: the
// master sends Sync and then, in a Follow_Up, the time Sync left it (t1,
// its TX stamp); the slave stamps Sync's arrival (t2), sends a Delay_Req
// it stamps on the way out (t3), and the master answers with the time that
// arrived (t4) in a Delay_Resp. Then the slave's offset from the master is
// ((t2-t1) - (t4-t3)) / 2, and a PI servo (linuxptp's, with its default
// constants) steps the slave's clock once and then steers its frequency.
//
// The slave's oscillator runs 50 ppm fast and its clock starts 1 ms
// ahead. Model time is manual: both models advance together, so the run
// is the same every time, and the true offset (both clocks read at one
// model instant) can be printed beside the measured one.
func Example_twoStepPTP() {
	const spec = "&timeline=manual&timestamps=rx,tx&link-poll=0"
	master, err := driver.Open("sim:fec140?peer=sim:fec141" + spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer master.Close()
	slave, err := driver.Open("sim:fec141?freq-error=50000" + spec) // 50 ppm fast
	if err != nil {
		fmt.Println(err)
		return
	}
	defer slave.Close()
	for _, p := range []driver.Port{master, slave} {
		if err := p.Start(); err != nil {
			fmt.Println(err)
			return
		}
	}
	mc, _ := driver.ClockOf(master)
	sc, _ := driver.ClockOf(slave)
	epoch := driver.Time(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	mc.Set(epoch)
	sc.Set(epoch.Add(time.Millisecond)) // 1 ms ahead
	tick := func(d time.Duration) {     // the world's time, on both models
		sim.FECModel("fec140").AdvanceTime(d)
		sim.FECModel("fec141").AdvanceTime(d)
	}

	m := ptpPort{p: master, id: 0x0200000000000140}
	s := ptpPort{p: slave, id: 0x0200000000000141}
	const interval = 125 * time.Millisecond // logSyncInterval -3
	servo := newPIServo(interval)
	for seq := uint16(1); seq <= 40; seq++ {
		// Sync, stamped by the master's MAC on the way out (t1) and by the
		// slave's on the way in (t2).
		now, _ := mc.Now()
		m.send(protocol.MessageSync, seq, now, protocol.FlagTwoStep, true)
		t1 := m.txStamp()
		_, t2 := s.recv()
		// Follow_Up carries t1.
		m.send(protocol.MessageFollowUp, seq, t1, 0, false)
		fu, _ := s.recv()
		t1 = fu.stamp
		tick(time.Millisecond)
		// Delay_Req, stamped on the way out (t3) and in (t4).
		s.send(protocol.MessageDelayReq, seq, 0, 0, true)
		t3 := s.txStamp()
		_, t4 := m.recv()
		m.send(protocol.MessageDelayResp, seq, t4, 0, false)
		dr, _ := s.recv()
		t4 = dr.stamp

		offset := (t2.Sub(t1) - t4.Sub(t3)) / 2
		mn, _ := mc.Now()
		sn, _ := sc.Now()
		step, ppb := servo.sample(offset)
		if step != 0 {
			sc.Step(-step)
		}
		sc.AdjFreq(-ppb)
		if seq <= 5 || seq%10 == 0 {
			fmt.Printf("sync %2d: measured offset %9v, true %9v\n", seq, offset, sn.Sub(mn))
		}
		tick(interval - time.Millisecond)
	}
	mn, _ := mc.Now()
	sn, _ := sc.Now()
	f, _ := sc.Freq()
	fmt.Printf("after 5 s: slave - master = %v, slave frequency %.0f ppb\n", sn.Sub(mn), f)
	if d := sn.Sub(mn); d > -100*time.Nanosecond && d < 100*time.Nanosecond {
		fmt.Println("synchronised: under 100 ns")
	}
	// Output:
	// sync  1: measured offset 1.000025ms, true 1.00005ms
	// sync  2: measured offset 1.006275ms, true  1.0063ms
	// sync  3: measured offset      25ns, true      25ns
	// sync  4: measured offset      22ns, true      22ns
	// sync  5: measured offset      19ns, true      19ns
	// sync 10: measured offset       4ns, true       4ns
	// sync 20: measured offset      -2ns, true      -2ns
	// sync 30: measured offset      -2ns, true      -2ns
	// sync 40: measured offset      -2ns, true      -2ns
	// after 5 s: slave - master = -2ns, slave frequency -50000 ppb
	// synchronised: under 100 ns
}

// ptpPort sends and receives PTP event and general messages over Ethernet
// (EtherType 0x88F7) on queue 0 of a port opened with timestamps=rx,tx.
type ptpPort struct {
	p  driver.Port
	id protocol.ClockIdentity
}

// ptpMsg is a received message: its type and the timestamp it carries.
type ptpMsg struct {
	typ   protocol.MessageType
	stamp driver.Time
}

var ptpDst = []byte{0x01, 0x1b, 0x19, 0x00, 0x00, 0x00} // the PTP multicast address for layer 2

// send builds one message in a packet buffer and queues it: event
// messages (Sync, Delay_Req) with a TX timestamp request.
func (pp ptpPort) send(typ protocol.MessageType, seq uint16, ts driver.Time, flags uint16, event bool) {
	pk := pp.p.RxQueue(0).Pool().Alloc()
	pk.SetLen(14 + 54) // the Ethernet header and the longest of the four messages
	b := pk.Data()
	clear(b)
	copy(b, ptpDst)
	binary.BigEndian.PutUint64(b[6:], uint64(pp.id)) // a source MAC from the identity's low bytes
	copy(b[6:12], b[8:14])
	binary.BigEndian.PutUint16(b[12:], 0x88f7)
	h := protocol.Header{
		SdoIDAndMsgType:    protocol.NewSdoIDAndMsgType(typ, 0),
		Version:            protocol.Version,
		MessageLength:      44,
		FlagField:          flags,
		SourcePortIdentity: protocol.PortIdentity{ClockIdentity: pp.id, PortNumber: 1},
		SequenceID:         seq,
		LogMessageInterval: -3,
	}
	stamp := protocol.NewTimestamp(time.Unix(0, int64(ts)))
	var msg protocol.BinaryMarshalerTo
	switch typ {
	case protocol.MessageSync, protocol.MessageDelayReq:
		msg = &protocol.SyncDelayReq{Header: h, SyncDelayReqBody: protocol.SyncDelayReqBody{OriginTimestamp: stamp}}
	case protocol.MessageFollowUp:
		msg = &protocol.FollowUp{Header: h, FollowUpBody: protocol.FollowUpBody{PreciseOriginTimestamp: stamp}}
	case protocol.MessageDelayResp:
		h.MessageLength = 54
		msg = &protocol.DelayResp{Header: h, DelayRespBody: protocol.DelayRespBody{ReceiveTimestamp: stamp}}
	}
	msg.MarshalBinaryTo(b[14:])
	tx := pp.p.TxQueue(0)
	if event {
		tx.(driver.TxTimestamper).TxStamped(pk, uint64(seq))
	} else {
		tx.TxBurst([]*driver.Packet{pk})
	}
}

// txStamp is the transmit time of the last event message sent.
func (pp ptpPort) txStamp() driver.Time {
	var st [1]driver.TxStamp
	if pp.p.TxQueue(0).(driver.TxTimestamper).TxTimestamps(st[:]) != 1 || st[0].Lost {
		panic("no transmit timestamp")
	}
	return st[0].Time
}

// recv takes one message and its receive time.
func (pp ptpPort) recv() (ptpMsg, driver.Time) {
	var (
		pkts [1]*driver.Packet
		rx   [1]driver.Time
	)
	if pp.p.RxQueue(0).(driver.RxTimestamper).RxBurstStamped(pkts[:], rx[:]) != 1 {
		panic("no message")
	}
	defer pkts[0].Free()
	pkt, err := protocol.DecodePacket(pkts[0].Data()[14:])
	if err != nil {
		panic(err)
	}
	msg := ptpMsg{typ: pkt.MessageType()}
	switch p := pkt.(type) {
	case *protocol.SyncDelayReq:
		msg.stamp = driver.Time(p.OriginTimestamp.Time().UnixNano())
	case *protocol.FollowUp:
		msg.stamp = driver.Time(p.PreciseOriginTimestamp.Time().UnixNano())
	case *protocol.DelayResp:
		msg.stamp = driver.Time(p.ReceiveTimestamp.Time().UnixNano())
	}
	return msg, rx[0]
}

// piServo is the PI servo of linuxptp (servo/pi.c), in its behaviour: the
// first two samples estimate the frequency error, and the second steps the
// clock by its offset and sets that frequency; from then on every sample
// adjusts the frequency by kp*offset plus the integral of ki*offset.
type piServo struct {
	kp, ki  float64
	drift   float64 // ppb: the integral
	samples int
	first   time.Duration
	dt      float64 // s between samples
}

func newPIServo(interval time.Duration) *piServo {
	// linuxptp's defaults for hardware time stamping: kp = 0.7 s^-0.3 and
	// ki = 0.3 s^0.4 scaled by the interval, each capped by its norm max.
	dt := interval.Seconds()
	kp := min(0.7*math.Pow(dt, -0.3), 0.7/dt)
	ki := min(0.3*math.Pow(dt, 0.4), 0.3/dt)
	return &piServo{kp: kp, ki: ki, dt: dt}
}

// sample takes a measured offset (slave - master) and returns the step to
// apply (0: none) and the frequency correction in ppb to subtract.
func (s *piServo) sample(offset time.Duration) (step time.Duration, ppb float64) {
	s.samples++
	switch s.samples {
	case 1:
		s.first = offset
		return 0, 0
	case 2:
		// What the offset grew by in one interval is the frequency error
		// (ns per s is ppb); the offset itself is stepped away.
		s.drift = float64(offset-s.first) / s.dt
		return offset, s.drift
	}
	kiTerm := s.ki * float64(offset)
	ppb = s.kp*float64(offset) + s.drift + kiTerm
	s.drift += kiTerm
	return 0, ppb
}
