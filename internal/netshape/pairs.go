package netshape

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
)

// PairShape is what the path between a kind node and one peer node is
// shaped to: a cap each way, and random loss of what arrives from the
// peer. The peer is its node's address and its pod CIDR: pod traffic
// between kind nodes is routed, not tunnelled, so it carries pod
// addresses.
type PairShape struct {
	Peer     netip.Addr
	PeerPods netip.Prefix
	// RateMbit caps the pair each way, in Mbit/s; 0 leaves it uncapped.
	RateMbit float64
	// Loss is the share of what arrives from the peer that is dropped, 0
	// to 1, at a resolution of 0.001.
	Loss float64
}

func (s PairShape) String() string {
	return fmt.Sprintf("%s and %s: %g Mbit/s, %.1f%% loss", s.Peer, s.PeerPods, s.RateMbit, 100*s.Loss)
}

// pairsTable is the nftables table holding the pairs' drop rules.
const pairsTable = "kns3_netshape_pairs"

// unshapedRate is the rate of the class everything but the shaped pairs
// goes through: more than a kind node's veth carries.
const unshapedRate = "100gbit"

// ApplyPairs shapes the paths between node, a kind node's container, and
// each pair's peer, replacing any shape node had (Apply's included: both
// hold the root qdisc of the node's link). What node sends to a peer is
// capped on its eth0, by destination; what it receives from a peer on its
// host-side veth, by source; what arrives from a lossy peer is dropped at
// random before connection tracking sees it.
func ApplyPairs(ctx context.Context, node string, pairs []PairShape) error {
	for _, p := range pairs {
		if !p.Peer.Is4() || !p.PeerPods.Addr().Is4() || p.RateMbit < 0 || p.Loss < 0 || p.Loss > 1 {
			return fmt.Errorf("shaping %s's pairs: %s is out of range (IPv4 only)", node, p)
		}
	}
	if err := Clear(ctx, node); err != nil {
		return err
	}
	pid, veth, err := link(ctx, node)
	if err != nil {
		return err
	}
	for _, args := range htbCommands("eth0", "dst", pairs) {
		if _, err := run(ctx, nsenter(pid, args...)...); err != nil {
			return fmt.Errorf("shaping what %s sends to its pairs: %w", node, err)
		}
	}
	for _, args := range htbCommands(veth, "src", pairs) {
		if _, err := run(ctx, args...); err != nil {
			return fmt.Errorf("shaping what %s receives from its pairs (host veth %s): %w", node, veth, err)
		}
	}
	if rules := pairLossRules(pairs); rules != "" {
		cmd := exec.CommandContext(ctx, tool("nsenter"), "-t", pid, "-n", tool("nft"), "-f", "-")
		cmd.Stdin = strings.NewReader(rules)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("dropping what %s receives from its lossy pairs: %w: %s", node, err, out)
		}
	}
	return nil
}

// htbCommands are the tc commands that cap, on dev, the pairs with a rate:
// an htb root whose default class carries everything else unshaped, a
// class per capped pair, and filters sending to it what matches the
// pair's peer address and pod CIDR as by (dst or src).
func htbCommands(dev, by string, pairs []PairShape) [][]string {
	var capped []PairShape
	for _, p := range pairs {
		if p.RateMbit > 0 {
			capped = append(capped, p)
		}
	}
	if len(capped) == 0 {
		return nil
	}
	cmds := [][]string{
		{"tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "1"},
		{"tc", "class", "replace", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", unshapedRate},
	}
	for i, p := range capped {
		class := "1:" + strconv.Itoa(10+i)
		rate := strconv.Itoa(int(p.RateMbit*1000)) + "kbit"
		cmds = append(cmds, []string{"tc", "class", "replace", "dev", dev, "parent", "1:", "classid", class, "htb", "rate", rate, "ceil", rate, "burst", "32kbit"})
		for _, match := range []string{p.Peer.String() + "/32", p.PeerPods.Masked().String()} {
			cmds = append(cmds, []string{"tc", "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", by, match, "flowid", class})
		}
	}
	return cmds
}

// pairLossRules is the nftables script dropping, of what arrives on eth0
// from each lossy pair's peer address or pod CIDR, its share; "" when no
// pair is lossy.
func pairLossRules(pairs []PairShape) string {
	var rules []string
	for _, p := range pairs {
		if perMille := int(p.Loss*1000 + 0.5); perMille > 0 {
			rules = append(rules, fmt.Sprintf("\t\tiifname \"eth0\" ip saddr { %s, %s } numgen random mod 1000 < %d drop\n", p.Peer, p.PeerPods.Masked(), perMille))
		}
	}
	if len(rules) == 0 {
		return ""
	}
	return fmt.Sprintf("table inet %s {\n\tchain ingress {\n\t\ttype filter hook prerouting priority -300; policy accept;\n%s\t}\n}\n", pairsTable, strings.Join(rules, ""))
}

// clearPairs deletes the pairs' drop rules from the node whose container
// has pid, if there are any; Clear removes the qdiscs.
func clearPairs(ctx context.Context, pid, tables string) error {
	if !strings.Contains(tables, "table inet "+pairsTable) {
		return nil
	}
	if _, err := run(ctx, nsenter(pid, "nft", "delete", "table", "inet", pairsTable)...); err != nil {
		return errors.New("deleting the pairs' drop rules: " + err.Error())
	}
	return nil
}
