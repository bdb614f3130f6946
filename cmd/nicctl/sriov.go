package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci"
)

func init() {
	register(&command{
		name: "sriov", args: "PF N", min: 2, max: 2,
		summary:   "set a PF's number of VFs (sriov_numvfs), refusing a PF no gopmd driver claims and what would remove VFs in use or leave them unusable",
		forceHelp: "set it even on a PF no gopmd driver claims, or if VFs exist that would be removed first",
		dryRun:    true,
		run:       func(e *env, a []string) (any, error) { return sriovCmd(e, a[0], a[1]) },
	})
}

// sriovResult is the before and after of sriov.
type sriovResult struct {
	Device  string      `json:"device"`
	Total   int         `json:"total_vfs"`
	Before  int         `json:"before"`
	After   int         `json:"after"`
	VFs     []string    `json:"vfs"`
	Changed bool        `json:"changed"`
	DryRun  bool        `json:"dry_run,omitempty"`
	Writes  []pci.Write `json:"writes,omitempty"`
	Forced  []string    `json:"forced,omitempty"`
	// Notes say what the new VFs take to be used (a PF on vfio-pci: the
	// VF token).
	Notes []string `json:"notes,omitempty"`
}

func (r *sriovResult) text(w io.Writer) {
	for _, f := range r.Forced {
		fmt.Fprintf(w, "%s: --force: going ahead although %s\n", r.Device, f)
	}
	defer func() {
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}()
	if r.DryRun {
		fmt.Fprintf(w, "%s: sriov_numvfs %d of %d (dry run: nothing written)\n", r.Device, r.Before, r.Total)
		if len(r.Writes) == 0 {
			fmt.Fprintf(w, "  no sysfs write needed\n")
		}
		for _, wr := range r.Writes {
			fmt.Fprintf(w, "  would run: %s\n", wr)
		}
		return
	}
	fmt.Fprintf(w, "%s: sriov_numvfs %d -> %d (of %d)\n", r.Device, r.Before, r.After, r.Total)
	if !r.Changed {
		fmt.Fprintf(w, "  nothing changed\n")
	}
	for _, v := range r.VFs {
		fmt.Fprintf(w, "  VF %s\n", v)
	}
}

// readInt reads a sysfs integer attribute.
func readInt(p string) (int, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// vfsOf lists the PF's VFs (its virtfnN links) with their drivers.
func vfsOf(e *env, dir string) ([]string, []string) {
	links, _ := filepath.Glob(filepath.Join(dir, "virtfn*"))
	sort.Strings(links)
	var names, desc []string
	for _, l := range links {
		tgt, err := os.Readlink(l)
		if err != nil {
			continue
		}
		name := filepath.Base(tgt)
		names = append(names, name)
		drv := "no driver"
		if d, err := os.Readlink(e.sys.Path("/sys/bus/pci/devices/" + name + "/driver")); err == nil {
			drv = "on " + filepath.Base(d)
		}
		desc = append(desc, name+" ("+drv+")")
	}
	return names, desc
}

func sriovCmd(e *env, dev, nArg string) (any, error) {
	t, err := bindTarget(dev)
	if err != nil {
		return nil, err
	}
	if t.platform {
		return nil, badInput("%s is a platform device: SR-IOV is a PCI function's (give the PF's PCI address)", dev)
	}
	n, err := strconv.Atoi(nArg)
	if err != nil || n < 0 {
		return nil, badInput("VF count %q: want a number from 0 up to the PF's sriov_totalvfs", nArg)
	}
	st, err := t.state(e)
	if err != nil {
		return nil, err
	}
	dir := t.dir(e)
	total, err := readInt(dir + "/sriov_totalvfs")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no sriov_totalvfs: not an SR-IOV physical function (on LS1028A, ENETC PF0 0000:00:00.0 and PF1 0000:00:00.1 have VFs)", t.name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: sriov_totalvfs: %w", t.name, err)
	}
	cur, err := readInt(dir + "/sriov_numvfs")
	if err != nil {
		return nil, fmt.Errorf("%s: sriov_numvfs: %w", t.name, err)
	}
	if n > total {
		return nil, badInput("%s has at most %d VFs (sriov_totalvfs); asked for %d", t.name, total, n)
	}
	r := &sriovResult{Device: t.name, Total: total, Before: cur, After: cur}
	r.VFs, _ = vfsOf(e, dir)
	if n == cur {
		return r, nil
	}
	var why []string
	// A PF no gopmd driver claims: its VFs are no gopmd port either, and
	// the count is its own driver's business (a NIC the host uses).
	if a, err := pci.ParseAddress(t.name); err == nil {
		d, err := e.sys.Device(a)
		if err != nil {
			return nil, err
		}
		if _, ok := driver.Claims(&driver.Device{Bus: "pci", VendorID: d.VendorID, DeviceID: d.DeviceID, Revision: d.Revision}); !ok {
			why = append(why, fmt.Sprintf("no gopmd driver (%s) claims the PF (PCI ID %s, class %06x), so its VFs are the host's: change them with the PF driver's tools", strings.Join(driver.DriverNames(), ", "), d.ID(), d.Class))
		}
	}
	if st.Driver == pci.DriverVFIO && n > 0 {
		b, err := os.ReadFile(e.sys.Path("/sys/module/vfio_pci/parameters/enable_sriov"))
		if err != nil || strings.TrimSpace(string(b)) != "Y" {
			return nil, fmt.Errorf("%s: the PF is on vfio-pci, which creates VFs only when loaded with enable_sriov=1 (modprobe -r vfio-pci; modprobe vfio-pci enable_sriov=1); nothing was written", t.name)
		}
		r.Notes = append(r.Notes, fmt.Sprintf("the PF is on vfio-pci, whose VFs open only with the PF's VF token: open the PF with pci:%s?vf-token=UUID (uuidgen makes one) and each VF with the same ?vf-token=UUID; vfio-pci keeps the token while the PF stays bound to it, and removes the VFs when the PF leaves it", t.name))
	}
	if cur > 0 {
		_, desc := vfsOf(e, dir)
		why = append(why, fmt.Sprintf("its %d VFs are removed first (the kernel changes the count only through 0): %s", cur, strings.Join(desc, ", ")))
		for _, vf := range r.VFs {
			uses, err := e.sys.InUse("pci", vf)
			if err != nil {
				why = append(why, "whether the host uses VF "+vf+" could not be checked: "+err.Error())
			}
			for _, u := range uses {
				why = append(why, "VF "+vf+": "+u.What)
			}
		}
	}
	if len(why) > 0 {
		if !e.force {
			return nil, &refusalError{dev: t.name, cmd: fmt.Sprintf("set sriov_numvfs to %d", n), why: why}
		}
		r.Forced = why
	}
	write := func() error {
		if cur > 0 && n > 0 {
			if err := writeAttr(e, dir+"/sriov_numvfs", "0", t.name+": remove its VFs"); err != nil {
				return err
			}
		}
		return writeAttr(e, dir+"/sriov_numvfs", strconv.Itoa(n), fmt.Sprintf("%s: create %d VFs", t.name, n))
	}
	if e.dryRun {
		var plan []pci.Write
		e.sys.Plan = &plan
		err := write()
		e.sys.Plan = nil
		if err != nil {
			return nil, err
		}
		r.DryRun, r.Writes = true, plan
		return r, nil
	}
	if err := write(); err != nil {
		return nil, err
	}
	if after, err := readInt(dir + "/sriov_numvfs"); err == nil {
		r.After = after
	}
	r.VFs, _ = vfsOf(e, dir)
	r.Changed = r.After != r.Before
	return r, nil
}
