package netbench

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"
)

// Forge sends one UDP datagram carrying payload to to, with from as its
// source address and port, through a raw socket: what a pod with
// CAP_NET_RAW can do when its network does not check source addresses.
// IPv4 only.
func Forge(from, to netip.AddrPort, payload []byte) error {
	if !from.Addr().Is4() || !to.Addr().Is4() {
		return fmt.Errorf("forging %s → %s: IPv4 only", from, to)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_RAW)
	if err != nil {
		return fmt.Errorf("opening a raw socket (needs CAP_NET_RAW): %w", err)
	}
	defer syscall.Close(fd)
	packet := udpPacket(from, to, payload)
	sa := &syscall.SockaddrInet4{Addr: to.Addr().As4()}
	if err := syscall.Sendto(fd, packet, 0, sa); err != nil {
		return fmt.Errorf("sending %s → %s: %w", from, to, err)
	}
	return nil
}

// udpPacket is an IPv4 header, a UDP header and payload.
func udpPacket(from, to netip.AddrPort, payload []byte) []byte {
	const ipHeader, udpHeader = 20, 8
	b := make([]byte, ipHeader+udpHeader+len(payload))
	b[0] = 0x45 // version 4, 5 words
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	b[8] = 64 // TTL
	b[9] = syscall.IPPROTO_UDP
	src, dst := from.Addr().As4(), to.Addr().As4()
	copy(b[12:16], src[:])
	copy(b[16:20], dst[:])
	binary.BigEndian.PutUint16(b[10:], checksum(b[:ipHeader]))
	u := b[ipHeader:]
	binary.BigEndian.PutUint16(u[0:], from.Port())
	binary.BigEndian.PutUint16(u[2:], to.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(udpHeader+len(payload)))
	copy(u[udpHeader:], payload)
	// The UDP checksum over a pseudo header; 0 would mean none, which is
	// valid for IPv4 too.
	pseudo := make([]byte, 12+len(u))
	copy(pseudo[0:4], src[:])
	copy(pseudo[4:8], dst[:])
	pseudo[9] = syscall.IPPROTO_UDP
	binary.BigEndian.PutUint16(pseudo[10:], uint16(len(u)))
	copy(pseudo[12:], u)
	sum := checksum(pseudo)
	if sum == 0 {
		sum = 0xffff
	}
	binary.BigEndian.PutUint16(u[6:], sum)
	return b
}

// checksum is the Internet checksum of b.
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = (sum >> 16) + (sum & 0xffff)
	}
	return ^uint16(sum)
}
