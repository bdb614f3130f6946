// Package rig holds the Go test that runs the ARM FEC rig (run.sh): gopmd's
// fec driver, cross-built for armv7, drives both ENETs of QEMU's i.MX6UL
// under Debian's armmp kernel and trades frames with a host-side peer.
package rig

import (
	"bytes"
	"github.com/gopmd/gopmd/internal/testnote"
	"os"
	"os/exec"
	"regexp"
	"testing"
)

const howTo = `the ARM FEC rig boots Debian's armmp kernel under qemu-system-arm; it needs root, Debian 12 apt
sources, Go and ~45 MB of downloads (~200 MB more for the uio mode), cached in $RIGS_CACHE. Run it with
	GOPMD_RIGS=1 go test -count=1 -v -timeout 20m ./rigs/arm-fec/
or one mode by hand:
	bash rigs/arm-fec/run.sh                       # /dev/mem window, carve-out DMA memory
	RIG_ACCESS=uio bash rigs/arm-fec/run.sh        # uio_pdrv_genirq
	RIG_DMA=pagemap bash rigs/arm-fec/run.sh       # mlocked pages via /proc/self/pagemap
	RIG_BD=legacy bash rigs/arm-fec/run.sh         # 8-byte descriptors`

func TestARMFECRig(t *testing.T) {
	if os.Getenv("GOPMD_RIGS") != "1" {
		testnote.Skip(t, "the ARM FEC kernel rig", "set GOPMD_RIGS=1 to run: "+howTo)
	}
	modes := []struct {
		name string
		env  []string
	}{
		{"devmem-carveout-enhanced", nil},
		{"uio-carveout-enhanced", []string{"RIG_ACCESS=uio"}},
		{"devmem-pagemap-legacy", []string{"RIG_DMA=pagemap", "RIG_BD=legacy"}},
	}
	timeRE := regexp.MustCompile(`(?m)^TIME .*$`)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cmd := exec.Command("bash", "run.sh")
			cmd.Env = append(append(os.Environ(), m.env...), "RIG_OUT=/tmp/rigs-out/gopmd-arm-fec-"+m.name)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			for _, l := range timeRE.FindAll(out.Bytes(), -1) {
				t.Log(string(l))
			}
			if err != nil || !bytes.Contains(out.Bytes(), []byte("\nRESULT: PASS")) {
				t.Fatalf("rig %s failed (%v):\n%s", m.name, err, out.String())
			}
		})
	}
}
