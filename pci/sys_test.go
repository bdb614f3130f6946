package pci

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWriteAttrErrors(t *testing.T) {
	tr := newTree(t)
	tr.dir("/sys/bus/pci/drivers/vfio-pci")
	ro := tr.abs("/sys/ro")
	tr.file("/sys/ro", "")
	os.Chmod(ro, 0o444)
	cases := []struct {
		name, path, msg string
		skipRoot        bool
	}{
		{"missing attribute", tr.abs("/sys/bus/pci/drivers/vfio-pci/new_id"), "does not exist", false},
		{"missing driver", tr.abs("/sys/bus/pci/drivers/uio_pci_generic/bind"), "modprobe", false},
		{"permission", ro, "run as root", true},
	}
	for _, c := range cases {
		if c.skipRoot && os.Geteuid() == 0 {
			continue // root writes anyway; see TestFixOpen
		}
		err := tr.sys().writeAttr(c.path, "x", "0000:00:01.0 probe")
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "0000:00:01.0") {
			t.Errorf("%s: %v, want an error naming the device and %q", c.name, err, c.msg)
		}
		if _, serr := os.Stat(c.path); c.msg != "run as root" && serr == nil {
			t.Errorf("%s: writeAttr created %s", c.name, c.path)
		}
	}
}

func TestFixOpen(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fs.ErrPermission, "run as root"},
		{fmt.Errorf("open /dev/vfio/1: %w", unix.EACCES), "run as root"},
		{fs.ErrNotExist, "devtmpfs"},
		{unix.EINVAL, "mapping size"},
	} {
		if got := fixOpen(c.err); !strings.Contains(got, c.want) {
			t.Errorf("fixOpen(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	e := &DeviceError{Device: "/dev/vfio/7", Op: "open VFIO group", Err: unix.EACCES, Fix: fixOpen(unix.EACCES)}
	if e.Error() != "/dev/vfio/7: open VFIO group: permission denied (run as root)" {
		t.Errorf("%q", e.Error())
	}
}
