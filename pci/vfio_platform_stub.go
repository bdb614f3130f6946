package pci

import (
	"errors"

	"github.com/gopmd/gopmd/driver"
)

func (s Sys) openVFIOPlatform(pd *PlatformDevice, spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	return nil, &DeviceError{Device: pd.Name, Op: "vfio-platform", Err: errors.New("not implemented yet")}
}

func (s Sys) OpenPCI(spec driver.Spec, cfg driver.Config) (*driver.Device, error) {
	return nil, &DeviceError{Device: spec.Name, Op: "pci", Err: errors.New("not implemented yet")}
}
