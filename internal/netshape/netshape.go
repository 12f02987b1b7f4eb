// Package netshape shapes a kind node's link for real: a bandwidth cap in
// both directions (tc tbf on the node's eth0 and on its host-side veth
// peer) and random loss of what arrives at the node (an nftables
// numgen random drop); or, with ApplyPairs, the same between the node and
// chosen peer nodes only (tc htb classes, filtered by the peer's
// addresses). Counter counts what crosses a node, by address and
// port. The host's tc, ip and nft run in the node's network namespace
// through nsenter, so the node image needs nothing more. There is
// no netem on this kind of host: delay comes only from queueing behind the
// cap.
package netshape

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Shape is what a node's link is shaped to.
type Shape struct {
	// RateMbit caps the link each way, in Mbit/s; 0 leaves it uncapped.
	RateMbit float64
	// Loss is the share of packets arriving at the node that are dropped,
	// 0 to 1, at a resolution of 0.001.
	Loss float64
}

func (s Shape) String() string {
	return fmt.Sprintf("%g Mbit/s, %.1f%% loss", s.RateMbit, 100*s.Loss)
}

// table is the nftables table holding the drop rule, in the node's namespace.
const table = "kns3_netshape"

// Apply shapes the link of node, a kind node's container, replacing any
// shape it had.
func Apply(ctx context.Context, node string, s Shape) error {
	if s.RateMbit < 0 || s.Loss < 0 || s.Loss > 1 {
		return fmt.Errorf("shaping %s: %s is out of range", node, s)
	}
	if err := Clear(ctx, node); err != nil {
		return err
	}
	pid, veth, err := link(ctx, node)
	if err != nil {
		return err
	}
	if s.RateMbit > 0 {
		tbf := tbfArgs(s.RateMbit)
		if _, err := run(ctx, nsenter(pid, append([]string{"tc", "qdisc", "replace", "dev", "eth0", "root"}, tbf...)...)...); err != nil {
			return fmt.Errorf("shaping %s's egress: %w", node, err)
		}
		if _, err := run(ctx, append([]string{"tc", "qdisc", "replace", "dev", veth, "root"}, tbf...)...); err != nil {
			return fmt.Errorf("shaping %s's ingress (host veth %s): %w", node, veth, err)
		}
	}
	if s.Loss > 0 {
		cmd := exec.CommandContext(ctx, tool("nsenter"), "-t", pid, "-n", tool("nft"), "-f", "-")
		cmd.Stdin = strings.NewReader(lossRules(s.Loss))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("dropping %.1f%% of what %s receives: %w: %s", 100*s.Loss, node, err, out)
		}
	}
	return nil
}

// Clear removes what Apply or ApplyPairs set on node's link.
func Clear(ctx context.Context, node string) error {
	pid, veth, err := link(ctx, node)
	if err != nil {
		return err
	}
	var errs []error
	for _, args := range [][]string{
		nsenter(pid, "tc", "qdisc", "del", "dev", "eth0", "root"),
		{"tc", "qdisc", "del", "dev", veth, "root"},
	} {
		// The kernel's default qdisc cannot be deleted: not an error.
		if out, err := run(ctx, args...); err != nil && !strings.Contains(out, "No such file") && !strings.Contains(out, "Cannot delete qdisc with handle of zero") {
			errs = append(errs, err)
		}
	}
	if out, err := run(ctx, nsenter(pid, "nft", "list", "tables")...); err != nil {
		errs = append(errs, err)
	} else {
		if strings.Contains(out, "table inet "+table) {
			if _, err := run(ctx, nsenter(pid, "nft", "delete", "table", "inet", table)...); err != nil {
				errs = append(errs, err)
			}
		}
		if err := clearPairs(ctx, pid, out); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clearing %s's shape: %w", node, err)
	}
	return nil
}

// tbfArgs caps at rate with a small burst, so a burst beyond a few packets
// queues, and a queue of at most 400 ms before drops.
func tbfArgs(rateMbit float64) []string {
	return []string{"tbf", "rate", strconv.Itoa(int(rateMbit*1000)) + "kbit", "burst", "32kbit", "latency", "400ms"}
}

// lossRules is the nftables script dropping loss of the packets arriving
// on eth0, before connection tracking sees them.
func lossRules(loss float64) string {
	perMille := int(loss*1000 + 0.5)
	return fmt.Sprintf(`table inet %[1]s {
	chain ingress {
		type filter hook prerouting priority -300; policy accept;
		iifname "eth0" numgen random mod 1000 < %[2]d drop
	}
}
`, table, perMille)
}

// link returns the PID of node's container, whose network namespace holds
// its eth0, and the name of eth0's veth peer on the host.
func link(ctx context.Context, node string) (pid, veth string, err error) {
	out, err := run(ctx, "docker", "inspect", "-f", "{{.State.Pid}}", node)
	if err != nil {
		return "", "", fmt.Errorf("finding node %s: %w", node, err)
	}
	pid = strings.TrimSpace(out)
	if pid == "" || pid == "0" {
		return "", "", fmt.Errorf("node %s is not running", node)
	}
	out, err = run(ctx, nsenter(pid, "ip", "-o", "link", "show", "dev", "eth0")...)
	if err != nil {
		return "", "", fmt.Errorf("node %s's eth0: %w", node, err)
	}
	peer, err := peerIndex(out)
	if err != nil {
		return "", "", fmt.Errorf("node %s's eth0: %w", node, err)
	}
	out, err = run(ctx, "ip", "-o", "link")
	if err != nil {
		return "", "", err
	}
	veth, err = linkByIndex(out, peer)
	if err != nil {
		return "", "", fmt.Errorf("node %s's host veth: %w", node, err)
	}
	return pid, veth, nil
}

var peerRE = regexp.MustCompile(`^\d+: [^:@]+@if(\d+):`)

// peerIndex reads the peer's index from `ip -o link show dev eth0` in the
// node, as "2: eth0@if123: <...".
func peerIndex(line string) (int, error) {
	m := peerRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return 0, fmt.Errorf("not a veth: %q", line)
	}
	return strconv.Atoi(m[1])
}

var linkRE = regexp.MustCompile(`^(\d+): ([^:@]+)(@[^:]+)?:`)

// linkByIndex finds the link with index in `ip -o link` output.
func linkByIndex(out string, index int) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		m := linkRE.FindStringSubmatch(strings.TrimSpace(line))
		if m != nil && m[1] == strconv.Itoa(index) {
			return m[2], nil
		}
	}
	return "", fmt.Errorf("no link with index %d", index)
}

func nsenter(pid string, args ...string) []string {
	return append([]string{"nsenter", "-t", pid, "-n", tool(args[0])}, args[1:]...)
}

// tool finds a program in PATH or in the sbin directories, which a test
// runner's PATH may leave out (tc, ip and nft live there).
func tool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p
		}
	}
	return name
}

func run(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, tool(args[0]), args[1:]...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
