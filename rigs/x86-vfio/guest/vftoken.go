package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci"
)

// vfTokenChecks drives vfio-pci's VF token with QEMU's NVMe controller, the
// rig's one SR-IOV device (sriov_max_vfs=1): bind the PF to vfio-pci (loaded
// with enable_sriov=1), open it as pci:PF?vf-token=UUID (gopmd sets the
// token with VFIO_DEVICE_FEATURE), create its VF, and open the VF without a token, with
// a wrong one and with the PF's; then reopen the PF without the token while
// its VF is open. Each refusal must be the kernel's EACCES, turned into
// pci.ErrVFToken naming the VF, its PF and vf-token=.
func vfTokenChecks() {
	inv, err := pci.Host.Inventory()
	if err != nil {
		fail("vftoken-setup", "%v", err)
		return
	}
	nvme := find(inv, 0x1b36, 0x0010)
	if nvme == nil {
		fail("vftoken-setup", "no QEMU NVMe (1b36:0010) among %d devices", len(inv))
		return
	}
	pfDir := "/sys/bus/pci/devices/" + nvme.Address.String()
	b, err := pci.Host.Bind(nvme.Address, pci.DriverVFIO)
	if err != nil {
		fail("vftoken-setup", "bind %s: %v", nvme.Address, err)
		return
	}
	// Leave the guest as found for what runs next (RIG_EXTRA): VF removed,
	// PF closed, then unbound.
	defer func() {
		if err := b.Restore(); err != nil {
			fail("vftoken-cleanup", "%v", err)
		}
	}()
	tok, _ := pci.ParseVFToken("5b1c3a2e-9f4d-4e21-8a7b-0c6d5e4f3a21")
	wrong, _ := pci.ParseVFToken("00000000-1111-2222-3333-444444444444")
	open := func(a pci.Address, t pci.VFToken) (*driver.Device, error) {
		sp, err := driver.ParseSpec("pci:" + a.String() + "?vf-token=" + t.String())
		if err != nil {
			return nil, err
		}
		return pci.Host.OpenPCI(sp, driver.Config{})
	}
	pfDev, err := open(nvme.Address, tok)
	if err != nil {
		fail("vftoken-pf", "open PF %s with vf-token=%s: %v", nvme.Address, tok, err)
		return
	}
	defer pfDev.Release()
	pf := pfDev.Extra.(*pci.VFIODevice)
	defer func() {
		if err := os.WriteFile(pfDir+"/sriov_numvfs", []byte("0"), 0); err != nil {
			fail("vftoken-cleanup", "remove the VF: %v", err)
		}
	}()
	pass("vftoken-pf", "PF %s open, VF token %s set (VFIO_DEVICE_FEATURE PCI_VF_TOKEN)", nvme.Address, tok)

	if err := os.WriteFile(pfDir+"/sriov_numvfs", []byte("1"), 0); err != nil {
		fail("vftoken-vf", "create a VF: %v", err)
		return
	}
	var vf pci.Address
	for t0 := time.Now(); time.Since(t0) < 5*time.Second; time.Sleep(50 * time.Millisecond) {
		l, err := os.Readlink(pfDir + "/virtfn0")
		if err != nil {
			continue
		}
		if a, err := pci.ParseAddress(filepath.Base(l)); err == nil {
			if d, err := pci.Host.Device(a); err == nil && d.Driver == pci.DriverVFIO {
				vf = a
				break
			}
		}
	}
	if vf == (pci.Address{}) {
		fail("vftoken-vf", "no VF of %s bound to vfio-pci within 5 s", nvme.Address)
		return
	}
	pass("vftoken-vf", "VF %s created on vfio-pci", vf)

	refused := func(name string, err error, want ...string) {
		if err == nil {
			fail(name, "opened, want EACCES")
			return
		}
		if !errors.Is(err, pci.ErrVFToken) || !errors.Is(err, unix.EACCES) {
			fail(name, "%v: want pci.ErrVFToken with EACCES", err)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				fail(name, "%q lacks %q", err, w)
				return
			}
		}
		pass(name, "%v", err)
	}
	_, _, c, err := pci.Host.OpenVFIOToken(vf, pci.AccessType1, nil)
	if c != nil {
		c()
	}
	refused("vftoken-vf-none", err, vf.String(), "PF "+nvme.Address.String(), "vf-token=")
	_, _, c, err = pci.Host.OpenVFIOToken(vf, pci.AccessType1, &wrong)
	if c != nil {
		c()
	}
	refused("vftoken-vf-wrong", err, vf.String(), wrong.String(), nvme.Address.String())
	vfDev, err := open(vf, tok)
	if err != nil {
		fail("vftoken-vf-open", "VF %s with the PF's token: %v", vf, err)
		return
	}
	pass("vftoken-vf-open", "pci:%s?vf-token=%s open: backend %s, BAR0 %#x bytes", vf, tok, vfDev.Backend, vfDev.Regions[0].Size())
	// The PF again, from a second fd, while its VF is open.
	_, _, c, err = pci.Host.OpenVFIOToken(nvme.Address, pci.AccessType1, nil)
	if c != nil {
		c()
	}
	refused("vftoken-pf-busy", err, nvme.Address.String(), "has VFs open", "vf-token=")
	vfDev.Release()

	// VFIO_DEVICE_FEATURE alone: a new token set on the open PF is the
	// one the VF opens with from then on, the old one refused.
	next, _ := pci.ParseVFToken("c0ffee00-0000-4000-8000-00000000beef")
	if err := pf.SetVFToken(next); err != nil {
		fail("vftoken-feature", "%v", err)
		return
	}
	_, _, c, err = pci.Host.OpenVFIOToken(vf, pci.AccessType1, &tok)
	if c != nil {
		c()
	}
	refused("vftoken-feature-old", err, tok.String())
	_, _, c, err = pci.Host.OpenVFIOToken(vf, pci.AccessType1, &next)
	if err != nil {
		fail("vftoken-feature", "VF %s with the token set by VFIO_DEVICE_FEATURE: %v", vf, err)
		return
	}
	c()
	pass("vftoken-feature", "VF %s opens with %s, the token SetVFToken set on the open PF", vf, next)
}
