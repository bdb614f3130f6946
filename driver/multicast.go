package driver

import (
	"fmt"
	"net"
)

// MulticastFilter is the multicast part of a port's address filter, which
// both drivers implement (the NICs' 64-bucket hash filters: ENETC
// PSIMMHFR0/1, FEC GAUR/GALR). A port that is not promiscuous receives
// broadcast, its own unicast address, the groups given with AddMulticast
// (and, a hash filter being what it is, any other group that hashes to the
// same bucket), or every group while all-multicast is on. A frame the filter
// rejects is counted by the port (CauseFiltered or CauseMACDiscard), never
// lost silently. Set-up calls: for the control goroutine.
type MulticastFilter interface {
	// AddMulticast lets frames for group mac in. Adding a group twice is
	// not an error; it stays in until removed once.
	AddMulticast(mac net.HardwareAddr) error
	// RemoveMulticast stops accepting group mac; a group not added is an
	// error.
	RemoveMulticast(mac net.HardwareAddr) error
	// SetAllMulticast accepts every multicast frame (on) or only the
	// groups added (off).
	SetAllMulticast(on bool) error
}

// CheckMulticast returns an error naming the operation op and mac unless
// mac is a 6-byte multicast address other than broadcast.
func CheckMulticast(op string, mac net.HardwareAddr) error {
	if len(mac) != 6 {
		return fmt.Errorf("%s: multicast address %q is not 6 bytes", op, mac.String())
	}
	if mac[0]&1 == 0 {
		return fmt.Errorf("%s: %s is not a multicast address (the lowest bit of its first byte is clear); a port receives its own unicast address without joining it", op, mac)
	}
	if mac[0]&mac[1]&mac[2]&mac[3]&mac[4]&mac[5] == 0xFF {
		return fmt.Errorf("%s: %s is broadcast, which every port receives without joining it", op, mac)
	}
	return nil
}
