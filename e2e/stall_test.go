//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// agentStall is how long stallAgents holds a probe agent off the CPU: just
// past the probes' timeout, as a node busy creating pods can on a small
// host, and short enough that the prober does not take the agent for
// gone (16 echoes unanswered in a row at 100 a second).
const agentStall = probeTimeout + 50*time.Millisecond

// stallAgents stops node's probe agent for agentStall every interval until
// ctx ends, and returns how many times it did. An agent that answers late
// is slow, not behind a lossy link: its node must score as it did.
func stallAgents(ctx context.Context, node string, interval time.Duration) (int, error) {
	// Processes come and go while the list is read: what vanished is not
	// the agent.
	find := `for p in /proc/[0-9]*; do case "$(tr '\0' ' ' 2>/dev/null <$p/cmdline)" in */kns-3-simulator\ --agent*) echo ${p#/proc/};; esac; done 2>/dev/null`
	out, err := exec.CommandContext(ctx, "docker", "exec", node, "sh", "-c", find).Output()
	pids := strings.Fields(string(out))
	if err != nil || len(pids) != 1 {
		return 0, fmt.Errorf("finding the probe agent on %s: %v: want one process, found %q", node, err, out)
	}
	stall := fmt.Sprintf("kill -STOP %s; sleep %.3f; kill -CONT %s", pids[0], agentStall.Seconds(), pids[0])
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return n, nil
		case <-tick.C:
		}
		// Not tied to ctx: a stopped agent is always let go again.
		if out, err := exec.Command("docker", "exec", node, "sh", "-c", stall).CombinedOutput(); err != nil {
			return n, fmt.Errorf("stalling the probe agent on %s: %w: %s", node, err, out)
		}
	}
}
