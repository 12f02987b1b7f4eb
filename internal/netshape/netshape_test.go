package netshape

import (
	"strings"
	"testing"
)

func TestPeerIndex(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int
		ok   bool
	}{
		{"2: eth0@if123: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP", 123, true},
		{"2: eth0: <BROADCAST,MULTICAST,UP> mtu 1500", 0, false},
		{"", 0, false},
	} {
		got, err := peerIndex(tc.line)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("peerIndex(%q) = %d, %v; want %d, ok %v", tc.line, got, err, tc.want, tc.ok)
		}
	}
}

func TestLinkByIndex(t *testing.T) {
	out := `1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN
12: veth1a2b3c@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master br-1
123: vethd4e5f6@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master br-1
`
	if got, err := linkByIndex(out, 123); err != nil || got != "vethd4e5f6" {
		t.Errorf("linkByIndex(123) = %q, %v; want vethd4e5f6", got, err)
	}
	if got, err := linkByIndex(out, 23); err == nil {
		t.Errorf("linkByIndex(23) = %q, want an error: index 23 is no link (123 is)", got)
	}
}

func TestLossRules(t *testing.T) {
	r := lossRules(0.05)
	for _, want := range []string{"table inet " + table, "hook prerouting priority -300", `iifname "eth0" numgen random mod 1000 < 50 drop`} {
		if !strings.Contains(r, want) {
			t.Errorf("rules lack %q:\n%s", want, r)
		}
	}
	if got := tbfArgs(20); strings.Join(got, " ") != "tbf rate 20000kbit burst 32kbit latency 400ms" {
		t.Errorf("tbfArgs(20) = %v", got)
	}
}
