package pci

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	cases := []struct {
		in   string
		want string // canonical form, or "" for an error
		why  string // part of the error
	}{
		{"0000:01:00.0", "0000:01:00.0", ""},
		{"0000:00:1F.7", "0000:00:1f.7", ""},
		{"01:00.1", "0000:01:00.1", ""},
		{"10000:00:00.0", "10000:00:00.0", ""},
		{"0000:01:00", "", "no '.'"},
		{"0000:01:00.8", "", "function \"8\""},
		{"0000:01:20.0", "", "above 0x1f"},
		{"0000:1g:00.0", "", "bus \"1g\" is not hexadecimal"},
		{"0000:100:00.0", "", "bus \"100\""},
		{"zz:01:00.0", "", "domain \"zz\""},
		{"1:2:3:4.0", "", "2 or 3"},
		{"0000:01:00.", "", "function \"\""},
		{"", "", "no '.'"},
	}
	for _, c := range cases {
		a, err := ParseAddress(c.in)
		if c.want == "" {
			var ae *AddressError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "e.g. 0000:01:00.0") {
				t.Errorf("ParseAddress(%q) = %v, %v; want an AddressError mentioning %q", c.in, a, err, c.why)
			}
			continue
		}
		if err != nil || a.String() != c.want {
			t.Errorf("ParseAddress(%q) = %v, %v; want %s", c.in, a, err, c.want)
		}
		var b Address
		txt, _ := a.MarshalText()
		if err := b.UnmarshalText(txt); err != nil || b != a {
			t.Errorf("text round trip of %v: %v, %v", a, b, err)
		}
	}
}
