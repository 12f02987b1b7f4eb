package kindenv

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The demo and the kind suite run this list: its order is the contract
// (the nodes are Ready before deploy/ is applied).
func TestStepsOrder(t *testing.T) {
	var names []string
	for _, s := range Steps(SecondScheduler) {
		names = append(names, s.Name)
	}
	want := []string{
		"resolve inputs",
		"delete stale cluster",
		"create cluster",
		"load images",
		"wait for nodes ready",
		"deploy KNS-3",
		"wait for the scheduler pod",
	}
	if !slices.Equal(names, want) {
		t.Errorf("steps = %q, want %q", names, want)
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
