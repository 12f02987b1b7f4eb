package netshape

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// countTable is the nftables table holding a Counter's rules.
const countTable = "kns3_netshape_count"

// Counter counts, in a kind node's network namespace, the UDP datagrams
// with port as both their source and their destination port that are
// forwarded to addr and from it: what passes between a pod on the node
// and its peers on that port.
type Counter struct {
	node, pid string
}

// Counts are what a Counter has seen.
type Counts struct {
	// ToAddr and FromAddr count the datagrams to and from the address.
	ToAddr, FromAddr int
}

// NewCounter starts counting on node.
func NewCounter(ctx context.Context, node string, addr netip.Addr, port uint16) (*Counter, error) {
	pid, _, err := link(ctx, node)
	if err != nil {
		return nil, err
	}
	rules := fmt.Sprintf(`table inet %[1]s {
	chain forwarded {
		type filter hook forward priority -10; policy accept;
		ip daddr %[2]s udp sport %[3]d udp dport %[3]d counter comment "to"
		ip saddr %[2]s udp sport %[3]d udp dport %[3]d counter comment "from"
	}
}
`, countTable, addr, port)
	cmd := exec.CommandContext(ctx, tool("nsenter"), "-t", pid, "-n", tool("nft"), "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("counting on %s: %w: %s", node, err, out)
	}
	return &Counter{node: node, pid: pid}, nil
}

var counterLine = regexp.MustCompile(`counter packets (\d+) bytes \d+ comment "(to|from)"`)

// Read returns the counts so far.
func (c *Counter) Read(ctx context.Context) (Counts, error) {
	out, err := run(ctx, nsenter(c.pid, "nft", "list", "table", "inet", countTable)...)
	if err != nil {
		return Counts{}, fmt.Errorf("reading the counters on %s: %w", c.node, err)
	}
	var n Counts
	found := 0
	for _, m := range counterLine.FindAllStringSubmatch(out, -1) {
		v, err := strconv.Atoi(m[1])
		if err != nil {
			return Counts{}, err
		}
		if m[2] == "to" {
			n.ToAddr = v
		} else {
			n.FromAddr = v
		}
		found++
	}
	if found != 2 {
		return Counts{}, fmt.Errorf("reading the counters on %s: %d of 2 found in %q", c.node, found, out)
	}
	return n, nil
}

// Delete stops counting.
func (c *Counter) Delete(ctx context.Context) error {
	if _, err := run(ctx, nsenter(c.pid, "nft", "delete", "table", "inet", countTable)...); err != nil {
		return fmt.Errorf("deleting the counters on %s: %w", c.node, err)
	}
	return nil
}
