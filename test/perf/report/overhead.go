package main

import (
	"fmt"
	"strings"
)

// overheadProfile is one profile of section 1, by its test case.
type overheadProfile struct {
	testCase, label string
	// throughputGoal is the least ratio to the default profile's
	// throughput accepted; 0 for the default profile itself.
	throughputGoal float64
	// cpuGoal is the most ratio to the default profile's CPU time per pod
	// accepted; 0 for none.
	cpuGoal float64
	// preScore are the KNS-3 plugins whose PreScore the profile runs.
	preScore []string
}

// The plugins whose PreScore section 1 times.
const (
	customScorePlugin = "CustomScorePlugin"
	networkCapacity   = "NetworkCapacity"
)

// overheadProfiles are the profiles measured on one workload: the default
// profile, the shipped kns-3-scheduler profile (PerCycle mode), the
// one-scheduler install's (Background mode) and the live install's
// (PerCycle mode with NetworkCapacity).
var overheadProfiles = []overheadProfile{
	{"ProfileOverhead_Default", "default", 0, 0, nil},
	{"ProfileOverhead_KNS3", "kns-3-scheduler, PerCycle", 0.95, 0, []string{customScorePlugin}},
	{"ProfileOverhead_KNS3Background", "kns-3-scheduler, Background", 1.0, 1.05, []string{customScorePlugin}},
	{"ProfileOverhead_KNS3Live", "kns-3-scheduler, live", 0.95, 0, []string{customScorePlugin, networkCapacity}},
}

// preScoreGoal is the most a KNS-3 plugin's PreScore may take per cycle,
// median, in ms, at preScoreGoalNodes nodes.
const (
	preScoreGoal      = 0.3
	preScoreGoalNodes = 5000
)

// ratioHalfWidthGoal is the widest a ratio's 95 % interval should reach
// from it: run.sh adds rounds until every ratio of a size is within it.
const ratioHalfWidthGoal = 0.05

func workload(testCase string, nodes int) string { return fmt.Sprintf("%s/%dNodes", testCase, nodes) }

func throughputKey(w string) string { return "SchedulingThroughput|" + w + "|Average" }
func cpuKey(w string) string        { return "CPUPerPod|" + w + "|Process" }
func etcdKey(w string) string       { return "CPUPerPod|" + w + "|Etcd" }
func cpuTotalKey(w string) string   { return "CPUPerPod|" + w + "|Total" }

// preScoreKey is the median of plugin's PreScore calls in w's measured
// phase, as the benchmark times them (test/perf/prescore_test.go says why
// not upstream's histogram).
func preScoreKey(w, plugin string) string { return "PreScore:" + plugin + "|" + w + "|Perc50" }

// addTotals adds each run's CPU time per pod of the process and etcd
// together, under cpuTotalKey.
func addTotals(p perfData) {
	for key, runs := range p {
		w, ok := strings.CutPrefix(key, "CPUPerPod|")
		if !ok {
			continue
		}
		if w, ok = strings.CutSuffix(w, "|Process"); !ok {
			continue
		}
		for run, process := range runs {
			if etcd, ok := p[etcdKey(w)][run]; ok {
				p.add(cpuTotalKey(w), run, process+etcd)
			}
		}
	}
}

func (r *report) estimate(key string) estimate { return logInterval(r.runs.values(key)) }

func (r *report) ratio(a, b string) estimate { return ratioInterval(r.runs.pairs(a, b)) }

// overheadSection is section 1: each profile's throughput and CPU time
// per pod by node count, each KNS-3 profile's ratios to the default
// profile with their intervals, judged against the goals, and the KNS-3
// plugins' PreScore.
func (r *report) overheadSection() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## 1. Profile overhead (scheduler_perf, SchedulingBasic)\n\n")
	p("Upstream's harness (`test/integration/scheduler_perf` of Kubernetes v1.37.2) runs the same workload\n")
	p("on the default profile and on the `kns-3-scheduler` profile, whose pods the simulator stub\n")
	p("(on loopback, a score and a bandwidth for every node) scores: in `PerCycle` mode, as shipped (`deploy/`);\n")
	p("in `Background` mode, as the one-scheduler install ships it (`deploy/control-plane/`, where opportunistic\n")
	p("batching places runs of pods); and as the live install ships it (`deploy/live/`: `PerCycle` mode, and\n")
	p("`NetworkCapacity` counting the pods on each node against its bandwidth; no pod batched, as in `PerCycle`).\n")
	p("The measured pods share their labels, as a ReplicaSet's do.\n\n")
	p("**Method.** The profiles run in rounds: in each round the four run once each at one node count, back to\n")
	p("back, in an order that rotates from round to round. Beside the harness's throughput (pods/s), each run\n")
	p("meters its CPU time per scheduled pod, from the first measured pod's creation to the last one's\n")
	p("scheduling: the test process's (getrusage), which holds the scheduler, the API server and the stub\n")
	p("(scheduler_perf runs them in one process) and the client creating the pods, and etcd's (a child\n")
	p("process), apart. The API server's and etcd's work per pod is the same under every profile (the pod's\n")
	p("creation, its binding, upstream's `Scheduled` event), but for the placement event of the KNS-3 profiles\n")
	p("(section 5), so the difference between two profiles' CPU time per pod is the scheduler's, the event's\n")
	p("and the stub's. CPU time, unlike pods/s, hardly moves with what else runs on the machine. Each value is\n")
	p("the geometric mean of the rounds, each ratio that of the rounds' own ratios (two profiles' runs of one\n")
	p("round are a pair), with its 95 %% interval in brackets: a t interval on the logarithms. A goal is met only\n")
	p("when the whole interval clears it, **not met** when the whole interval misses it, and not resolved\n")
	p("otherwise.\n\n")
	p("| nodes | profile | pods/s | CPU ms per pod | etcd CPU ms per pod | stub answers per pod (full / 304) | rounds |\n|---|---|---|---|---|---|---|\n")
	for _, n := range r.nodeCounts() {
		for _, pr := range overheadProfiles {
			w := workload(pr.testCase, n)
			tp, cpu := r.estimate(throughputKey(w)), r.estimate(cpuKey(w))
			p("| %d | %s | %s | %s | %s | %s | %d |\n", n, pr.label, tp.format(1), cpu.format(2),
				r.estimate(etcdKey(w)).format(2), r.stubAnswers(w), max(tp.N, cpu.N))
		}
	}
	p("\nEach KNS-3 profile against the default profile, pair by pair:\n\n")
	p("| nodes | profile | pods/s ratio | goal | verdict | CPU per pod ratio | goal | verdict |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range r.nodeCounts() {
		def := workload(overheadProfiles[0].testCase, n)
		for _, pr := range overheadProfiles[1:] {
			w := workload(pr.testCase, n)
			tp, cpu := r.ratio(throughputKey(w), throughputKey(def)), r.ratio(cpuKey(w), cpuKey(def))
			cpuGoal, cpuVerdict := "—", "—"
			if pr.cpuGoal > 0 {
				cpuGoal, cpuVerdict = fmt.Sprintf("≤ %.2f", pr.cpuGoal), intervalVerdict(cpu, pr.cpuGoal, false)
			}
			p("| %d | %s | %s | ≥ %.2f | %s | %s | %s | %s |\n", n, shortLabel(pr), tp.format(2), pr.throughputGoal,
				intervalVerdict(tp, pr.throughputGoal, true), cpu.format(2), cpuGoal, cpuVerdict)
		}
	}
	for _, n := range r.nodeCounts() {
		def := workload(overheadProfiles[0].testCase, n)
		var per []string
		for _, pr := range overheadProfiles[1:] {
			if pairs := r.runs.pairs(throughputKey(workload(pr.testCase, n)), throughputKey(def)); len(pairs) > 0 {
				per = append(per, fmt.Sprintf("%s %s", shortLabel(pr), perRun(pairs)))
			}
		}
		if len(per) > 0 {
			p("\n%d nodes, pods/s per round: %s.\n", n, strings.Join(per, "; "))
		}
	}
	b.WriteString(r.preScoreTable())
	return b.String()
}

// preScoreTable is the KNS-3 plugins' PreScore, the median cycle of each
// run's measured phase, judged at preScoreGoalNodes nodes.
func (r *report) preScoreTable() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\nThe KNS-3 plugins' PreScore, ms per cycle: the median of each run's measured cycles, every one timed by\n")
	p("the benchmark (upstream's `scheduler_plugin_execution_duration_seconds` drops most of its samples at these\n")
	p("sizes and keeps the slow ones: `test/perf/prescore_test.go`), over the rounds. The stub's answer changes at\n")
	p("most once in its 30 s window, so nearly every cycle's answer is unchanged (a 304; the full answers are\n")
	p("counted above). Goal at %d nodes: at most %.1f ms.\n\n", preScoreGoalNodes, preScoreGoal)
	p("| nodes | profile | plugin | PreScore p50 (ms) | verdict |\n|---|---|---|---|---|\n")
	for _, n := range r.nodeCounts() {
		for _, pr := range overheadProfiles[1:] {
			for _, plugin := range pr.preScore {
				e := r.estimate(preScoreKey(workload(pr.testCase, n), plugin))
				v := "—"
				if n == preScoreGoalNodes {
					v = intervalVerdict(e, preScoreGoal, false)
				}
				p("| %d | %s | %s | %s | %s |\n", n, shortLabel(pr), plugin, e.format(3), v)
			}
		}
	}
	return b.String()
}

// stubAnswers is the stub's full and 304 answers per measured pod, as
// "0.00 / 1.00"; "—" for a profile that does not ask it.
func (r *report) stubAnswers(w string) string {
	full, n := r.runs.median("StubAnswers|" + w + "|Full")
	notModified, _ := r.runs.median("StubAnswers|" + w + "|NotModified")
	pods, _ := r.runs.median("CPUPerPod|" + w + "|Pods")
	if n == 0 || full+notModified == 0 || pods == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f / %.2f", full/pods, notModified/pods)
}

func shortLabel(pr overheadProfile) string { return strings.TrimPrefix(pr.label, "kns-3-scheduler, ") }

// widestRatio is the widest relative half-width of the KNS-3 profiles'
// ratios to the default profile at nodes, throughput and CPU per pod,
// and which it is: run.sh runs rounds until it is within
// ratioHalfWidthGoal.
func (r *report) widestRatio(nodes int) (float64, string) {
	widest, which := -1.0, ""
	def := workload(overheadProfiles[0].testCase, nodes)
	for _, pr := range overheadProfiles[1:] {
		w := workload(pr.testCase, nodes)
		for _, q := range []struct {
			name string
			key  func(string) string
		}{{"pods/s", throughputKey}, {"CPU per pod", cpuKey}} {
			if h := r.ratio(q.key(w), q.key(def)).halfWidth(); h > widest {
				widest, which = h, shortLabel(pr)+" "+q.name
			}
		}
	}
	return widest, which
}

// cycleBenchmark reports whether a Go benchmark belongs to section 3, the
// plugin's cycle; the rest are section 6's.
func cycleBenchmark(name string) bool {
	for _, prefix := range []string{"BenchmarkScoreCycle", "BenchmarkPreScore", "BenchmarkDecode", "BenchmarkOf", "BenchmarkLinks", "BenchmarkCapacity", "BenchmarkPeersPreScore"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
