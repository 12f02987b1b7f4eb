package scenario

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

func TestParse(t *testing.T) {
	s, err := Parse("/etc/kns-3/scenario.yaml", []byte(`
window_seconds: 10
nodes:
  worker-1: {score: 0.9}
  worker-2: {latency_ms: 10, bandwidth_mbps: 500, packet_loss: 0.5}
  worker-3: {score: 0.2, latency_ms: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	resp := Response(s, time.Date(2026, 11, 29, 10, 15, 0, 5, time.UTC))
	if resp.Source != "scenario.yaml" || resp.WindowSeconds != 10 {
		t.Errorf("source=%q window=%d", resp.Source, resp.WindowSeconds)
	}
	if got := resp.Results["worker-1"].Score; got != 0.9 {
		t.Errorf("worker-1 score %v, want 0.9", got)
	}
	// (1 − 0.5) × 0.5 × 10/(10+10) = 0.125
	if got := resp.Results["worker-2"].Score; math.Abs(got-0.125) > 1e-12 {
		t.Errorf("worker-2 derived score %v, want 0.125", got)
	}
	if r := resp.Results["worker-3"]; r.Score != 0.2 || *r.LatencyMs != 1 || r.PacketLoss != nil {
		t.Errorf("worker-3 = %+v: an explicit score wins and metrics are reported as given", r)
	}
	if !resp.Timestamp.Equal(time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC)) {
		t.Errorf("timestamp %v", resp.Timestamp)
	}
}

func TestParseJSON(t *testing.T) {
	s, err := Parse("s.json", []byte(`{"source":"lab","nodes":{"a":{"score":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp := Response(s, time.Now()); resp.Source != "lab" || resp.WindowSeconds != DefaultWindowSeconds {
		t.Errorf("%+v", resp)
	}
}

func TestDerivedScore(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		n    Node
		want float64
	}{
		{"perfect", Node{LatencyMs: f(0), BandwidthMbps: f(1000), PacketLoss: f(0)}, 1},
		{"bandwidth capped at 1 Gbit/s", Node{BandwidthMbps: f(10000)}, 1},
		{"10ms halves", Node{LatencyMs: f(10)}, 0.5},
		{"full loss", Node{PacketLoss: f(1), BandwidthMbps: f(1000)}, 0},
		{"contract example node 2", Node{LatencyMs: f(4.1), BandwidthMbps: f(310.5), PacketLoss: f(0.01)}, 0.99 * 0.3105 * 10 / 14.1},
	}
	for _, tt := range tests {
		if got := DerivedScore(tt.n); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseErrorsNameFileAndField(t *testing.T) {
	tests := map[string]struct {
		doc  string
		want []string
	}{
		"empty file":         {"", []string{"file is empty"}},
		"no nodes":           {"source: x", []string{"nodes: Required"}},
		"node without data":  {"nodes: {a: {}}", []string{"nodes[a]: Required"}},
		"loss above 1":       {"nodes: {a: {packet_loss: 1.5}}", []string{"nodes[a].packet_loss", "between 0 and 1"}},
		"negative latency":   {"nodes: {b: {latency_ms: -1}}", []string{"nodes[b].latency_ms"}},
		"negative bandwidth": {"nodes: {b: {bandwidth_mbps: -1}}", []string{"nodes[b].bandwidth_mbps"}},
		"score not a number": {"nodes: {a: {score: high}}", []string{"score"}},
		"misspelt field":     {"nodes: {a: {scroe: 1}}", []string{`unknown field "scroe"`}},
		"bad window":         {"window_seconds: 0\nnodes: {a: {score: 1}}", []string{"window_seconds"}},
		"bad fault status":   {"fault: {status: 404}\nnodes: {}", []string{"fault.status", "5xx"}},
		"negative delay":     {"fault: {delay_ms: -1}\nnodes: {}", []string{"fault.delay_ms"}},
		"not YAML":           {"nodes: [", []string{"scenario"}},
		"empty node name":    {`nodes: {"": {score: 1}}`, []string{`nodes[""]: Invalid value: ""`, "RFC 1123 subdomain"}},
		"upper-case name":    {"nodes: {Worker-1: {score: 1}}", []string{`nodes["Worker-1"]: Invalid value: "Worker-1"`, "lowercase"}},
		"name with a space":  {`nodes: {"bad name": {score: 1}}`, []string{`nodes["bad name"]: Invalid value: "bad name"`}},
		"control character":  {`nodes: {"a\u0007b": {score: 1}}`, []string{`nodes["a\ab"]: Invalid value: "a\ab"`}},
		"newline in name":    {`nodes: {"a\nb": {score: 1}, c: {score: 1}}`, []string{`nodes["a\nb"]: Invalid value: "a\nb"`}},
		"name too long":      {"nodes: {" + strings.Repeat("a", 254) + ": {score: 1}}", []string{"must be no more than 253 characters"}},
		"bad name, bad data": {`nodes: {"x_y": {packet_loss: 2}}`, []string{`nodes["x_y"]: Invalid value: "x_y"`, `nodes["x_y"].packet_loss: Invalid value: 2`}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("/cfg/bad.yaml", []byte(tt.doc))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range append(tt.want, "/cfg/bad.yaml") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if i := strings.IndexFunc(err.Error(), unicode.IsControl); i >= 0 {
				t.Errorf("error %q has a raw control character at %d", err, i)
			}
		})
	}
}

func TestResponseWithoutScenario(t *testing.T) {
	resp := Response(nil, time.Now())
	if resp.Results == nil || len(resp.Results) != 0 || resp.Source != "none" {
		t.Errorf("%+v: want empty, non-nil results", resp)
	}
}

// TestWatchReloads replaces the file the way the kubelet updates a
// ConfigMap volume, a new file renamed over the old one, under Watch's own
// polling.
func TestWatchReloads(t *testing.T) {
	path, write := scenarioFile(t)
	write("nodes: {a: {score: 1}}")

	var mu sync.Mutex
	var loaded []*Scenario
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Watch(ctx, path, 10*time.Millisecond, func(s *Scenario) {
		mu.Lock()
		defer mu.Unlock()
		loaded = append(loaded, s)
	}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(n int, what string) *Scenario {
		t.Helper()
		var last *Scenario
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			if len(loaded) >= n {
				last = loaded[len(loaded)-1]
			}
			return len(loaded) >= n, nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return last
	}
	if s := waitFor(1, "initial load"); *s.Nodes["a"].Score != 1 {
		t.Fatalf("initial scenario %+v", s.Nodes)
	}
	write("nodes: {a: {score: 2}}")
	if s := waitFor(2, "reload"); *s.Nodes["a"].Score != 2 {
		t.Fatalf("reloaded scenario %+v", s.Nodes)
	}
}

// TestWatcherKeepsLastGood polls a scenario file by hand: a malformed
// version is rejected and not handed on, an unchanged file is not handed
// on again, and the next good version is.
func TestWatcherKeepsLastGood(t *testing.T) {
	path, write := scenarioFile(t)
	write("nodes: {a: {score: 1}}")
	var loaded []*Scenario
	w, err := newWatcher(klog.Background(), path, func(s *Scenario) { loaded = append(loaded, s) })
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		content string
		want    polled
		loads   int
	}{
		{"", unchanged, 1},
		{"nodes: {a: {packet_loss: 7}}", rejected, 1},
		{"", rejected, 1},
		{"nodes: {a: {score: 3}}", reloaded, 2},
		{"", unchanged, 2},
	} {
		if step.content != "" {
			write(step.content)
		}
		if got := w.poll(); got != step.want || len(loaded) != step.loads {
			t.Fatalf("after %q: poll %v with %d loads, want %v with %d", step.content, got, len(loaded), step.want, step.loads)
		}
	}
	if *loaded[1].Nodes["a"].Score != 3 {
		t.Errorf("handed on %+v, want the last good version", loaded[1].Nodes)
	}
}

func TestWatchFailsOnBadInitialFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := Watch(context.Background(), path, time.Second, func(*Scenario) {}); err == nil {
		t.Error("a missing file must fail")
	}
	if err := os.WriteFile(path, []byte("nodes: {a: {}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Watch(context.Background(), path, time.Second, func(*Scenario) {}); err == nil || !strings.Contains(err.Error(), "nodes[a]") {
		t.Errorf("err = %v, want one naming nodes[a]", err)
	}
}

// scenarioFile returns the path of a scenario file in a fresh directory and
// a function that replaces its content the way the kubelet updates a
// ConfigMap volume: a new file renamed over the old one.
func scenarioFile(t *testing.T) (string, func(content string)) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "scenario.yaml")
	return path, func(content string) {
		tmp := filepath.Join(dir, ".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
}
