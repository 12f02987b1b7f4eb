//go:build linux && (amd64 || arm64)

package wire

import (
	"encoding/binary"
	"net"
	"syscall"
	"time"
)

// KernelTimestamps says the kernel's receive times can be read here.
const KernelTimestamps = true

// EnableTimestamps asks the kernel to stamp each datagram conn receives.
func EnableTimestamps(conn *net.UDPConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	return serr
}

// ReceiveTime reads the kernel's receive time from a datagram's control
// messages; zero when there is none.
func ReceiveTime(oob []byte) time.Time {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			// A struct timespec of two 64-bit fields, in the host's order.
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return time.Unix(sec, nsec)
		}
	}
	return time.Time{}
}
