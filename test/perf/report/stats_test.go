package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestLogInterval(t *testing.T) {
	// Logs 0, ln 2, ln 4: mean ln 2, sd ln 2; t(2) = 4.303.
	e := logInterval([]float64{1, 2, 4, -1, 0})
	half := 4.303 * math.Log(2) / math.Sqrt(3)
	if e.N != 3 || math.Abs(e.Mean-2) > 1e-9 || math.Abs(e.Lo-2*math.Exp(-half)) > 1e-9 || math.Abs(e.Hi-2*math.Exp(half)) > 1e-9 {
		t.Errorf("logInterval = %+v, want 3 values, mean 2, [%.4f, %.4f]", e, 2*math.Exp(-half), 2*math.Exp(half))
	}
	if one := logInterval([]float64{5}); one.N != 1 || one.Mean != 5 || one.resolved() || one.format(1) != "5.0" {
		t.Errorf("one value: %+v (%s), want its value, no interval", one, one.format(1))
	}
	if none := logInterval(nil); none.format(1) != "—" || !math.IsInf(none.halfWidth(), 1) {
		t.Errorf("no value: %s, half-width %v", none.format(1), none.halfWidth())
	}
	r := ratioInterval([][2]float64{{90, 100}, {180, 200}, {45, 50}})
	if math.Abs(r.Mean-0.9) > 1e-9 || math.Abs(r.Lo-0.9) > 1e-9 || math.Abs(r.halfWidth()) > 1e-9 {
		t.Errorf("equal ratios: %+v, want 0.9 with no width", r)
	}
}

func TestTQuantile(t *testing.T) {
	// Beyond the table, within 0.004 of the exact quantiles.
	for df, want := range map[int]float64{1: 12.706, 6: 2.447, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980} {
		if got := tQuantile975(df); math.Abs(got-want) > 0.004 {
			t.Errorf("tQuantile975(%d) = %.4f, want %.3f", df, got, want)
		}
	}
	if !math.IsNaN(tQuantile975(0)) {
		t.Error("tQuantile975(0) is a number")
	}
}

func TestIntervalVerdict(t *testing.T) {
	e := func(lo, hi float64) estimate { return estimate{Mean: (lo + hi) / 2, Lo: lo, Hi: hi, N: 5} }
	for _, tc := range []struct {
		e       estimate
		goal    float64
		atLeast bool
		want    string
	}{
		{e(0.96, 1.02), 0.95, true, verdictMet},
		{e(0.95, 1.02), 0.95, true, verdictMet},
		{e(0.90, 0.99), 0.95, true, verdictNotResolved},
		{e(0.80, 0.94), 0.95, true, verdictNotMet},
		{e(1.01, 1.04), 1.05, false, verdictMet},
		{e(1.03, 1.08), 1.05, false, verdictNotResolved},
		{e(1.06, 1.08), 1.05, false, verdictNotMet},
		{estimate{Mean: 2, Lo: math.NaN(), Hi: math.NaN(), N: 1}, 1, true, verdictNotResolved},
	} {
		if got := intervalVerdict(tc.e, tc.goal, tc.atLeast); got != tc.want {
			t.Errorf("intervalVerdict([%.2f, %.2f], %.2f, atLeast %v) = %q, want %q", tc.e.Lo, tc.e.Hi, tc.goal, tc.atLeast, got, tc.want)
		}
	}
}

// TestParsePerfPairsByRun: a value belongs to the run of the directory it
// is in, however deep, and only runs that measured both workloads pair.
func TestParsePerfPairsByRun(t *testing.T) {
	dir := t.TempDir()
	write := func(path, name string, v float64) {
		t.Helper()
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		data := `{"dataItems": [{"data": {"Average": ` + strconv.FormatFloat(v, 'f', -1, 64) +
			`}, "unit": "pods/s", "labels": {"Metric": "SchedulingThroughput", "Name": "BenchmarkPerfScheduling/` + name + `/measured"}},` +
			`{"data": {"Perc50": 0.2}, "unit": "ms", "labels": {"Metric": "PreScore", "plugin": "CustomScorePlugin", "Name": "` + name + `"}}]}`
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("run-1/a.json", "A/5000Nodes", 100)
	write("run-1/B-5000Nodes/b.json", "B/5000Nodes", 90)
	write("run-2/B-5000Nodes/b.json", "B/5000Nodes", 80)
	write("run-10/A-5000Nodes/a.json", "A/5000Nodes", 200)
	write("run-10/B-5000Nodes/b.json", "B/5000Nodes", 150)
	p, err := parsePerf(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := p.pairs(throughputKey("B/5000Nodes"), throughputKey("A/5000Nodes"))
	if len(got) != 2 || got[0] != [2]float64{90, 100} || got[1] != [2]float64{150, 200} {
		t.Errorf("pairs = %v, want run-1's and run-10's, in that order", got)
	}
	if v := p.values(preScoreKey("A/5000Nodes", customScorePlugin)); len(v) != 2 || v[0] != 0.2 {
		t.Errorf("PreScore values %v, want the plugin's under its own key, in 2 runs", v)
	}
}
