package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeLines(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reliability.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParseReliabilityMedians(t *testing.T) {
	path := writeLines(t,
		`{"mode":"PerCycle","condition":"hanging","nodes":200,"pods":1000,"bound":1000,"seconds":30,"create_s":9,"pods_per_s":33,"p50_s":16,"p99_s":30,"aware_share":0.001,"fallbacks":{"simulator_failed":1,"breaker_open":999},"recovery_s":0.4}`,
		``,
		`{"mode":"PerCycle","condition":"hanging","nodes":200,"pods":1000,"bound":1000,"seconds":20,"create_s":7,"pods_per_s":50,"p50_s":17,"p99_s":20,"aware_share":0,"fallbacks":{"simulator_failed":1,"breaker_open":1000},"recovery_s":1.6}`,
		`{"mode":"PerCycle","condition":"hanging","nodes":200,"pods":1000,"bound":1000,"seconds":25,"create_s":8,"pods_per_s":40,"p50_s":18,"p99_s":25,"aware_share":0,"fallbacks":{"simulator_failed":3,"breaker_open":997},"recovery_s":0.7}`,
		`{"mode":"PerCycle","condition":"latency1s","nodes":200,"pods":20,"bound":20,"seconds":21,"pods_per_s":0.95,"p50_s":10,"p99_s":20,"aware_share":1,"fallbacks":{},"note":"burst of 20 pods"}`,
	)
	cases, err := parseReliability(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		got  float64
		want float64
	}{
		{"runs", float64(cases["PerCycle/hanging"].runs), 3},
		{"pods/s", cases["PerCycle/hanging"].podsPerS, 40},
		{"p50", cases["PerCycle/hanging"].p50, 17},
		{"p99", cases["PerCycle/hanging"].p99, 25},
		{"seconds", cases["PerCycle/hanging"].seconds, 25},
		{"create_s", cases["PerCycle/hanging"].createS, 8},
		{"aware", cases["PerCycle/hanging"].aware, 0},
		{"simulator_failed", cases["PerCycle/hanging"].fallbacks["simulator_failed"], 1},
		{"breaker_open", cases["PerCycle/hanging"].fallbacks["breaker_open"], 999},
		{"stale", cases["PerCycle/hanging"].fallbacks["stale"], 0},
		{"latency pods", cases["PerCycle/latency1s"].pods, 20},
		{"recovery", cases["PerCycle/hanging"].recovery, 0.7},
		{"no recovery measured", cases["PerCycle/latency1s"].recovery, -1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.key, tc.got, tc.want)
		}
	}
	if !cases["PerCycle/hanging"].allBound {
		t.Error("allBound = false, want true")
	}
	if got := cases["PerCycle/latency1s"].note; got != "burst of 20 pods" {
		t.Errorf("note = %q", got)
	}
}

func TestParseReliabilityErrors(t *testing.T) {
	for name, line := range map[string]string{
		"not JSON":     `pods: 3`,
		"no mode":      `{"condition":"healthy","pods":3}`,
		"no condition": `{"mode":"PerCycle","pods":3}`,
	} {
		if _, err := parseReliability(writeLines(t, line)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReliabilityAllBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want bool
	}{
		{"all", `{"mode":"PerCycle","condition":"healthy","pods":10,"bound":10}`, true},
		{"short", `{"mode":"PerCycle","condition":"healthy","pods":10,"bound":9}`, false},
		{"no bound field", `{"mode":"PerCycle","condition":"healthy","pods":10}`, false},
		{"empty burst", `{"mode":"PerCycle","condition":"healthy","pods":0,"bound":0}`, false},
	} {
		cases, err := parseReliability(writeLines(t, tc.line))
		if err != nil {
			t.Fatal(err)
		}
		if got := cases["PerCycle/healthy"].allBound; got != tc.want {
			t.Errorf("%s: allBound = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReliabilityGoals(t *testing.T) {
	c := func(mode, cond string, podsPerS, p99, aware float64) *relCase {
		return &relCase{mode: mode, condition: cond, runs: 1, allBound: true, podsPerS: podsPerS, p99: p99, aware: aware, recovery: -1}
	}
	recovered := func(rc *relCase, s float64) *relCase { rc.recovery = s; return rc }
	type verdict struct{ evaluated, met bool }
	for _, tc := range []struct {
		name  string
		cases []*relCase
		// want is the verdict of each goal, in reliabilityGoals' order:
		// PerCycle hanging, Background hanging, Background latency1s, PerCycle errors50, recovery.
		want [5]verdict
	}{
		{
			name: "all met",
			cases: []*relCase{
				c("PerCycle", "healthy", 50, 20, 1), recovered(c("PerCycle", "hanging", 40, 36.1, 0), 2.0),
				recovered(c("PerCycle", "errors50", 12, 60, 0.96), 0.1),
				c("Background", "healthy", 50, 20, 1), c("Background", "hanging", 50, 23.9, 0.5), c("Background", "latency1s", 40.1, 21, 1),
			},
			want: [5]verdict{{true, true}, {true, true}, {true, true}, {true, true}, {true, true}},
		},
		{
			name: "each just missed",
			cases: []*relCase{
				c("PerCycle", "healthy", 50, 20, 1), recovered(c("PerCycle", "hanging", 40, 36.3, 0), 0.2),
				recovered(c("PerCycle", "errors50", 12, 60, 0.875), 2.01),
				c("Background", "healthy", 50, 20, 1), c("Background", "hanging", 50, 24.1, 0.5), c("Background", "latency1s", 39.9, 21, 1),
			},
			want: [5]verdict{{true, false}, {true, false}, {true, false}, {true, false}, {true, false}},
		},
		{
			name:  "nothing run",
			cases: nil,
			want:  [5]verdict{},
		},
		{
			name:  "hanging without its healthy baseline",
			cases: []*relCase{c("PerCycle", "hanging", 40, 20, 0), c("Background", "hanging", 40, 20, 0)},
			want:  [5]verdict{},
		},
	} {
		cases := map[string]*relCase{}
		for _, rc := range tc.cases {
			cases[rc.mode+"/"+rc.condition] = rc
		}
		goals := reliabilityGoals(cases)
		if len(goals) != len(tc.want) {
			t.Fatalf("%s: %d goals, want %d", tc.name, len(goals), len(tc.want))
		}
		for i, g := range goals {
			if got := (verdict{g.evaluated, g.met}); got != tc.want[i] {
				t.Errorf("%s: goal %q = %+v, want %+v (%s)", tc.name, g.name, got, tc.want[i], g.measured)
			}
		}
	}
}

func TestReliabilityGoalNeedsEveryPodBound(t *testing.T) {
	cases := map[string]*relCase{
		"PerCycle/errors50": {mode: "PerCycle", condition: "errors50", aware: 1, allBound: false},
	}
	g := reliabilityGoals(cases)[3]
	if !g.evaluated || g.met {
		t.Errorf("errors50 goal with a pod unbound: evaluated %v met %v, want evaluated and missed", g.evaluated, g.met)
	}
}

func TestReliabilityMarkdown(t *testing.T) {
	cases := map[string]*relCase{
		"Background/healthy": {mode: "Background", condition: "healthy", runs: 3, allBound: true, nodes: 200, pods: 1000,
			seconds: 20.7, createS: 9.25, podsPerS: 48.24, p50: 9.5, p99: 19.25, aware: 0.999, fallbacks: map[string]float64{"stale": 1}, recovery: -1},
		"PerCycle/latency1s": {mode: "PerCycle", condition: "latency1s", runs: 3, allBound: true, nodes: 200, pods: 20,
			podsPerS: 0.96, fallbacks: map[string]float64{}, note: "burst of 20 pods", recovery: 1.25},
	}
	md := reliabilityMarkdown(cases, "2 cores", "make bench", false)
	for _, want := range []string{
		"run by `make bench`",
		"Machine: 2 cores",
		// PerCycle rows come first.
		"| PerCycle | latency1s | 200 | 20 | 0.00 | 0.00 | 1.0 | 0.000 | 0.000 | 0.0% | 0 | 0 | 0 | 1.25 | yes | 3 | burst of 20 pods |\n" +
			"| Background | healthy | 200 | 1000 | 20.70 | 9.25 | 48.2 | 9.500 | 19.250 | 99.9% | 0 | 0 | 1 | — | yes | 3 |  |",
		"| PerCycle, simulator hanging |",
		"not measured",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "reliability.png") {
		t.Error("markdown links the plot, which was not drawn")
	}
}
