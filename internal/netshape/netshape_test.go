package netshape

import (
	"context"
	"net/netip"
	"slices"
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

// TestPairCommands checks the commands that shape a node's pairs: one
// htb root on each device whose default class leaves the rest unshaped, a
// class per capped pair filtered by the peer's address and pod CIDR (by
// destination on the node's eth0, by source on its host veth), and drops
// by source for the lossy pairs only.
func TestPairCommands(t *testing.T) {
	pairs := []PairShape{
		{Peer: netip.MustParseAddr("172.18.0.3"), PeerPods: netip.MustParsePrefix("10.244.1.7/24"), RateMbit: 20, Loss: 0.02},
		{Peer: netip.MustParseAddr("172.18.0.4"), PeerPods: netip.MustParsePrefix("10.244.2.0/24"), Loss: 0.05},
		{Peer: netip.MustParseAddr("172.18.0.5"), PeerPods: netip.MustParsePrefix("10.244.3.0/24"), RateMbit: 100},
	}
	join := func(cmds [][]string) []string {
		var out []string
		for _, c := range cmds {
			out = append(out, strings.Join(c, " "))
		}
		return out
	}
	want := []string{
		"tc qdisc replace dev eth0 root handle 1: htb default 1",
		"tc class replace dev eth0 parent 1: classid 1:1 htb rate 100gbit",
		"tc class replace dev eth0 parent 1: classid 1:10 htb rate 20000kbit ceil 20000kbit burst 32kbit",
		"tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 172.18.0.3/32 flowid 1:10",
		"tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 10.244.1.0/24 flowid 1:10",
		"tc class replace dev eth0 parent 1: classid 1:11 htb rate 100000kbit ceil 100000kbit burst 32kbit",
		"tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 172.18.0.5/32 flowid 1:11",
		"tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 10.244.3.0/24 flowid 1:11",
	}
	if got := join(htbCommands("eth0", "dst", pairs)); !slices.Equal(got, want) {
		t.Errorf("eth0:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	veth := join(htbCommands("veth1a2b", "src", pairs))
	if len(veth) != len(want) || veth[3] != "tc filter add dev veth1a2b parent 1: protocol ip prio 1 u32 match ip src 172.18.0.3/32 flowid 1:10" {
		t.Errorf("host veth: %v, want the same classes, filtered by source", veth)
	}
	if got := htbCommands("eth0", "dst", pairs[1:2]); got != nil {
		t.Errorf("a lossy pair alone: %v, want no qdisc", got)
	}
	rules := pairLossRules(pairs)
	for _, want := range []string{"table inet " + pairsTable, "hook prerouting priority -300",
		`iifname "eth0" ip saddr { 172.18.0.3, 10.244.1.0/24 } numgen random mod 1000 < 20 drop`,
		`iifname "eth0" ip saddr { 172.18.0.4, 10.244.2.0/24 } numgen random mod 1000 < 50 drop`} {
		if !strings.Contains(rules, want) {
			t.Errorf("rules lack %q:\n%s", want, rules)
		}
	}
	if strings.Contains(rules, "172.18.0.5") {
		t.Errorf("a pair without loss has a drop rule:\n%s", rules)
	}
	if pairLossRules(pairs[2:]) != "" {
		t.Error("rules without a lossy pair")
	}
	if err := ApplyPairs(context.Background(), "no-such-node", []PairShape{{Peer: netip.MustParseAddr("fd00::1"), PeerPods: netip.MustParsePrefix("fd00::/64")}}); err == nil || !strings.Contains(err.Error(), "IPv4") {
		t.Errorf("an IPv6 pair: %v, want refused before anything runs", err)
	}
}
