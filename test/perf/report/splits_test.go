package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kns3.dev/kns3/test/perf/value"
)

// splitsReport is every split of 2 clients at equal, w3 the best link,
// two trials, each split's figures scaled by the trial's default.
func splitsReport(packed figures) value.Report {
	names := value.SplitPlacements(2)
	nodes := []map[string]int{{"w2": 1, "w3": 1}, {"w3": 2}, {"w2": 1, "w3": 1}, {"w2": 2}}
	perSplit := []figures{{100, 40}, packed, {100, 41}, {300, 20}}
	l := value.Level{Name: "equal", Clients: 2, DemandMbps: 16, Placements: names}
	for i, scale := range []float64{1, 1.5} {
		tr := value.Trial{}
		for k := range names {
			tr.Order = append(tr.Order, names[(i+k)%len(names)])
		}
		for k, name := range names {
			tr.Placements = append(tr.Placements, value.Placement{Name: name, Nodes: nodes[k],
				P99Ms: perSplit[k].p99 * scale, Mbps: perSplit[k].mbps})
		}
		l.Trials = append(l.Trials, tr)
	}
	return value.Report{Version: "v0.1.0", DurationSeconds: 15, ClientMbps: 8, BestLinkMbps: 100,
		Links:    map[string]string{"w2": "20 Mbit/s", "w3": "100 Mbit/s"},
		LinkMbps: map[string]float64{"w2": 20, "w3": 100},
		Levels:   []value.Level{l}}
}

// writeReport writes r as JSON into dir, as name.
func writeReport(t *testing.T, dir, name string, r value.Report) {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// valuePage renders dir's netbench report, with its splits, and returns
// value.md.
func valuePage(t *testing.T, dir string) string {
	t.Helper()
	if err := writeValue(filepath.Join(dir, value.FileName("")), filepath.Join(dir, "plot"), dir, "2 cores", "make bench"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "value.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSplitsSection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		packed figures
		want   []string
	}{{
		name:   "out of reach",
		packed: figures{80, 52},
		want: []string{
			"| 2 on the best link, 0 on the slower | 100.0 ms | 52.0 Mbit/s | 0.80×, 0.80× | 1.30×, 1.30× |",
			"The lowest median p99 of any split: 0.80× the default scheduler's (2 on the best link, 0 on the slower). The highest median throughput: 1.30× (2 on the best link, 0 on the slower).",
			"No split reaches the goal at this level",
		},
	}, {
		name:   "within reach",
		packed: figures{50, 52},
		want: []string{
			"| 2 on the best link, 0 on the slower | 62.5 ms | 52.0 Mbit/s | 0.50×, 0.50× | 1.30×, 1.30× |",
			"is within reach: 2 on the best link, 0 on the slower.",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeReport(t, dir, value.FileName(""), valueReport())
			writeReport(t, dir, value.SplitsFileName(""), splitsReport(tc.packed))
			md := valuePage(t, dir)
			at, trials := strings.Index(md, splitsHeading), strings.Index(md, "\n## Every trial")
			if at < 0 || trials < at {
				t.Fatalf("want the splits section before the trials:\n%s", md)
			}
			// The main report's equal level puts 6 of its 12 clients on w3 in
			// every placement, none of which is a split of 2.
			// The default's split, 1 and 1, is held at the default's p99 in both trials.
			tc.want = append(tc.want, "p99 1.00× median, 1.00×–1.00× over 2 trials")
			for _, want := range append(tc.want, "| 1 on the best link, 1 on the slower | 125.0 ms | 41.0 Mbit/s | 1.00×, 1.00× | 1.02×, 1.02× | — |") {
				if !strings.Contains(md[at:trials], want) {
					t.Errorf("splits section lacks %q:\n%s", want, md[at:trials])
				}
			}

			// Run on their own, the splits replace the section in place.
			writeReport(t, dir, value.SplitsFileName(""), splitsReport(figures{70, 52}))
			if err := writeSplitsReports(dir, dir); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, "value.md"))
			if err != nil {
				t.Fatal(err)
			}
			again := string(data)
			if strings.Count(again, splitsHeading) != 1 || !strings.Contains(again, "| 2 on the best link, 0 on the slower | 87.5 ms |") ||
				again[:at] != md[:at] || again[strings.Index(again, "\n## Every trial"):] != md[trials:] {
				t.Errorf("splits not replaced in place:\n%s", again)
			}
		})
	}
}

func TestChosenSplits(t *testing.T) {
	main := valueReport()
	// Trial 2 of equal: live with capacity puts 10 of 12 on w3.
	main.Levels[1].Trials[1].Placements[3].Nodes = map[string]int{"w3": 10, "w2": 2}
	equal := value.Level{Name: "equal", Clients: 12}
	chosen := chosenSplits(&main, equal, "w3")
	if got, want := strings.Join(chosen[6], "; "), "default scheduler 2 of 2; KNS-3, static scenario 2 of 2; KNS-3 live, without capacity 2 of 2; KNS-3 live, with capacity 1 of 2"; got != want {
		t.Errorf("6 on w3: %q, want %q", got, want)
	}
	if got, want := strings.Join(chosen[10], "; "), "KNS-3 live, with capacity 1 of 2"; got != want {
		t.Errorf("10 on w3: %q, want %q", got, want)
	}
	if len(chosenSplits(nil, equal, "w3")) != 0 {
		t.Error("no main report: want nothing chosen")
	}
	if got := chosenSplits(&main, value.Level{Name: "equal", Clients: 2}, "w3"); len(got) != 0 {
		t.Errorf("splits of 2 clients against a level of 12: %v, want nothing chosen", got)
	}
}

func TestSplitsRejected(t *testing.T) {
	dir := t.TempDir()
	// A split left out: 0 on the best link.
	r := splitsReport(figures{80, 52})
	l := &r.Levels[0]
	l.Placements = l.Placements[:3]
	for i := range l.Trials {
		l.Trials[i].Placements = l.Trials[i].Placements[:3]
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, value.SplitsFileName("")), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readSplits(dir, ""); err == nil || !strings.Contains(err.Error(), "every split") {
		t.Errorf("splits report of the four placements: error %v, want one saying it needs every split", err)
	}
	if err := writeSplitsReports(t.TempDir(), dir); err == nil {
		t.Error("no splits results: want an error")
	}
}

func TestHeldDefaultLine(t *testing.T) {
	r := splitsReport(figures{80, 52})
	l := &r.Levels[0]
	// Held, the default's split measured 1.5× and 0.5× its p99.
	l.Trials[0].Placements[2].P99Ms = 150
	l.Trials[1].Placements[2].P99Ms = 75
	if got, want := heldDefaultLine(*l, "w3"), "p99 1.00× median, 0.50×–1.50× over 2 trials"; !strings.Contains(got, want) {
		t.Errorf("heldDefaultLine: %q, want it to say %q", got, want)
	}
	for i := range l.Trials {
		l.Trials[i].Placements[0].Nodes = map[string]int{"w3": 7}
	}
	if got := heldDefaultLine(*l, "w3"); got != "" {
		t.Errorf("no split holds the default's placement: %q, want no line", got)
	}
}

func TestRunsApartLine(t *testing.T) {
	main := valueReport()
	splits := splitsReport(figures{80, 52})
	l := splits.Levels[0]
	l.Summarise()
	if got := runsApartLine(&main, l, "w3"); got != "" {
		t.Errorf("live with capacity chose 6 on w3, no split of 2 clients: %q, want no line", got)
	}
	for i := range main.Levels[1].Trials {
		main.Levels[1].Trials[i].Placements[placementCapacity].Nodes = map[string]int{"w3": 2}
	}
	if got := runsApartLine(&main, l, "w3"); got != "" {
		t.Errorf("a level of 12 clients against splits of 2: %q, want no line", got)
	}
	main.Levels[1].Clients = 2
	want := "the default scheduler's median p99 was 900.0 ms in the value run above and 125.0 ms here; " +
		"2 on the best link, 0 on the slower, the split live with capacity chose in 2 of 2 trials above, 440.0 ms above and 100.0 ms here."
	if got := runsApartLine(&main, l, "w3"); !strings.Contains(got, want) {
		t.Errorf("runsApartLine: %q, want it to say %q", got, want)
	}
	if got := runsApartLine(nil, l, "w3"); got != "" {
		t.Errorf("no value run: %q, want no line", got)
	}
}

// TestMethodTexts checks that a page says how its runs ordered their
// placements and timed their small calls, from what each report records,
// and warns when the splits were timed otherwise than the run above them.
func TestMethodTexts(t *testing.T) {
	t.Setenv("PATH", "") // no gnuplot: the tables alone
	rotating := "in rotating order (trial i, counting from 0, starts with placement i mod 4 of the list below)"
	balanced := "in a balanced order (a Williams design"
	fromSend := "every 100 ms on a connection of its own, each once the last is answered"
	fromDue := "every 100 ms as it falls due, whether or not the ones before are answered, on one of 32 connections kept open for them, and times it from when it was due;"
	mismatch := "These clients made their small calls one after the other (closed loop), the value run's above as they fell due (open loop)"
	for _, tc := range []struct {
		name              string
		mainNew, splitNew bool
		want, unwanted    []string
	}{
		{"both before", false, false, []string{rotating, fromSend, "beside the default scheduler's own placement, in rotating order"}, []string{balanced, fromDue, "These clients"}},
		{"both new", true, true, []string{balanced, fromDue, "no placement always runs first or always after the same one"}, []string{rotating, fromSend, "These clients"}},
		{"splits before", true, false, []string{balanced, fromDue, mismatch}, []string{rotating}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			measured := func(r value.Report, isNew bool) value.Report {
				if isNew {
					r.PingsOpenLoop, r.Order = true, value.OrderBalanced
				}
				return r
			}
			writeReport(t, dir, value.FileName(""), measured(valueReport(), tc.mainNew))
			writeReport(t, dir, value.SplitsFileName(""), measured(splitsReport(figures{80, 52}), tc.splitNew))
			md := valuePage(t, dir)
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("value.md lacks %q:\n%s", want, md)
				}
			}
			for _, unwanted := range tc.unwanted {
				if strings.Contains(md, unwanted) {
					t.Errorf("value.md says %q:\n%s", unwanted, md)
				}
			}
		})
	}
}
