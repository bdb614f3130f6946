// Package driver is gopmd's device-independent API: the Port, RxQueue and
// TxQueue that the ENETC and FEC drivers implement and applications use, the
// Packet header, the Action verdicts, statistics, and Open, which turns a
// spec string ("pci:0000:00:00.0", "platform:2188000.ethernet",
// "sim:enetc0?peer=sim:enetc1", ...) into a running port.
//
// Two registries meet in Open. A Backend reaches a device (VFIO, UIO,
// /dev/mem, or a simulated device model) and returns a Device: register
// windows, a DMA mapper and the device's identity. A Driver claims a Device
// by PCI ID or device-tree compatible string and builds a Port on it. A
// driver therefore never knows whether it talks to silicon or to a model.
package driver
