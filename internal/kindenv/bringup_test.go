package kindenv

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The bring-up's contract, in both install modes: the cluster exists
// before images are loaded into it, the nodes are Ready before KNS-3 is
// installed on them, and the last step waits for the scheduler pod.
func TestStepsOrder(t *testing.T) {
	for _, mode := range []InstallMode{SecondScheduler, ReplaceScheduler} {
		steps := Steps(mode)
		at := func(name string) int {
			i := slices.IndexFunc(steps, func(s Step) bool { return s.Name == name })
			if i < 0 {
				t.Fatalf("%s: no step %q", mode, name)
			}
			return i
		}
		install := "deploy KNS-3"
		if mode == ReplaceScheduler {
			install = "replace the control plane's kube-scheduler"
		}
		if !(at("create cluster") < at("load images") && at("load images") < at("wait for nodes ready") && at("wait for nodes ready") < at(install)) {
			t.Errorf("%s: the steps run out of order: create %d, load %d, nodes ready %d, install %d",
				mode, at("create cluster"), at("load images"), at("wait for nodes ready"), at(install))
		}
		if last := steps[len(steps)-1].Name; last != "wait for the scheduler pod" {
			t.Errorf("%s: the last step is %q, want the wait for the scheduler pod", mode, last)
		}
	}
}

func TestRunLogsAndNamesTheStep(t *testing.T) {
	var log bytes.Buffer
	c := &Cluster{Name: "test", Log: &log, LogPrefix: "e2e"}
	boom := errors.New("boom")
	err := c.Run(context.Background(), Step{Name: "explode", Run: func(context.Context, *Cluster) error { return boom }})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "explode: ") {
		t.Errorf("Run = %v, want the step's error prefixed with its name", err)
	}
	if err := c.Run(context.Background(), Step{Name: "fine", Run: func(context.Context, *Cluster) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "e2e [") || !strings.Contains(lines[1], "explode: failed after") ||
		!strings.Contains(lines[3], "fine: done in") {
		t.Errorf("log:\n%s", log.String())
	}
}
