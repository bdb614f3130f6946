package pci

import (
	"fmt"
	"strconv"
	"strings"
)

// Address is a PCI function address, domain:bus:device.function, as sysfs
// names devices ("0000:01:00.0"). It is a small value type.
type Address struct {
	Domain   uint32 // 16 bits on most hosts; VMD domains use more
	Bus      uint8
	Device   uint8 // 0..31
	Function uint8 // 0..7
}

// AddressError is a string that is not a PCI address; Reason says which
// part is wrong.
type AddressError struct {
	Input  string
	Reason string
}

// Error says what is wrong with the input and what a PCI address looks like.
func (e *AddressError) Error() string {
	return fmt.Sprintf("PCI address %q: %s (want domain:bus:device.function in hex, e.g. 0000:01:00.0; lspci -D lists them)", e.Input, e.Reason)
}

// ParseAddress parses "DDDD:BB:DD.F" or "BB:DD.F" (domain 0), hexadecimal,
// either case.
func ParseAddress(s string) (Address, error) {
	var a Address
	bad := func(f string, args ...any) (Address, error) {
		return Address{}, &AddressError{Input: s, Reason: fmt.Sprintf(f, args...)}
	}
	rest, fn, ok := strings.Cut(s, ".")
	if !ok {
		return bad("no '.' before the function number")
	}
	parts := strings.Split(rest, ":")
	var dom, bus, dev string
	switch len(parts) {
	case 2:
		bus, dev = parts[0], parts[1]
	case 3:
		dom, bus, dev = parts[0], parts[1], parts[2]
	default:
		return bad("want 2 or 3 ':'-separated fields before '.', got %d", len(parts))
	}
	if dom != "" || len(parts) == 3 {
		if len(dom) < 1 || len(dom) > 8 {
			return bad("domain %q must be 1 to 8 hex digits", dom)
		}
		v, err := strconv.ParseUint(dom, 16, 32)
		if err != nil {
			return bad("domain %q is not hexadecimal", dom)
		}
		a.Domain = uint32(v)
	}
	if len(bus) < 1 || len(bus) > 2 {
		return bad("bus %q must be 1 or 2 hex digits", bus)
	}
	v, err := strconv.ParseUint(bus, 16, 8)
	if err != nil {
		return bad("bus %q is not hexadecimal", bus)
	}
	a.Bus = uint8(v)
	if len(dev) < 1 || len(dev) > 2 {
		return bad("device %q must be 1 or 2 hex digits", dev)
	}
	v, err = strconv.ParseUint(dev, 16, 8)
	if err != nil {
		return bad("device %q is not hexadecimal", dev)
	}
	if v > 31 {
		return bad("device %#x is above 0x1f", v)
	}
	a.Device = uint8(v)
	if len(fn) != 1 || fn[0] < '0' || fn[0] > '7' {
		return bad("function %q must be one digit 0-7", fn)
	}
	a.Function = fn[0] - '0'
	return a, nil
}

// MustParseAddress is ParseAddress for constants; it panics on error.
func MustParseAddress(s string) Address {
	a, err := ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

// String formats the address as sysfs does: "0000:01:00.0".
func (a Address) String() string {
	return fmt.Sprintf("%04x:%02x:%02x.%d", a.Domain, a.Bus, a.Device, a.Function)
}

// MarshalText implements encoding.TextMarshaler.
func (a Address) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Address) UnmarshalText(b []byte) error {
	v, err := ParseAddress(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}
