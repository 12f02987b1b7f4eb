package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// eventHeading starts the placement event's section of performance.md;
// eventHeadingPrefix finds it, whatever the node count it names.
const (
	eventHeading       = "## 5. The placement event (scheduler_perf)"
	eventHeadingPrefix = "## 5. The placement event"
)

// eventGoal is the least KNS3 / KNS3NoEvent throughput ratio accepted,
// and eventCPUGoal the most CPU-per-pod ratio: the event may cost at most
// 3%.
const (
	eventGoal    = 0.97
	eventCPUGoal = 1.03
)

// The placement event's three test cases: the profile as shipped, without
// CustomBindPlugin at PostBind, and with its events made but not written.
const (
	eventOn     = "ProfileOverhead_KNS3"
	eventOff    = "ProfileOverhead_KNS3NoEvent"
	eventNoSink = "ProfileOverhead_KNS3NoSink"
)

// eventNodes is the node count the event was measured at: the largest at
// which its off case ran (5000 in a full run, 10 in a smoke run).
func (r *report) eventNodes() int {
	if counts := nodeCountsOf(r.eventRuns, eventOff); len(counts) > 0 {
		return counts[len(counts)-1]
	}
	return 5000
}

// eventRatios are on / off and not written / off, throughput and CPU per
// pod (process and etcd together), pair by pair.
func (r *report) eventRatios() (tp, cpu, madeTP, madeCPU estimate) {
	n := r.eventNodes()
	on, off, noSink := workload(eventOn, n), workload(eventOff, n), workload(eventNoSink, n)
	e := &report{runs: r.eventRuns}
	return e.ratio(throughputKey(on), throughputKey(off)), e.ratio(cpuTotalKey(on), cpuTotalKey(off)),
		e.ratio(throughputKey(noSink), throughputKey(off)), e.ratio(cpuTotalKey(noSink), cpuTotalKey(off))
}

// widestEventRatio is the widest relative half-width of on / off's two
// ratios, and which it is: run.sh runs rounds until it is within
// ratioHalfWidthGoal.
func (r *report) widestEventRatio() (float64, string) {
	tp, cpu, _, _ := r.eventRatios()
	if tp.halfWidth() >= cpu.halfWidth() {
		return tp.halfWidth(), "on / off pods/s"
	}
	return cpu.halfWidth(), "on / off CPU per pod"
}

// eventSection compares the kns-3-scheduler profile with the same profile
// without CustomBindPlugin at PostBind, which records the event, and with
// the events made but dropped before the API server. The three run one
// after the other in each round, in rotating order, and each ratio is
// judged on the rounds' own ratios, with their interval (stats.go): the
// throughput, and the CPU time per pod of the process and etcd together,
// since the event's write costs the API server and etcd both.
func (r *report) eventSection() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	n := r.eventNodes()
	p("%s\n\n", eventHeading)
	p("SchedulingBasic at %d nodes on the `kns-3-scheduler` profile: as shipped (`on`: one `NetworkPlacement` event\n", n)
	p("per pod), without CustomBindPlugin at PostBind (`off`), and with CustomBindPlugin's events made and recorded\n")
	p("but dropped by the recorder's sink instead of written to the API server (`not written`). The three run in\n")
	p("rounds of their own, back to back in a rotating order, measured as section 1 says; CPU per pod here is the\n")
	p("process's and etcd's together, since the event's write costs both (`hack/bench/run.sh full event`\n")
	p("re-measures this section alone).\n\n")
	e := &report{runs: r.eventRuns}
	p("| event | pods/s | CPU ms per pod (process + etcd) | rounds |\n|---|---|---|---|\n")
	for _, row := range []struct{ label, testCase string }{{"on", eventOn}, {"off", eventOff}, {"not written", eventNoSink}} {
		w := workload(row.testCase, n)
		tp, cpu := e.estimate(throughputKey(w)), e.estimate(cpuTotalKey(w))
		p("| %s | %s | %s | %d |\n", row.label, tp.format(1), cpu.format(2), max(tp.N, cpu.N))
	}
	p("\n")
	tp, cpu, madeTP, madeCPU := r.eventRatios()
	if tp.N == 0 && cpu.N == 0 {
		p("No paired measurement.\n")
		return b.String()
	}
	if pairs := e.runs.pairs(throughputKey(workload(eventOn, n)), throughputKey(workload(eventOff, n))); len(pairs) > 0 {
		p("On / off per round: %s.\n\n", perRun(pairs))
	}
	p("| ratio | pods/s | goal | verdict | CPU per pod | goal | verdict |\n|---|---|---|---|---|---|---|\n")
	p("| on / off | %s | ≥ %.2f | %s | %s | ≤ %.2f | %s |\n", tp.format(3), eventGoal, intervalVerdict(tp, eventGoal, true),
		cpu.format(3), eventCPUGoal, intervalVerdict(cpu, eventCPUGoal, false))
	if madeTP.N > 0 || madeCPU.N > 0 {
		p("| not written / off | %s | | | %s | | |\n", madeTP.format(3), madeCPU.format(3))
		p("\n`not written / off` is what making and recording the event costs the scheduler; the rest of `on / off` is\n")
		p("the API server and etcd storing one more object per pod, on the same 2 cores.\n")
	}
	return b.String()
}

func perRun(pairs [][2]float64) string {
	out := make([]string, len(pairs))
	for i, pr := range pairs {
		out[i] = fmt.Sprintf("%.2f (%.1f / %.1f)", pr[0]/pr[1], pr[0], pr[1])
	}
	return strings.Join(out, ", ")
}

// writeEventReport puts the event's section into out/performance.md in
// place of the one there, leaving the other sections as they are: the
// event's two workloads run on their own (hack/bench/run.sh full event).
func writeEventReport(in, out string) error {
	r, err := readRuns(in)
	if err != nil {
		return err
	}
	path := filepath.Join(out, "performance.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(spliceSection(string(doc), eventHeadingPrefix, r.eventSection(), "\n## Findings")), 0o644)
}

// spliceSection replaces the section of doc starting with heading, up to
// the next "## " heading, with section; without one, section goes before
// the line starting with before ("\n## Findings"), or at the end.
func spliceSection(doc, heading, section, before string) string {
	if !strings.HasSuffix(section, "\n") {
		section += "\n"
	}
	start := strings.Index(doc, heading)
	if start < 0 {
		if f := strings.Index(doc, before); f >= 0 {
			return doc[:f+1] + section + doc[f:]
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + section
	}
	end := len(doc)
	if next := strings.Index(doc[start+len(heading):], "\n## "); next >= 0 {
		end = start + len(heading) + next + 1
		section += "\n"
	}
	return doc[:start] + section + doc[end:]
}
