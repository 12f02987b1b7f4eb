package netshape

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// silenceTable is the nftables table holding a Silence's rule.
const silenceTable = "kns3_netshape_silence"

// Silence drops, in a kind node's network namespace, the UDP datagrams
// forwarded to addr on ports: a pod on the node that takes nothing on
// them, while its own probes, inside its namespace, still pass.
type Silence struct {
	node, pid string
}

// NewSilence starts dropping on node.
func NewSilence(ctx context.Context, node string, addr netip.Addr, ports ...uint16) (*Silence, error) {
	if len(ports) == 0 {
		return nil, fmt.Errorf("silencing %s on %s: no port", addr, node)
	}
	pid, _, err := link(ctx, node)
	if err != nil {
		return nil, err
	}
	set := make([]string, len(ports))
	for i, p := range ports {
		set[i] = fmt.Sprint(p)
	}
	rules := fmt.Sprintf(`table inet %[1]s {
	chain forwarded {
		type filter hook forward priority -20; policy accept;
		ip daddr %[2]s udp dport { %[3]s } drop
	}
}
`, silenceTable, addr, strings.Join(set, ", "))
	cmd := exec.CommandContext(ctx, tool("nsenter"), "-t", pid, "-n", tool("nft"), "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("silencing %s on %s: %w: %s", addr, node, err, out)
	}
	return &Silence{node: node, pid: pid}, nil
}

// Delete stops dropping.
func (s *Silence) Delete(ctx context.Context) error {
	if _, err := run(ctx, nsenter(s.pid, "nft", "delete", "table", "inet", silenceTable)...); err != nil {
		return fmt.Errorf("lifting the silence on %s: %w", s.node, err)
	}
	return nil
}
