package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kns3.dev/kns3/test/perf/value"
)

// splitsHeading starts the section of a value report on every split of
// the clients between the two links.
const splitsHeading = "## Every split of the clients"

// readSplits reads workload's splits report from in: false when there is
// none.
func readSplits(in, workload string) (value.Report, bool, error) {
	path := filepath.Join(in, value.SplitsFileName(workload))
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return value.Report{}, false, nil
	}
	if err != nil {
		return value.Report{}, false, err
	}
	var r value.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return value.Report{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkValue(r); err != nil {
		return value.Report{}, false, fmt.Errorf("%s: %w", path, err)
	}
	for i := range r.Levels {
		l := &r.Levels[i]
		if want := value.SplitPlacements(l.Clients); !slices.Equal(l.PlacementNames(), want) {
			return value.Report{}, false, fmt.Errorf("%s: level %q: placements %q, want every split of %d clients, %q", path, l.Name, l.PlacementNames(), l.Clients, want)
		}
		l.Summarise()
	}
	return r, true, nil
}

// writeSplitsReports puts each workload's splits section into its value
// report in out, in place of the one there, leaving the rest as it is:
// the splits run on their own (hack/bench/run.sh full splits). main, the
// value benchmark's results in in, says which split each placement chose.
func writeSplitsReports(in, out string) error {
	found := 0
	for _, w := range value.Workloads {
		splits, ok, err := readSplits(in, w)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintf(os.Stderr, "report: no %s, no splits for %s\n", filepath.Join(in, value.SplitsFileName(w)), w)
			continue
		}
		found++
		page := filepath.Join(out, strings.TrimSuffix(value.FileName(w), ".json")+".md")
		doc, err := os.ReadFile(page)
		if err != nil {
			return fmt.Errorf("the splits go into the value report, which is not there: %w", err)
		}
		var main *value.Report
		if data, err := os.ReadFile(filepath.Join(in, value.FileName(w))); err == nil {
			var r value.Report
			if err := json.Unmarshal(data, &r); err != nil {
				return err
			}
			main = &r
		}
		section := splitsSection(splits, main)
		if err := os.WriteFile(page, []byte(spliceSection(string(doc), splitsHeading, section, "\n## Every trial")), 0o644); err != nil {
			return err
		}
	}
	if found == 0 {
		return fmt.Errorf("no splits results in %s", in)
	}
	return nil
}

// splitsSection tells what every split of the clients measured at each of
// the splits report's levels: the best any placement on this cluster could
// do, and which split each of main's placements chose (main may be nil).
func splitsSection(r value.Report, main *value.Report) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	bestNode := ""
	if nodes := names(r.LinkMbps); len(nodes) > 0 {
		bestNode = slices.MaxFunc(nodes, func(a, c string) int { return cmp.Compare(r.LinkMbps[a], r.LinkMbps[c]) })
	}
	p("%s\n\n", splitsHeading)
	command := "hack/bench/run.sh full splits"
	var levels []string
	for _, l := range r.Levels {
		levels = append(levels, l.Name)
	}
	if !slices.Equal(levels, []string{"equal"}) {
		command = "VALUE_SPLITS=" + strings.Join(levels, ",") + " " + command
	}
	p("Measured by `%s` (KNS-3 %s, %s), on a cluster shaped as above: "+
		"the same clients, each held to a node, so that every way of splitting them between the two links runs, "+
		"beside the default scheduler's own placement, %s, %.0f s each. "+
		"A ratio compares a split with the default scheduler's placement of the same trial. "+
		"No scheduler can place these clients better than the best split measured here.\n",
		command, r.Version, r.Date.Format("2006-01-02"), splitsOrder(r), r.DurationSeconds)
	if main != nil && main.PingsOpenLoop != r.PingsOpenLoop {
		p("\nThese clients made their small calls %s, the value run's above %s: compare these p99s with each other, "+
			"not with that run's.\n", pingLoopShort(r), pingLoopShort(*main))
	}
	for _, l := range r.Levels {
		p("\n### %s, %d clients\n\n%d trials.\n\n", levelTitle(l.Name), l.Clients, len(l.Trials))
		chosen := chosenSplits(main, l, bestNode)
		p("| Placement | Median small-call p99 | Median throughput | p99 vs default (median, worst) | Throughput vs default (median, worst) | Chosen above, in trials |\n|---|---:|---:|---:|---:|---|\n")
		for i, s := range l.Summary {
			by := "—"
			if i > 0 {
				if c := chosen[l.Trials[0].Placements[i].Nodes[bestNode]]; len(c) > 0 {
					by = strings.Join(c, "; ")
				}
			}
			p("| %s | %.1f ms | %.1f Mbit/s | %.2f×, %.2f× | %.2f×, %.2f× | %s |\n", s.Name, s.MedianP99Ms, s.MedianMbps,
				s.MedianP99Ratio, s.WorstP99Ratio, s.MedianMbpsRatio, s.WorstMbpsRatio, by)
		}
		p("\n%s\n", splitsVerdict(l))
		if line := heldDefaultLine(l, bestNode); line != "" {
			p("\n%s\n", line)
		}
		if line := runsApartLine(main, l, bestNode); line != "" {
			p("\n%s\n", line)
		}
		p("\n| Trial | Ran | Placement | Small-call p50 | Small-call p99 | Throughput |\n|---:|---:|---|---:|---:|---:|\n")
		for i, tr := range l.Trials {
			for _, pl := range tr.Placements {
				p("| %d | %d | %s | %.1f ms | %.1f ms | %.1f Mbit/s |\n", i+1, slices.Index(tr.Order, pl.Name)+1, pl.Name, pl.P50Ms, pl.P99Ms, pl.Mbps)
			}
		}
	}
	return b.String()
}

// splitsOrder says in what order r's trials ran the splits.
func splitsOrder(r value.Report) string {
	if r.Order == value.OrderBalanced {
		return "in a balanced order (a Williams design), so that no placement always runs first or always after the same one"
	}
	return "in rotating order"
}

// chosenSplits says, for each count of clients on bestNode, which of
// main's placements at split's level, with as many clients, put that many
// there, and in how many of its trials.
func chosenSplits(main *value.Report, split value.Level, bestNode string) map[int][]string {
	chosen := map[int][]string{}
	if main == nil {
		return chosen
	}
	for _, l := range main.Levels {
		if l.Name != split.Name || l.Clients != split.Clients {
			continue
		}
		for i, name := range l.PlacementNames() {
			counts := map[int]int{}
			for _, tr := range l.Trials {
				if i < len(tr.Placements) {
					counts[tr.Placements[i].Nodes[bestNode]]++
				}
			}
			for best, n := range counts {
				chosen[best] = append(chosen[best], fmt.Sprintf("%s %d of %d", name, n, len(l.Trials)))
			}
		}
	}
	for _, c := range chosen {
		slices.SortFunc(c, func(a, b string) int {
			return cmp.Compare(slices.IndexFunc(value.Placements, func(n string) bool { return strings.HasPrefix(a, n+" ") }),
				slices.IndexFunc(value.Placements, func(n string) bool { return strings.HasPrefix(b, n+" ") }))
		})
	}
	return chosen
}

// splitsVerdict names the splits with the lowest median p99 ratio and the
// highest median throughput ratio and, at the level where the demand
// equals the best link's capacity, whether any split reaches Diktyo's goal.
func splitsVerdict(l value.Level) string {
	splits := l.Summary[1:]
	low := slices.MinFunc(splits, func(a, b value.Summary) int { return cmp.Compare(a.MedianP99Ratio, b.MedianP99Ratio) })
	high := slices.MaxFunc(splits, func(a, b value.Summary) int { return cmp.Compare(a.MedianMbpsRatio, b.MedianMbpsRatio) })
	line := fmt.Sprintf("The lowest median p99 of any split: %s the default scheduler's (%s). The highest median throughput: %s (%s).",
		against(low.MedianP99Ratio, 1), low.Name, against(high.MedianMbpsRatio, 1), high.Name)
	if l.Name != "equal" {
		return line
	}
	var reach []string
	for _, s := range splits {
		if s.MedianP99Ratio <= 0.55 && s.MedianMbpsRatio >= 1.22 {
			reach = append(reach, s.Name)
		}
	}
	if len(reach) == 0 {
		return line + " No split reaches the goal at this level (p99 ≤ 0.55× and throughput ≥ 1.22×, medians): no placement of these clients on this cluster meets it."
	}
	return line + fmt.Sprintf(" The goal at this level (p99 ≤ 0.55× and throughput ≥ 1.22×, medians) is within reach: %s.", strings.Join(reach, "; "))
}

// heldDefaultLine compares, trial by trial, the default scheduler's
// placement with the split that holds its clients where it put them: the
// same placement measured twice in one trial, so its ratio is this
// cluster's noise between two runs. Empty when no trial has that split.
func heldDefaultLine(l value.Level, bestNode string) string {
	var ratios []float64
	for _, tr := range l.Trials {
		def := tr.Placements[0]
		for _, pl := range tr.Placements[1:] {
			if pl.Nodes[bestNode] == def.Nodes[bestNode] && def.P99Ms > 0 {
				ratios = append(ratios, pl.P99Ms/def.P99Ms)
			}
		}
	}
	if len(ratios) == 0 {
		return ""
	}
	return fmt.Sprintf("The default scheduler's own split, held, against the default scheduler's run of it in the same trial: "+
		"p99 %.2f× median, %.2f×–%.2f× over %d trials: the same placement, run twice in a trial, measured that far apart.",
		medianOf(ratios), slices.Min(ratios), slices.Max(ratios), len(ratios))
}

// runsApartLine compares the value run above with this one at level l:
// the default scheduler's median p99 in each, and the median p99 of the
// split KNS-3 live with capacity chose most often, above and here. Each
// run's ratios are to its own default, so a default that measured
// differently moves them all. Empty when main has no such level with as
// many clients.
func runsApartLine(main *value.Report, l value.Level, bestNode string) string {
	if main == nil {
		return ""
	}
	i := slices.IndexFunc(main.Levels, func(m value.Level) bool { return m.Name == l.Name && m.Clients == l.Clients })
	if i < 0 || len(main.Levels[i].Trials) == 0 {
		return ""
	}
	above := main.Levels[i]
	above.Summarise()
	counts := map[int]int{}
	for _, tr := range above.Trials {
		counts[tr.Placements[placementCapacity].Nodes[bestNode]]++
	}
	chosen := slices.MaxFunc(slices.Collect(maps.Keys(counts)), func(a, b int) int { return cmp.Or(cmp.Compare(counts[a], counts[b]), cmp.Compare(a, b)) })
	at := slices.IndexFunc(l.Trials[0].Placements, func(p value.Placement) bool { return p.Name != value.PlacementDefault && p.Nodes[bestNode] == chosen })
	if at < 0 {
		return ""
	}
	return fmt.Sprintf("Run apart, the same placements measured differently: the default scheduler's median p99 was %.1f ms in the value run above and %.1f ms here; "+
		"%s, the split live with capacity chose in %d of %d trials above, %.1f ms above and %.1f ms here. "+
		"A ratio to the default scheduler holds only within its own run.",
		above.Summary[placementDefault].MedianP99Ms, l.Summary[0].MedianP99Ms,
		l.Summary[at].Name, counts[chosen], len(above.Trials), above.Summary[placementCapacity].MedianP99Ms, l.Summary[at].MedianP99Ms)
}
