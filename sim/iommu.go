package sim

import (
	"sync"

	"github.com/gopmd/gopmd/sim/simdma"
)

// Simulated devices share one IOMMU per coherence kind, as the NICs of one
// process share one VFIO container: a buffer a port received into is at the
// same IOVA for every port, so a forwarder hands it to another port's TX
// without copying. (Non-coherent devices get their own IOMMU because the
// cache model is a property of the whole address space.)
var (
	iommuOnce   [2]sync.Once
	iommuShared [2]*simdma.IOMMU
)

// sharedIOMMU returns a handle on the shared address space of the given
// kind, with a fault log of its own for the device that asks.
func sharedIOMMU(nonCoherent bool) *simdma.IOMMU {
	i := 0
	if nonCoherent {
		i = 1
	}
	iommuOnce[i].Do(func() { iommuShared[i] = simdma.NewIOMMU(nonCoherent) })
	return iommuShared[i].Share()
}
