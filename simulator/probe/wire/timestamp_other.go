//go:build !(linux && (amd64 || arm64))

package wire

import (
	"errors"
	"net"
	"time"
)

// KernelTimestamps says the kernel's receive times cannot be read here.
const KernelTimestamps = false

// EnableTimestamps is not available here: datagrams are stamped when they
// are read.
func EnableTimestamps(*net.UDPConn) error {
	return errors.New("no kernel receive timestamps on this platform")
}

// ReceiveTime is always zero here.
func ReceiveTime([]byte) time.Time { return time.Time{} }
