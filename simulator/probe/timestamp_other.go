//go:build !(linux && (amd64 || arm64))

package probe

import (
	"errors"
	"net"
	"time"
)

const kernelTimestamps = false

// enableTimestamps is not available here: the agent stamps datagrams when
// it reads them.
func enableTimestamps(*net.UDPConn) error {
	return errors.New("no kernel receive timestamps on this platform")
}

func receiveTime([]byte) time.Time { return time.Time{} }
