package driver

import "github.com/gopmd/gopmd/internal/devtree"

// DTNode is a device's device-tree node as drivers read it: the one
// reader of the module (internal/devtree), whose methods read properties,
// follow phandles and decode the PHY and fixed-link bindings. The zero
// DTNode is no node. A backend sets Device.Node to one (NodeAt).
type DTNode = devtree.Node

// NodeAt is the device-tree node whose directory is dir (a device's
// of_node resolved, under /sys/firmware/devicetree/base); "" gives the
// zero DTNode.
func NodeAt(dir string) DTNode { return devtree.At(dir) }
