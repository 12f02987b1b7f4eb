package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkloadName(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkPerfScheduling/ProfileOverhead_KNS3/5000Nodes/namespace-2": "ProfileOverhead_KNS3/5000Nodes",
		"HostnameAffinity/1000Nodes_GateOn/sched-1":                          "HostnameAffinity/1000Nodes_GateOn",
	} {
		if got := workloadName(in); got != want {
			t.Errorf("workloadName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMedianAndGoBench(t *testing.T) {
	dir := t.TempDir()
	out := "BenchmarkDecode/nodes=100-2   20   300 ns/op   8 B/op   1 allocs/op\n" +
		"BenchmarkDecode/nodes=100-2   20   100 ns/op   8 B/op   1 allocs/op\n" +
		"BenchmarkDecode/nodes=100-2   20   200 ns/op   8 B/op   1 allocs/op\nok x 1s\n"
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := parseGoBench(filepath.Join(dir, "b.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if m, n := got["ns/op"].median("BenchmarkDecode/nodes=100"); m != 200 || n != 3 {
		t.Errorf("median = %v of %d, want 200 of 3", m, n)
	}
	s := samples{}
	s.add("k", 1)
	s.add("k", 4)
	if m, _ := s.median("k"); m != 2.5 {
		t.Errorf("even median = %v, want 2.5", m)
	}
}

func TestSortedKeysOrdersNodeCountsByNumber(t *testing.T) {
	s := samples{}
	for _, k := range []string{"Decode/nodes=15000", "ScoreCycle/nodes=100/etag=true", "Decode/nodes=5000", "Decode/nodes=100", "ScoreCycle/nodes=100/etag=false"} {
		s.add(k, 1)
	}
	want := []string{"Decode/nodes=100", "Decode/nodes=5000", "Decode/nodes=15000", "ScoreCycle/nodes=100/etag=false", "ScoreCycle/nodes=100/etag=true"}
	got := sortedKeys(s)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sortedKeys = %v, want %v", got, want)
	}
}

func TestSpliceSection(t *testing.T) {
	const sec = eventHeading + "\n\nnew\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"replaces the section, keeps the next", "# P\n\n" + eventHeading + "\n\nold\n\n## Findings\n\nf\n",
			"# P\n\n" + eventHeading + "\n\nnew\n\n## Findings\n\nf\n"},
		{"replaces the last section", "# P\n\n" + eventHeading + "\n\nold\n", "# P\n\n" + eventHeading + "\n\nnew\n"},
		{"inserts before the findings", "# P\n\n## 4. x\n\n## Findings\n\nf\n", "# P\n\n## 4. x\n\n" + sec + "\n## Findings\n\nf\n"},
		{"appends", "# P\n", "# P\n\n" + sec},
	} {
		if got := spliceSection(tc.doc, eventHeading, sec, "\n## Findings"); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestFindingsSection: the report appends the findings from their first
// section on, without the file's own title, so that the page keeps one
// title and the event section still finds "## Findings".
func TestFindingsSection(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"titled", "# Performance findings\n\nWhat this file is.\n\n## Findings\n\n- f\n", "## Findings\n\n- f\n"},
		{"a section first", "## Findings\n\n- f\n", "## Findings\n\n- f\n"},
		{"no section", "- f\n", "- f\n"},
		{"a heading deeper than a section", "# T\n\n### Not a section\n\n## Findings\n", "## Findings\n"},
	} {
		if got := findingsSection(tc.file); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestEventSectionJudgesPairedRatios: the verdict follows the median of
// the runs' own ratios, not the ratio of the medians.
func TestEventSectionJudgesPairedRatios(t *testing.T) {
	const on, off = "SchedulingThroughput|ProfileOverhead_KNS3/5000Nodes|Average", "SchedulingThroughput|ProfileOverhead_KNS3NoEvent/5000Nodes|Average"
	for _, tc := range []struct {
		name    string
		on, off []float64
		want    string
	}{
		// The medians, 150 and 140, give 1.07; the runs' own ratios are
		// 0.90, 0.94 and 1.29: not met.
		{"runs disagree with the medians", []float64{90, 150, 180}, []float64{100, 160, 140}, "Median on / off: **0.94**. Goal (at most 3% fewer pods/s, on / off ≥ 0.97): **not met**."},
		{"within 3%", []float64{98, 150, 200}, []float64{100, 152, 200}, "Median on / off: **0.99**. Goal (at most 3% fewer pods/s, on / off ≥ 0.97): met."},
		{"unpaired", []float64{98, 150}, []float64{100}, "No paired measurement."},
	} {
		r := &report{perf: samples{on: tc.on, off: tc.off}}
		if got := r.eventSection(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: section\n%s\nlacks %q", tc.name, got, tc.want)
		}
	}
}

// TestParseLoadNames: a load output not named <scenario>-<run>.txt is an
// error naming it, not a panic.
func TestParseLoadNames(t *testing.T) {
	dir := t.TempDir()
	wrk := "Requests/sec:   1234.5\n  Latency Distribution\n     99%    2.50ms\n"
	for _, name := range []string{"web-1.txt", "web-2.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(wrk), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := parseLoad(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got["web|rps"]) != 2 || len(got["web|p99ms"]) != 2 {
		t.Errorf("samples %v, want two runs of web", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "stray.txt"), []byte(wrk), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parseLoad(dir); err == nil || !strings.Contains(err.Error(), "stray.txt") {
		t.Errorf("parseLoad with stray.txt: err %v, want one naming the file", err)
	}
}

// TestOverheadSection: each KNS-3 profile's ratio is the median of the
// runs' own ratios to the default profile, judged against its goal.
func TestOverheadSection(t *testing.T) {
	key := func(c string) string { return "SchedulingThroughput|" + c + "/500Nodes|Average" }
	r := &report{perf: samples{
		key("ProfileOverhead_Default"):        {100, 200, 150},
		key("ProfileOverhead_KNS3"):           {90, 196, 150},  // 0.90, 0.98, 1.00
		key("ProfileOverhead_KNS3Background"): {110, 190, 160}, // 1.10, 0.95, 1.07
		key("ProfileOverhead_KNS3Live"):       {80, 190, 135},  // 0.80, 0.95, 0.90
	}}
	got := r.overheadSection()
	for _, want := range []string{
		"| 500 | 150.0 | 150.0 | 160.0 | 135.0 | 0.98 (met) | 1.07 (met) | 0.90 (**not met**) | 3 / 3 / 3 / 3 |",
		"| 1000 | — | — | — | — | — | — | — | 0 / 0 / 0 / 0 |",
		"500 nodes, per run: PerCycle 0.90 (90.0 / 100.0), 0.98 (196.0 / 200.0), 1.00 (150.0 / 150.0)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section\n%s\nlacks %q", got, want)
		}
	}
	r.perf[key("ProfileOverhead_KNS3Background")] = []float64{95, 190, 150}
	if got := r.overheadSection(); !strings.Contains(got, "| 0.95 (**not met**) |") {
		t.Errorf("Background at 0.95 of the default profile, goal 1.0:\n%s", got)
	}
}

// TestBesideSection reads the beside-the-loop benchmarks' own units.
func TestBesideSection(t *testing.T) {
	r := &report{goBench: map[string]samples{
		"cpu-%":               {"BenchmarkBesideTheLoop/nodes=5000/pods=50000": {1.2, 1.5, 1.3}},
		"drift-cpu-%":         {"BenchmarkBesideTheLoop/nodes=5000/pods=50000": {0.5, 0.6, 0.5}},
		"retained-MB":         {"BenchmarkBesideTheLoop/nodes=5000/pods=50000": {14, 14, 14}},
		"ns/op":               {"BenchmarkDriftUpdate/nodes=5000/pods=50000": {26e6, 27e6, 25e6}},
		"cycles/s-alone":      {"BenchmarkLoopBesideDrift": {1700}},
		"cycles/s-with-drift": {"BenchmarkLoopBesideDrift": {1690}},
		"with/alone":          {"BenchmarkLoopBesideDrift": {0.994}},
	}}
	got := r.besideSection()
	for _, want := range []string{
		"| 50000 | 1.30 | 0.50 | 26.00 ms | 14.0 | met | 3 |",
		"| 10000 | — | — | — | — | — | 0 |",
		"| 1700 | 1690 | 0.994 | met | 1 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section\n%s\nlacks %q", got, want)
		}
	}
	if cycleBenchmark("BenchmarkBesideTheLoop/nodes=5000/pods=50000") || !cycleBenchmark("BenchmarkOf") {
		t.Error("cycleBenchmark puts the benchmarks in the wrong sections")
	}
}
