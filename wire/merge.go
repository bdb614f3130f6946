package wire

// The MAC merge sublayer of IEEE 802.3br (frame preemption): a port with
// an express MAC and a preemptable MAC (pMAC) sends its preemptable frames
// as mPackets, each marked by the SMD (start mPacket delimiter) that takes
// the SFD's place. An express frame may interrupt a preemptable one
// between two of its fragments; the receiving pMAC reassembles the
// fragments. The SMD values are 802.3br's Table 99-1, as the INET
// framework's Ethernet fragment serializer (inet-framework/inet) and the
// netdev list's explanation of MAC merge (Vladimir Oltean, Aug 2024) give
// them.
const (
	SMDE byte = 0xD5 // express frame: the ordinary SFD
	SMDV byte = 0x07 // verify mPacket
	SMDR byte = 0x19 // respond mPacket
)

var (
	// SMDS starts a preemptable frame: SMDS[n], n its frame count mod 4.
	SMDS = [4]byte{0xE6, 0x4C, 0x7F, 0xB3}
	// SMDC continues frame n (SMDC[n]), followed by the fragment count.
	SMDC = [4]byte{0x61, 0x52, 0x9E, 0x2A}
	// FragCount encodes a continuation's fragment count mod 4.
	FragCount = [4]byte{0xE6, 0x4C, 0x7F, 0xB3}
)

// MPacket is one mPacket as it crosses the wire.
type MPacket struct {
	// SMD is the delimiter: SMDV, SMDR, one of SMDS or SMDC.
	SMD byte
	// Frag is the encoded fragment count (FragCount[n]) after an SMDC.
	Frag byte
	// Data is the fragment's bytes of the frame (no FCS, no mCRC); valid
	// only during the call.
	Data []byte
	// Final marks the frame's last fragment: it ends with the frame's FCS,
	// the others with an mCRC.
	Final bool
}

// MergeWire is a Wire that carries mPackets too. A model whose wire is
// one sends preempted frames as fragments and its verify handshake over
// it; to any other wire it sends whole frames.
type MergeWire interface {
	Wire
	TransmitMPacket(m MPacket)
}

// MergePort is a port's receive side for mPackets.
type MergePort interface {
	ReceiveMPacket(m MPacket)
}
