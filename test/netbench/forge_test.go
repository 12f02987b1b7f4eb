package netbench

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestUDPPacket checks the forged packet's headers: lengths, addresses,
// ports, and checksums that verify.
func TestUDPPacket(t *testing.T) {
	from, to := netip.MustParseAddrPort("10.244.1.5:10271"), netip.MustParseAddrPort("10.244.2.7:10271")
	payload := []byte("KNS3 payload of odd length")
	b := udpPacket(from, to, payload)
	if len(b) != 28+len(payload) || int(b[2])<<8|int(b[3]) != len(b) {
		t.Fatalf("packet of %d bytes, its header says %d", len(b), int(b[2])<<8|int(b[3]))
	}
	if checksum(b[:20]) != 0 {
		t.Error("the IPv4 header's checksum does not verify")
	}
	if netip.AddrFrom4([4]byte(b[12:16])) != from.Addr() || netip.AddrFrom4([4]byte(b[16:20])) != to.Addr() {
		t.Errorf("addresses %v → %v", b[12:16], b[16:20])
	}
	u := b[20:]
	pseudo := append([]byte{}, b[12:20]...)
	pseudo = append(pseudo, 0, syscall.IPPROTO_UDP, u[4], u[5])
	if checksum(append(pseudo, u...)) != 0 {
		t.Error("the UDP checksum does not verify")
	}
	if string(u[8:]) != string(payload) {
		t.Errorf("payload %q", u[8:])
	}
}

// TestForgeOnLoopback forges a datagram from 127.0.0.2 to a socket on
// 127.0.0.1, which must see the forged source.
func TestForgeOnLoopback(t *testing.T) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	from := netip.MustParseAddrPort("127.0.0.2:45678")
	err = Forge(from, conn.LocalAddr().(*net.UDPAddr).AddrPort(), []byte("hello"))
	if errors.Is(err, syscall.EPERM) || errors.Is(err, os.ErrPermission) {
		t.Skipf("no raw sockets here (%v): the packet's layout is checked by TestUDPPacket", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	n, src, err := conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatal(err)
	}
	if src != from || string(buf[:n]) != "hello" {
		t.Errorf("received %q from %s, want hello from %s", buf[:n], src, from)
	}
}
