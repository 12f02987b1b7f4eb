package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"kns3.dev/kns3/test/netbench"
	"kns3.dev/kns3/test/perf/value"
)

// Indexes into value.Placements, the order every trial holds them in.
const placementDefault, placementUncounted, placementCapacity = 0, 2, 3

// levelNames are the load levels the benchmark runs, in order, and what
// each one means against the best link's cap.
var (
	levelNames  = []string{"below", "equal", "twice"}
	levelTitles = map[string]string{
		"below": "Below the best link's capacity",
		"equal": "About equal to the best link's capacity",
		"twice": "Twice the best link's capacity",
	}
)

// workloadTexts say, for each workload, what its report is about.
var workloadTexts = map[string]struct {
	title, server, smallCall, limits string
}{
	value.WorkloadNetbench: {
		title:     "What a live network picture is worth to a workload",
		server:    "Each client fetches objects over HTTP from netbench's server on the unshaped control-plane node",
		smallCall: "makes a small call (GET /ping)",
		limits: "one workload here, netbench's fetches and small calls; [value-redis.md](value-redis.md) runs the same clients " +
			"against a real Redis server",
	},
	value.WorkloadRedis: {
		title: "What a live network picture is worth to Redis",
		server: "Each client GETs one stored value, again and again, from Debian's redis-server " +
			"on the unshaped control-plane node (in memory only, as a cache runs)",
		smallCall: "makes a small call (PING)",
		limits: "the clients are netbench's paced client speaking Redis (go-redis), not redis-benchmark, which cannot hold " +
			"a steady rate, so each client asks the same Mbit/s as in [value.md](value.md); one key, no writes during the run",
	},
}

// writeValues writes the report of every workload whose results are in
// in; with need, none there is an error.
func writeValues(in, plotDir, out, machine, command string, need bool) error {
	found := 0
	for _, w := range value.Workloads {
		path := filepath.Join(in, value.FileName(w))
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintf(os.Stderr, "report: no %s, no value report for %s\n", path, w)
			continue
		}
		found++
		if err := writeValue(path, plotDir, out, machine, command); err != nil {
			return err
		}
	}
	if found == 0 && need {
		return fmt.Errorf("no value benchmark results in %s", in)
	}
	return nil
}

// writeValue turns one workload's value benchmark report (value.json,
// value-redis.json) into docs/value.md and docs/value.png (value-redis.md,
// value-redis.png).
func writeValue(in, plotDir, out, machine, command string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var r value.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := checkValue(r); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	for i := range r.Levels {
		// A summary of other placements would mislabel the rows.
		l := &r.Levels[i]
		if !slices.Equal(l.PlacementNames(), value.Placements) {
			return fmt.Errorf("%s: level %q: placements %q, want %q (a splits report goes in %s)", in, l.Name, l.PlacementNames(), value.Placements, value.SplitsFileName(r.Workload))
		}
		if !slices.EqualFunc(l.Summary, l.PlacementNames(), func(s value.Summary, name string) bool { return s.Name == name }) {
			l.Summarise()
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	page := strings.TrimSuffix(value.FileName(r.Workload), ".json")
	plotted, err := plotValue(r, filepath.Join(plotDir, page), filepath.Join(out, page+".png"))
	if err != nil {
		return err
	}
	md := valueMarkdown(r, machine, command, page+".png", plotted)
	splits, ok, err := readSplits(filepath.Dir(in), r.Workload)
	if err != nil {
		return err
	}
	if ok {
		md = spliceSection(md, splitsHeading, splitsSection(splits, &r), "\n## Every trial")
	}
	return os.WriteFile(filepath.Join(out, page+".md"), []byte(md), 0o644)
}

// checkValue rejects a report the tables would misread: every ratio pairs
// placements of one trial by their index.
func checkValue(r value.Report) error {
	if _, ok := workloadTexts[cmp.Or(r.Workload, value.WorkloadNetbench)]; !ok {
		return fmt.Errorf("workload %q: want one of %q", r.Workload, value.Workloads)
	}
	if len(r.Levels) == 0 {
		return errors.New("no load levels")
	}
	for _, l := range r.Levels {
		if len(l.Trials) == 0 {
			return fmt.Errorf("level %q: no trials", l.Name)
		}
		for i, tr := range l.Trials {
			var got []string
			for _, p := range tr.Placements {
				got = append(got, p.Name)
			}
			if want := l.PlacementNames(); !slices.Equal(got, want) || got[0] != value.PlacementDefault {
				return fmt.Errorf("level %q, trial %d: placements %q, want %q in that order, the default scheduler's first", l.Name, i+1, got, want)
			}
		}
	}
	return nil
}

func levelTitle(name string) string {
	if t, ok := levelTitles[name]; ok {
		return t
	}
	return name
}

// defaultMeasured says whether any trial's default placement measured
// something, without which the summary holds no ratios.
func defaultMeasured(l value.Level) bool {
	return slices.ContainsFunc(l.Trials, func(tr value.Trial) bool {
		d := tr.Placements[placementDefault]
		return d.P99Ms > 0 && d.Mbps > 0
	})
}

func verdict(measured, met bool) string {
	switch {
	case !measured:
		return "not measured"
	case met:
		return "**met**"
	}
	return "**not met**"
}

// pingLoop says how r's clients made their small calls.
func pingLoop(r value.Report) string {
	if r.PingsOpenLoop {
		return fmt.Sprintf("as it falls due, whether or not the ones before are answered, on one of %d connections kept open "+
			"for them, and times it from when it was due", netbench.PingConnections)
	}
	return "on a connection of its own, each once the last is answered (so a stall counts once, however many calls it held up)"
}

// pingLoopShort says in a few words how r's clients made their small
// calls.
func pingLoopShort(r value.Report) string {
	if r.PingsOpenLoop {
		return "as they fell due (open loop)"
	}
	return "one after the other (closed loop)"
}

// trialOrder says in what order r's trials ran a level's n placements.
func trialOrder(r value.Report, n int) string {
	if r.Order == value.OrderBalanced {
		return "in a balanced order (a Williams design: over as many trials as placements, each runs once in every position " +
			"and once after every other), so none always runs first or always after the same one"
	}
	return fmt.Sprintf("in rotating order (trial i, counting from 0, starts with placement i mod %d of the list below), so none always runs first", n)
}

func valueMarkdown(r value.Report, machine, command, png string, plotted bool) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	text := workloadTexts[cmp.Or(r.Workload, value.WorkloadNetbench)]
	p("# %s\n\n", text.title)
	p("Generated by `%s` (KNS-3 %s, %s", command, r.Version, r.Date.Format("2006-01-02"))
	if machine != "" {
		p("; %s", machine)
	}
	p("). Do not edit: rerun it.\n\n")
	p("The same clients run at %d load levels on one kind cluster whose worker links are shaped for real "+
		"(tc tbf caps; internal/netshape). %s "+
		"at %g Mbit/s, which it declares in `kubernetes.io/ingress-bandwidth`, and %s every %g ms "+
		"%s; a call failing or taking over 5 s counts at 5 s. Node affinity holds the clients "+
		"to the two shaped workers for every placement. At each level every trial runs the four placements, %.0f s each, "+
		"%s. The levels are measured against the best link's cap, %g Mbit/s.\n\n",
		len(r.Levels), text.server, r.ClientMbps, text.smallCall, cmp.Or(r.PingIntervalMs, 100), pingLoop(r), r.DurationSeconds,
		trialOrder(r, len(value.Placements)), r.BestLinkMbps)
	p("- **%s**: Kubernetes' own.\n", value.PlacementDefault)
	p("- **%s**: the sample scenario's numbers, which rank the slower worker first.\n", value.PlacementStatic)
	p("- **%s**: the specification's profile with live measurements, KNS-3's behaviour before NetworkCapacity.\n", value.PlacementUncounted)
	p("- **%s**: deploy/live's profile, with [NetworkCapacity](../scheduler/plugins/networkcapacity/README.md), "+
		"which counts a link as a capacity that fills.\n\n", value.PlacementCapacity)
	p("| Worker | Link |\n|---|---|\n")
	for _, n := range names(r.Links) {
		p("| `%s` | %s |\n", n, r.Links[n])
	}
	if line := linksLine(r); line != "" {
		p("\n%s\n", line)
	}
	p("\nThe clients of one placement wait for each other at the server and start together. " +
		"A placement's throughput is all its clients' bytes over the span from the first client's start to the last one's end. " +
		"A ratio compares a placement with the default scheduler's placement of the same trial; " +
		"the median is over the trials, the worst is the trial with the highest p99 ratio or the lowest throughput ratio.\n")
	for _, l := range r.Levels {
		p("\n### %s (%d clients, %g Mbit/s asked)\n\n", levelTitle(l.Name), l.Clients, l.DemandMbps)
		p("%d trials.\n\n", len(l.Trials))
		p("| Placement | Median small-call p99 | Median throughput | p99 vs default (median, worst) | Throughput vs default (median, worst) |\n|---|---:|---:|---:|---:|\n")
		for _, s := range l.Summary {
			p99Ratios, mbpsRatios := "—", "—"
			if defaultMeasured(l) {
				p99Ratios = fmt.Sprintf("%.2f×, %.2f×", s.MedianP99Ratio, s.WorstP99Ratio)
				mbpsRatios = fmt.Sprintf("%.2f×, %.2f×", s.MedianMbpsRatio, s.WorstMbpsRatio)
			}
			p("| %s | %.1f ms | %.1f Mbit/s | %s | %s |\n", s.Name, s.MedianP99Ms, s.MedianMbps, p99Ratios, mbpsRatios)
		}
	}
	p("\n## Goals\n\n")
	for _, line := range valueGoals(r) {
		p("- %s\n", line)
	}
	p("\n")
	if plotted {
		p("![Small-call p99 and throughput against load, per placement](%s)\n\n", png)
	}
	p("## Every trial\n\n")
	p("Ran is the placement's turn within its trial.\n")
	for _, l := range r.Levels {
		p("\n### %s, %d clients\n\n", levelTitle(l.Name), l.Clients)
		p("| Trial | Ran | Placement | Clients per node | Small-call p50 | Small-call p99 | Throughput |\n|---:|---:|---|---|---:|---:|---:|\n")
		for i, tr := range l.Trials {
			for _, pl := range tr.Placements {
				ran, nodes := turnIn(tr.Order, pl.Name), clientsPerNode(pl.Nodes)
				p("| %d | %s | %s | %s | %.1f ms | %.1f ms | %.1f Mbit/s |\n", i+1, ran, pl.Name, nodes, pl.P50Ms, pl.P99Ms, pl.Mbps)
			}
		}
	}
	p("\nWhat this does not show: one small kind cluster on one machine")
	if machine != "" {
		p(" (%s)", machine)
	}
	p("; a steady, known workload, with the links "+
		"shaped before the clients start, so the live picture had its windows to see them; %s.\n", text.limits)
	return b.String()
}

// linksLine says, from the links' caps, what an even spread and packing
// do at each level: the levels are chosen so that neither is free.
func linksLine(r value.Report) string {
	if len(r.LinkMbps) < 2 || r.BestLinkMbps <= 0 {
		return ""
	}
	slowest := slices.MinFunc(names(r.LinkMbps), func(a, b string) int { return cmp.Compare(r.LinkMbps[a], r.LinkMbps[b]) })
	slow := r.LinkMbps[slowest]
	var spreadOver, packOver []string
	for _, l := range r.Levels {
		// An even spread over two links puts half the clients on each.
		if float64(l.Clients/2)*r.ClientMbps > slow {
			spreadOver = append(spreadOver, l.Name)
		}
		if l.DemandMbps > r.BestLinkMbps {
			packOver = append(packOver, l.Name)
		}
	}
	list := func(levels []string) string {
		if len(levels) == 0 {
			return "no level"
		}
		return strings.Join(levels, ", ")
	}
	return fmt.Sprintf("The slower link's cap is %.0f %% of the best's (%g of %g Mbit/s). An even spread, the default scheduler's, "+
		"puts more than it carries on it at %s; packing every client onto the best link overloads that one at %s.",
		100*slow/r.BestLinkMbps, slow, r.BestLinkMbps, list(spreadOver), list(packOver))
}

// valueGoals judges the goals from the data, one line each.
func valueGoals(r value.Report) []string {
	byName := map[string]value.Level{}
	order := slices.Clone(levelNames)
	for _, l := range r.Levels {
		byName[l.Name] = l
		if !slices.Contains(order, l.Name) {
			order = append(order, l.Name)
		}
	}
	var lines []string
	for _, name := range order {
		l, ok := byName[name]
		measured := ok && defaultMeasured(l)
		line := fmt.Sprintf("%s, live with capacity against the default scheduler: ", levelTitle(name))
		met := false
		if measured {
			c := l.Summary[placementCapacity]
			met = c.MedianMbpsRatio >= 1 && c.MedianP99Ratio <= 1 && c.WorstMbpsRatio >= 0.95 && c.WorstP99Ratio <= 1.05
			line += fmt.Sprintf("throughput %s median, %s worst; p99 %s median, %s worst ",
				against(c.MedianMbpsRatio, 1), against(c.WorstMbpsRatio, 0.95), against(c.MedianP99Ratio, 1), against(c.WorstP99Ratio, 1.05))
		}
		lines = append(lines, line+"(goal: median throughput ≥ 1.0× and p99 ≤ 1.0×, no trial below 0.95× throughput or above 1.05× p99): "+verdict(measured, met))
	}

	line := "About equal to the best link's capacity, live with capacity against the default scheduler: "
	equal, ok := byName["equal"]
	equalMeasured, equalMet := ok && defaultMeasured(equal), false
	if equalMeasured {
		c := equal.Summary[placementCapacity]
		equalMet = c.MedianP99Ratio <= 0.55 && c.MedianMbpsRatio >= 1.22
		line += fmt.Sprintf("p99 %s, throughput %s (medians) ", against(c.MedianP99Ratio, 0.55), against(c.MedianMbpsRatio, 1.22))
	}
	lines = append(lines, line+"(goal: p99 ≤ 0.55×, throughput ≥ 1.22×, Diktyo's −45 % and +22 %): "+verdict(equalMeasured, equalMet))

	// Paired within a trial, so that a trial on a slower moment counts against both.
	line = "Twice the best link's capacity, live with capacity against live without: "
	var ratios []float64
	if twice, ok := byName["twice"]; ok {
		for _, tr := range twice.Trials {
			if without := tr.Placements[placementUncounted].Mbps; without > 0 {
				ratios = append(ratios, tr.Placements[placementCapacity].Mbps/without)
			}
		}
	}
	twiceMet := false
	if len(ratios) > 0 {
		m := medianOf(ratios)
		twiceMet = m >= 1.2
		line += fmt.Sprintf("throughput %s (median over %d trials) ", against(m, 1.2), len(ratios))
	}
	return append(lines, line+"(goal: ≥ 1.2×): "+verdict(len(ratios) > 0, twiceMet))
}

// against prints a ratio that a goal compares with bound: to two places,
// or to four when two would round it onto the bound and hide which side
// of it the ratio is on (0.9994× against 1.0 reads "1.00×" and fails).
func against(ratio, bound float64) string {
	if s := fmt.Sprintf("%.2f", ratio); s == fmt.Sprintf("%.2f", bound) && ratio != bound {
		return fmt.Sprintf("%.4f×", ratio)
	}
	return fmt.Sprintf("%.2f×", ratio)
}

// medianOf is the middle value, or the mean of the two middle ones.
func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// plotValue draws each placement's median p99 and throughput against the
// load, side by side.
func plotValue(r value.Report, dir, png string) (bool, error) {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		fmt.Fprintln(os.Stderr, "report: gnuplot not installed, no value plot")
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	levels := slices.SortedFunc(slices.Values(r.Levels), func(a, b value.Level) int { return cmp.Compare(a.DemandMbps, b.DemandMbps) })
	xLabel, load := "Demand (Mbit/s)", func(l value.Level) float64 { return l.DemandMbps }
	if r.BestLinkMbps > 0 {
		xLabel, load = "Demand / the best link's cap", func(l value.Level) float64 { return l.DemandMbps / r.BestLinkMbps }
	}
	// One data block per placement (gnuplot's index), one row per level.
	var rows strings.Builder
	for i := range value.Placements {
		for _, l := range levels {
			s := l.Summary[i]
			p99 := "NaN" // a log scale has no place for 0
			if s.MedianP99Ms > 0 {
				p99 = fmt.Sprint(s.MedianP99Ms)
			}
			fmt.Fprintf(&rows, "%g %s %g\n", load(l), p99, s.MedianMbps)
		}
		rows.WriteString("\n\n")
	}
	dat := filepath.Join(dir, "value.dat")
	if err := os.WriteFile(dat, []byte(rows.String()), 0o644); err != nil {
		return false, err
	}
	curves := func(column int) string {
		var out []string
		for i, name := range value.Placements {
			out = append(out, fmt.Sprintf("'%s' index %d using 1:%d with linespoints linewidth 2 title '%s'", dat, i, column, name))
		}
		return strings.Join(out, ", \\\n     ")
	}
	script := fmt.Sprintf(`set terminal pngcairo size 1200,500 font ',10'
set output '%s'
set multiplot layout 1,2
set xlabel "%s"
set key below height 1.5
set grid
set logscale y
set title 'Small-call p99 (ms, lower is better; median over trials)'
plot %s
unset logscale y
set yrange [0:*]
set title 'Throughput (Mbit/s, higher is better; median over trials)'
plot %s
unset multiplot
`, png, xLabel, curves(2), curves(3))
	gp := filepath.Join(dir, "value.gp")
	if err := os.WriteFile(gp, []byte(script), 0o644); err != nil {
		return false, err
	}
	if out, err := exec.Command("gnuplot", gp).CombinedOutput(); err != nil {
		return false, fmt.Errorf("gnuplot: %w\n%s", err, out)
	}
	return true, nil
}

func names[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// turnIn is a placement's turn within its trial, counted from 1, or "—"
// for a trial that recorded no order.
func turnIn(order []string, name string) string {
	if at := slices.Index(order, name); at >= 0 {
		return fmt.Sprint(at + 1)
	}
	return "—"
}

// clientsPerNode lists how many clients each node took, by node name.
func clientsPerNode(nodes map[string]int) string {
	var out []string
	for _, n := range names(nodes) {
		out = append(out, fmt.Sprintf("`%s` %d", n, nodes[n]))
	}
	return strings.Join(out, ", ")
}
