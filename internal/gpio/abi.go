package gpio

import "golang.org/x/sys/unix"

// The GPIO character device's v2 ABI (include/uapi/linux/gpio.h, Linux
// 5.10 and later): one type per kernel struct, golang.org/x/sys/unix's,
// with their sizes and ioctl numbers pinned by abi_test.go.
type (
	lineRequest = unix.GPIOV2LineRequest // struct gpio_v2_line_request
	lineValues  = unix.GPIOV2LineValues  // struct gpio_v2_line_values
	lineInfo    = unix.GPIOV2LineInfo    // struct gpio_v2_line_info
)

// ioctl numbers on a /dev/gpiochipN descriptor (GET_LINEINFO, GET_LINE)
// and on a line request's descriptor (SET_VALUES).
const (
	getLineInfoIoctl   = unix.GPIO_V2_GET_LINEINFO_IOCTL
	getLineIoctl       = unix.GPIO_V2_GET_LINE_IOCTL
	setLineValuesIoctl = unix.GPIO_V2_LINE_SET_VALUES_IOCTL
)

// Line flags (enum gpio_v2_line_flag).
const (
	flagUsed      = 1 << 0 // the line is requested by someone (the kernel or another process)
	flagActiveLow = 1 << 1
	flagOutput    = 1 << 3
)

// Attribute ids (enum gpio_v2_line_attr_id).
const attrOutputValues = unix.GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES
