//go:build e2e

package e2e

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// A starved agent drains its socket slowly and keeps answering: the kind
// suite starves it for starveFor, every interval, by stopping and
// continuing it in starveSlice slices, running starveDuty of each. Its
// backlog grows past twice the probes' timeout, and its answers come late,
// which is not loss: its node must score as before.
const (
	starveFor   = 3 * time.Second
	starveSlice = 10 * time.Millisecond
	starveDuty  = 0.3
)

// healthyRuns is how many times the healthy check runs in a row: once in
// make test; more to measure how steady the tie is.
var healthyRuns = flag.Int("kns3.healthy-runs", 1, "how many times the identical-workers check runs in a row")

// starveAgents starves node's probe agent for starveFor every interval
// until ctx ends, and returns how many times it did.
func starveAgents(ctx context.Context, node string, interval time.Duration) (int, error) {
	// Processes come and go while the list is read: what vanished is not
	// the agent.
	find := `for p in /proc/[0-9]*; do case "$(tr '\0' ' ' 2>/dev/null <$p/cmdline)" in */kns-3-simulator\ --agent\ *) echo ${p#/proc/};; esac; done 2>/dev/null`
	out, err := exec.CommandContext(ctx, "docker", "exec", node, "sh", "-c", find).Output()
	pids := strings.Fields(string(out))
	if err != nil || len(pids) != 1 {
		return 0, fmt.Errorf("finding the probe agent on %s: %v: want one process, found %q", node, err, out)
	}
	stopped := time.Duration(float64(starveSlice) * (1 - starveDuty))
	running := starveSlice - stopped
	// One shell runs the slices; the agent is always let go at the end.
	starve := fmt.Sprintf(`end=$(( $(date +%%s%%N) + %d )); trap 'kill -CONT %[2]s' EXIT
while [ "$(date +%%s%%N)" -lt "$end" ]; do kill -STOP %[2]s; sleep %.3f; kill -CONT %[2]s; sleep %.3f; done`,
		starveFor.Nanoseconds(), pids[0], stopped.Seconds(), running.Seconds())
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return n, nil
		case <-tick.C:
		}
		// Not tied to ctx: a stopped agent is always let go again.
		if out, err := exec.Command("docker", "exec", node, "sh", "-c", starve).CombinedOutput(); err != nil {
			return n, fmt.Errorf("starving the probe agent on %s: %w: %s", node, err, out)
		}
	}
}
