// Command report turns the outputs of `make bench` (Go benchmarks,
// scheduler_perf DataItems, wrk runs) into docs/performance.md and a plot of
// throughput against node count, and the reliability benchmark's JSON lines
// into docs/reliability.md and its plot, each number the median of the runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "_output/bench", "directory make bench wrote to")
	out := flag.String("out", "docs", "directory for performance.md, reliability.md and their plots")
	machine := flag.String("machine", "", "one line describing the machine")
	command := flag.String("command", "make bench", "the command that reproduces the numbers")
	findings := flag.String("findings", "docs/performance-findings.md", "hand-written analysis appended to the report, if the file exists")
	reports := flag.String("report", "all", "which reports to write: all (performance, and reliability, value, probe accuracy and peers value when <in>/reliability.jsonl, <in>/value*.json, <in>/accuracy.json and <in>/value-peers/*.json exist), performance, reliability, value, accuracy, value-peers, splits (the splits' section of existing value reports) or event (the placement event's section of an existing performance.md)")
	converged := flag.String("converged", "", "do not write reports: exit 0 when every ratio of section 1 at this node count (or of the placement event, for \"event\") has a 95 % interval within ±5 %, 3 otherwise (hack/bench/run.sh adds rounds until then)")
	flag.Parse()
	if *converged != "" {
		os.Exit(checkConverged(*in, *converged))
	}
	var err error
	switch *reports {
	case "all", "performance":
		err = run(*in, *out, *machine, *command, *findings)
	case "reliability", "value", "accuracy", "value-peers":
	case "splits":
		err = writeSplitsReports(*in, *out)
	case "event":
		err = writeEventReport(*in, *out)
	default:
		err = fmt.Errorf("-report %q: want all, performance, reliability, value, accuracy, value-peers, splits or event", *reports)
	}
	if err == nil && (*reports == "all" || *reports == "reliability") {
		rel := filepath.Join(*in, "reliability.jsonl")
		if _, statErr := os.Stat(rel); statErr == nil || *reports == "reliability" {
			err = writeReliability(rel, filepath.Join(*in, "plot"), *out, *machine, *command)
		} else {
			fmt.Fprintf(os.Stderr, "report: no %s, no reliability report\n", rel)
		}
	}
	if err == nil && (*reports == "all" || *reports == "value") {
		err = writeValues(*in, filepath.Join(*in, "plot"), *out, *machine, *command, *reports == "value")
	}
	// The accuracy benchmark runs in the value step, on the same cluster.
	if err == nil && (*reports == "all" || *reports == "value" || *reports == "accuracy") {
		acc := filepath.Join(*in, "accuracy.json")
		if _, statErr := os.Stat(acc); statErr == nil || *reports == "accuracy" {
			err = writeAccuracy(acc, *out, *machine, *command)
		} else {
			fmt.Fprintf(os.Stderr, "report: no %s, no probe accuracy report\n", acc)
		}
	}
	if err == nil && (*reports == "all" || *reports == "value-peers") {
		err = writeValuePeers(*in, filepath.Join(*in, "plot"), *out, *machine, *command, *reports == "value-peers")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		os.Exit(1)
	}
}

func run(in, out, machine, command, findings string) error {
	goBench, err := parseGoBench(filepath.Join(in, "go-bench.txt"))
	if err != nil {
		return err
	}
	r, err := readRuns(in)
	if err != nil {
		return err
	}
	if r.load, err = parseLoad(filepath.Join(in, "load")); err != nil {
		return err
	}
	r.goBench = goBench
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	plotted, err := r.plot(filepath.Join(in, "plot"), filepath.Join(out, "performance.png"))
	if err != nil {
		return err
	}
	md := r.markdown(machine, command, plotted)
	if extra, err := os.ReadFile(findings); err == nil {
		md += "\n" + findingsSection(string(extra))
	}
	return os.WriteFile(filepath.Join(out, "performance.md"), []byte(md), 0o644)
}

// checkConverged prints the widest interval of section 1's ratios at
// the node count which says, or of the placement event's for "event", and
// returns 0 when it is within ratioHalfWidthGoal, 3 when not, 1 on an
// error.
func checkConverged(in, which string) int {
	r, err := readRuns(in)
	if err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		return 1
	}
	var widest float64
	var what string
	if which == "event" {
		widest, what = r.widestEventRatio()
	} else {
		nodes, err := strconv.Atoi(which)
		if err != nil {
			fmt.Fprintf(os.Stderr, "report: -converged %q: want a node count or \"event\"\n", which)
			return 1
		}
		widest, what = r.widestRatio(nodes)
	}
	fmt.Printf("%s: the widest ratio interval reaches ±%.1f %% (%s)\n", which, 100*widest, what)
	if widest <= ratioHalfWidthGoal {
		return 0
	}
	return 3
}

// readRuns reads scheduler_perf's outputs under in: the profiles' and the
// hostname cases' (perf) and the placement event's (perf-event).
func readRuns(in string) (*report, error) {
	runs, err := parsePerf(filepath.Join(in, "perf"))
	if err != nil {
		return nil, err
	}
	eventRuns, err := parsePerf(filepath.Join(in, "perf-event"))
	if err != nil {
		return nil, err
	}
	addTotals(runs)
	addTotals(eventRuns)
	return &report{runs: runs, eventRuns: eventRuns}, nil
}

// findingsSection is the findings file as the report appends it: from its
// first section heading ("## ") on, leaving out the title and the note
// that say, in the file itself, what it is.
func findingsSection(file string) string {
	if strings.HasPrefix(file, "## ") {
		return file
	}
	if i := strings.Index(file, "\n## "); i >= 0 {
		return file[i+1:]
	}
	return file
}

type report struct {
	goBench map[string]samples
	// runs are scheduler_perf's measurements, run by run: the profiles'
	// and the hostname cases'; eventRuns the placement event's.
	runs, eventRuns perfData
	load            samples
}

// nodeCounts are the node counts of section 1's workloads when none was
// measured; otherwise those measured (a smoke run's are 10).
var nodeCounts = []int{500, 1000, 5000}

// nodeCounts are the node counts at which the default profile's workload
// ran, in order, or the package's nodeCounts when it ran at none.
func (r *report) nodeCounts() []int {
	counts := nodeCountsOf(r.runs, overheadProfiles[0].testCase)
	if len(counts) == 0 {
		return nodeCounts
	}
	return counts
}

// nodeCountsOf are the node counts at which testCase's workloads measured
// a throughput or a CPU time (a smoke run's 10-node workloads are too
// short for a throughput), in order.
func nodeCountsOf(p perfData, testCase string) []int {
	var counts []int
	for key := range p {
		for _, metric := range []string{"SchedulingThroughput|", "CPUPerPod|"} {
			rest, ok := strings.CutPrefix(key, metric+testCase+"/")
			var n int
			if _, err := fmt.Sscanf(rest, "%dNodes|", &n); ok && err == nil && !slices.Contains(counts, n) {
				counts = append(counts, n)
			}
		}
	}
	slices.Sort(counts)
	return counts
}

// throughput is the median average throughput of a workload, pods/s.
func (r *report) throughput(workload string) (float64, int) {
	return r.runs.median(throughputKey(workload))
}

func (r *report) extensionPoint(workload, ep, bucket string) (float64, int) {
	return r.runs.median("scheduler_framework_extension_point_duration_seconds:" + ep + "|" + workload + "|" + bucket)
}

func cell(v float64, n int, format string) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

// ratio is a / b of two medians, for the comparisons without paired runs.
func ratio(a, b float64, na, nb int) string {
	if na == 0 || nb == 0 || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func (r *report) markdown(machine, command string, plotted bool) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Performance\n\n")
	p("Generated by `test/perf/report` from the outputs of `%s`. Sections 1 and 5 give geometric means over\n", command)
	p("interleaved rounds with 95 %% intervals and judge each goal by its interval (section 1 says how); the other\n")
	p("numbers are the median of the runs counted beside them.\n\n")
	if machine != "" {
		p("Machine: %s\n\n", machine)
	}
	if plotted {
		p("![Throughput and CPU time per pod against node count](performance.png)\n\n")
	}

	b.WriteString(r.overheadSection())

	p("\n## 2. The hostname fast path (`InterPodAffinityHostnameFastPath`)\n\n")
	p("Default profile; required pod affinity or anti-affinity with `topologyKey: kubernetes.io/hostname`,\n")
	p("and a pod with both a hostname and a zone term, where the gate should change nothing. PreFilter\n")
	p("latency from `scheduler_framework_extension_point_duration_seconds`, in ms.\n\n")
	p("| workload | nodes | gate | pods/s | on / off | PreFilter p50 | PreFilter p99 | runs |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range []string{"HostnameAffinity", "HostnameAntiAffinity", "HostnameAndZoneAffinity"} {
		for _, n := range []int{1000, 5000} {
			offName := fmt.Sprintf("%s/%dNodes_GateOff", c, n)
			onName := fmt.Sprintf("%s/%dNodes_GateOn", c, n)
			off, noff := r.throughput(offName)
			on, non := r.throughput(onName)
			for _, g := range []struct {
				gate, name string
				tp         float64
				runs       int
			}{{"off", offName, off, noff}, {"on", onName, on, non}} {
				p50, n50 := r.extensionPoint(g.name, "PreFilter", "Perc50")
				p99, n99 := r.extensionPoint(g.name, "PreFilter", "Perc99")
				rat := ""
				if g.gate == "on" {
					rat = ratio(on, off, non, noff)
				}
				p("| %s | %d | %s | %s | %s | %s | %s | %d |\n", c, n, g.gate, cell(g.tp, g.runs, "%.1f"), rat,
					cell(p50, n50, "%.3f"), cell(p99, n99, "%.3f"), g.runs)
			}
		}
	}

	p("\n## 3. PreScore + Score + NormalizeScore (Go benchmarks, `-benchmem`)\n\n")
	p("One scheduling cycle of the plugin against a loopback simulator: the GET, the decode, Score for\n")
	p("every node, NormalizeScore. `etag=true`: the simulator tags its answer and the plugin asks\n")
	p("If-None-Match, so an unchanged answer is a 304 and the previous cycle's decoded results are reused;\n")
	p("`etag=false`: a simulator that ignores conditional requests, every cycle decodes the full body.\n\n")
	p("`Of` is the placement event's ranking of one pod (5000 scored nodes, 500 feasible), in the binding cycle.\n")
	p("`Links` is reading a live answer's links (bandwidth, its interval, link use), which the first cycle on a new answer\n")
	p("pays: `fast` is the one-pass reading it takes, `slow` encoding/json's, which it falls back to for an odd body, and\n")
	p("`links` the whole of it, with the ties worked out.\n")
	p("`CapacityPreScore` is NetworkCapacity's PreScore over every node, 10 pods on each, on an answer already decoded:\n")
	p("`interval=true` with bandwidths served with 95 %% intervals, as the live simulator serves them (their ties are worked\n")
	p("out once per answer, when it is decoded), `interval=false` without, as a scenario serves them. `CapacityCycle` is\n")
	p("its PreScore, Score and NormalizeScore together over 5000 nodes with no pod, ten settled ones or ten starting ones\n")
	p("each. `PreScore` is CustomScorePlugin's PreScore alone on an unchanged answer (a 304): 500 nodes is what a cycle\n")
	p("of a 5000-node cluster scores, the rest being left unsearched by upstream's `percentageOfNodesToScore`.\n\n")
	p("`PeersPreScore` is NetworkPeers' PreScore at 5000 nodes, two pods on each, for a pod without peers (`peers=0`) and\n")
	p("for one whose peers are 1, 10 or 100 pods on as many nodes, over 500 or 5000 feasible nodes, one after the other;\n")
	p("`pairs` is reading an answer's 5000 coordinates, once per answer.\n\n")
	p("| benchmark | time/op | B/op | allocs/op | runs |\n|---|---|---|---|---|\n")
	ns := r.goBench["ns/op"]
	for _, name := range sortedKeys(ns) {
		if !cycleBenchmark(name) {
			continue
		}
		t, n := ns.median(name)
		bop, _ := r.goBench["B/op"].median(name)
		allocs, _ := r.goBench["allocs/op"].median(name)
		p("| %s | %s | %.0f | %.0f | %d |\n", strings.TrimPrefix(name, "Benchmark"), duration(t), bop, allocs, n)
	}

	p("\n## 4. The simulator stub under load\n\n")
	p("`wrk` from a second process on loopback against `/simulate` serving 5000 nodes: full answers, and\n")
	p("conditional requests answered 304.\n\n")
	p("| request | requests/s | p99 latency (ms) | runs |\n|---|---|---|---|\n")
	for _, name := range []string{"full-5000", "conditional-5000"} {
		rps, n := r.load.median(name + "|rps")
		p99, _ := r.load.median(name + "|p99ms")
		p("| %s | %s | %s | %d |\n", name, cell(rps, n, "%.0f"), cell(p99, n, "%.2f"), n)
	}
	p("\n%s", r.eventSection())
	p("\n%s", r.besideSection())
	p("\n%s", r.peersSection())
	return b.String()
}

func duration(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// profileData is the gnuplot data of one quantity of section 1 (key of a
// workload): a row per node count, and for each profile its geometric
// mean and the ends of its interval (the mean itself without one); false
// when no profile measured it.
func (r *report) profileData(key func(string) string) (string, bool) {
	var rows strings.Builder
	measured := false
	for _, n := range r.nodeCounts() {
		fmt.Fprintf(&rows, "%d", n)
		for _, pr := range overheadProfiles {
			e := r.estimate(key(workload(pr.testCase, n)))
			switch {
			case e.N == 0:
				rows.WriteString(" NaN NaN NaN")
			case !e.resolved():
				measured = true
				fmt.Fprintf(&rows, " %g %g %g", e.Mean, e.Mean, e.Mean)
			default:
				measured = true
				fmt.Fprintf(&rows, " %g %g %g", e.Mean, e.Lo, e.Hi)
			}
		}
		rows.WriteString("\n")
	}
	return rows.String(), measured
}

// plotProfiles writes the gnuplot data of section 1's profiles and adds
// their panels to script: throughput and CPU time per pod against node
// count, each with its interval. It returns how many panels it added.
func (r *report) plotProfiles(dir string, script *strings.Builder) (int, error) {
	plots := 0
	for _, panel := range []struct {
		title, ylabel, file string
		key                 func(string) string
	}{
		{"Profile overhead: throughput", "pods/s (geometric mean, 95 % interval)", "profiles-throughput.dat", throughputKey},
		{"Profile overhead: CPU time per pod", "ms per pod, process (geometric mean, 95 % interval)", "profiles-cpu.dat", cpuKey},
	} {
		data, ok := r.profileData(panel.key)
		if !ok {
			continue
		}
		path := filepath.Join(dir, panel.file)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return plots, err
		}
		var lines []string
		for i, pr := range overheadProfiles {
			// Each profile a little apart along x, so that the intervals
			// at one node count do not hide each other.
			shift := 1 + 0.04*(float64(i)-float64(len(overheadProfiles)-1)/2)
			lines = append(lines, fmt.Sprintf("'%s' using ($1*%g):%d:%d:%d with yerrorlines title '%s'", path, shift, 3*i+2, 3*i+3, 3*i+4, pr.label))
		}
		fmt.Fprintf(script, "set title '%s'\nset ylabel '%s'\nset key below\nplot %s\nset key bottom left\n",
			panel.title, panel.ylabel, strings.Join(lines, ", "))
		plots++
	}
	return plots, nil
}

// plot writes gnuplot data and script and renders the PNG when gnuplot is
// installed; it reports whether the PNG was written.
func (r *report) plot(dir, png string) (bool, error) {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		fmt.Fprintln(os.Stderr, "report: gnuplot not installed, no plot")
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	type pair struct{ title, a, b, la, lb string }
	pairs := []pair{
		{"Hostname affinity", "HostnameAffinity/%dNodes_GateOff", "HostnameAffinity/%dNodes_GateOn", "gate off", "gate on"},
		{"Hostname anti-affinity", "HostnameAntiAffinity/%dNodes_GateOff", "HostnameAntiAffinity/%dNodes_GateOn", "gate off", "gate on"},
		{"Hostname + zone affinity", "HostnameAndZoneAffinity/%dNodes_GateOff", "HostnameAndZoneAffinity/%dNodes_GateOn", "gate off", "gate on"},
	}
	plots := 0
	var script strings.Builder
	fmt.Fprintf(&script, "set terminal pngcairo size 1500,900 font ',10'\nset output '%s'\nset multiplot layout 2,3\n", png)
	fmt.Fprintf(&script, "set logscale x\nset xlabel 'nodes'\nset key bottom left\nset yrange [0:*]\nset offsets graph 0.05, graph 0.05, 0, 0\n")
	n, err := r.plotProfiles(dir, &script)
	if err != nil {
		return false, err
	}
	plots += n
	fmt.Fprintf(&script, "set ylabel 'pods/s (median)'\n")
	for i, pr := range pairs {
		data := filepath.Join(dir, fmt.Sprintf("pair%d.dat", i))
		var rows strings.Builder
		for _, n := range nodeCounts {
			a, na := r.throughput(fmt.Sprintf(pr.a, n))
			b, nb := r.throughput(fmt.Sprintf(pr.b, n))
			if na == 0 || nb == 0 {
				continue
			}
			fmt.Fprintf(&rows, "%d %g %g\n", n, a, b)
		}
		if rows.Len() == 0 {
			continue
		}
		if err := os.WriteFile(data, []byte(rows.String()), 0o644); err != nil {
			return false, err
		}
		plots++
		fmt.Fprintf(&script, "set title '%s'\nplot '%s' using 1:2 with linespoints title '%s', '' using 1:3 with linespoints title '%s'\n",
			pr.title, data, pr.la, pr.lb)
	}
	script.WriteString("unset multiplot\n")
	if plots == 0 {
		fmt.Fprintln(os.Stderr, "report: no workload at 500-5000 nodes, no plot")
		return false, nil
	}
	gp := filepath.Join(dir, "performance.gp")
	if err := os.WriteFile(gp, []byte(script.String()), 0o644); err != nil {
		return false, err
	}
	if out, err := exec.Command("gnuplot", gp).CombinedOutput(); err != nil {
		return false, fmt.Errorf("gnuplot: %w\n%s", err, out)
	}
	return true, nil
}
