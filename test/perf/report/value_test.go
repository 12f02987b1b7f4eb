package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kns3.dev/kns3/test/perf/value"
)

func TestValueReport(t *testing.T) {
	r := value.Report{Version: "v0.1.0", Clients: 6, DurationSeconds: 30,
		Links: map[string]string{"w2": "5 Mbit/s, 5.0% loss", "w3": "100 Mbit/s, 0.0% loss"},
		Placements: []value.Placement{
			{Name: "default scheduler", Nodes: map[string]int{"w2": 3, "w3": 3}, P50Ms: 2, P99Ms: 800, Mbps: 30},
			{Name: "KNS-3, static sample scenario", Nodes: map[string]int{"w2": 6}, P50Ms: 400, P99Ms: 1600, Mbps: 4},
			{Name: "KNS-3, live measurements", Nodes: map[string]int{"w3": 6}, P50Ms: 1, P99Ms: 40, Mbps: 45},
		}}
	dir := t.TempDir()
	data, _ := json.Marshal(r)
	in := filepath.Join(dir, "value.json")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "") // no gnuplot: the table alone
	if err := writeValue(in, filepath.Join(dir, "plot"), dir, "2 cores", "make bench"); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "value.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| KNS-3, live measurements | `w3` 6 | 1.0 ms | 40.0 ms | 45.0 Mbit/s |",
		"| default scheduler | `w2` 3, `w3` 3 | 2.0 ms | 800.0 ms | 30.0 Mbit/s |",
		"p99 **0.05×** (goal ≤ 0.55×), throughput **1.50×** (goal ≥ 1.22×)",
		"| `w2` | 5 Mbit/s, 5.0% loss |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("value.md lacks %q:\n%s", want, md)
		}
	}
	r.Placements = r.Placements[:2]
	data, _ = json.Marshal(r)
	_ = os.WriteFile(in, data, 0o644)
	if err := writeValue(in, dir, dir, "", ""); err == nil {
		t.Error("a report of two placements was accepted")
	}
}
