package driver

import (
	"fmt"
	"net"
)

// MACProblem says why mac cannot be a port's own address, or "" when it
// can: a station address is 6 bytes, unicast (the lowest bit of the first
// byte clear, which also rules out broadcast) and not all zeros (IEEE 802
// reserves no station the zero address; Linux's is_valid_ether_addr
// refuses the same three).
func MACProblem(mac net.HardwareAddr) string {
	switch {
	case len(mac) != 6:
		return "not a 6-byte MAC address"
	case mac[0]&mac[1]&mac[2]&mac[3]&mac[4]&mac[5] == 0xFF:
		return "the broadcast address cannot be a port's own"
	case mac[0]&1 != 0:
		return "a multicast address (the lowest bit of its first byte is set) cannot be a port's own"
	case mac[0]|mac[1]|mac[2]|mac[3]|mac[4]|mac[5] == 0:
		return "the all-zero address is no station's"
	}
	return ""
}

// UnicastHint is what a port's own address may be, for errors.
const UnicastHint = "a unicast address other than 00:00:00:00:00:00, such as the locally administered 02:00:00:00:00:01"

// MACOption parses the value of a mac= spec option: a port's own
// address, refused as an *OptionError unless it is one (MACProblem).
func MACOption(v string) (net.HardwareAddr, error) {
	m, err := net.ParseMAC(v)
	if err != nil || len(m) != 6 {
		return nil, BadOption("mac", v, "not a 6-byte MAC address", "six hex bytes such as 02:00:00:00:00:01")
	}
	if why := MACProblem(m); why != "" {
		return nil, BadOption("mac", v, why, UnicastHint)
	}
	return m, nil
}

// CheckUnicast returns an error naming the operation op and mac unless
// mac can be a port's own address (MACProblem).
func CheckUnicast(op string, mac net.HardwareAddr) error {
	if why := MACProblem(mac); why != "" {
		return fmt.Errorf("%s: MAC %q: %s; give %s", op, mac.String(), why, UnicastHint)
	}
	return nil
}
