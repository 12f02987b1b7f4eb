package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// eventHeading starts the placement event's section of performance.md.
const eventHeading = "## 5. The placement event (scheduler_perf, 5000 nodes)"

// eventGoal is the least KNS3 / KNS3NoEvent throughput ratio accepted: the
// event may cost at most 3%.
const eventGoal = 0.97

// eventSection compares the kns-3-scheduler profile with the same profile
// without CustomBindPlugin at PostBind, which records the event, and with
// the events made but dropped before the API server. The three run one
// after the other in each run, in rotating order, and each ratio is judged
// on the median of the runs' own ratios: on this machine the runs differ
// more from each other than the parts of one run do.
func (r *report) eventSection() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n\n", eventHeading)
	p("SchedulingBasic at 5000 nodes on the `kns-3-scheduler` profile: as shipped (`on`: one `NetworkPlacement` event\n")
	p("per pod), without CustomBindPlugin at PostBind (`off`), and with CustomBindPlugin's events made and recorded\n")
	p("but dropped by the recorder's sink instead of written to the API server (`not written`). Throughput in pods/s.\n")
	p("Each run measures the three one after the other, in rotating order; each ratio is the median of the runs' own\n")
	p("ratios (`hack/bench/run.sh full event` re-measures this section alone).\n\n")
	const on, off, noSink = "ProfileOverhead_KNS3/5000Nodes", "ProfileOverhead_KNS3NoEvent/5000Nodes", "ProfileOverhead_KNS3NoSink/5000Nodes"
	p("| event | pods/s (median) | runs |\n|---|---|---|\n")
	for _, row := range []struct{ label, workload string }{{"on", on}, {"off", off}, {"not written", noSink}} {
		m, n := r.throughput(row.workload)
		p("| %s | %s | %d |\n", row.label, cell(m, n, "%.1f"), n)
	}
	p("\n")
	ratios := r.pairRatios(on, off)
	if len(ratios) == 0 {
		p("No paired measurement.\n")
		return b.String()
	}
	med := medianRatio(ratios)
	p("On / off per run: %s.\n\n", perRun(ratios))
	if made := r.pairRatios(noSink, off); len(made) > 0 {
		p("Not written / off per run: %s. Median **%.2f**: what making and recording the event costs the scheduler;\n", perRun(made), medianRatio(made))
		p("the rest of on / off is the API server and etcd storing one more object per pod, on the same 2 cores.\n\n")
	}
	verdict := "met"
	if med < eventGoal {
		verdict = "**not met**"
	}
	p("Median on / off: **%.2f**. Goal (at most 3%% fewer pods/s, on / off ≥ %.2f): %s.\n", med, eventGoal, verdict)
	return b.String()
}

func perRun(pairs [][2]float64) string {
	out := make([]string, len(pairs))
	for i, pr := range pairs {
		out[i] = fmt.Sprintf("%.2f (%.1f / %.1f)", pr[0]/pr[1], pr[0], pr[1])
	}
	return strings.Join(out, ", ")
}

// pairRatios pairs a's and b's throughputs run by run, when both
// workloads ran equally often.
func (r *report) pairRatios(a, b string) [][2]float64 {
	as := r.perf["SchedulingThroughput|"+a+"|Average"]
	bs := r.perf["SchedulingThroughput|"+b+"|Average"]
	if len(as) == 0 || len(as) != len(bs) {
		return nil
	}
	out := make([][2]float64, len(as))
	for i := range as {
		out[i] = [2]float64{as[i], bs[i]}
	}
	return out
}

// medianRatio is the median of the pairs' ratios.
func medianRatio(pairs [][2]float64) float64 {
	s := samples{}
	for _, pr := range pairs {
		s.add("r", pr[0]/pr[1])
	}
	m, _ := s.median("r")
	return m
}

// writeEventReport puts the event's section into out/performance.md in
// place of the one there, leaving the other sections as they are: the
// event's two workloads run on their own (hack/bench/run.sh full event).
func writeEventReport(in, out string) error {
	perf, err := parsePerf(filepath.Join(in, "perf"))
	if err != nil {
		return err
	}
	path := filepath.Join(out, "performance.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r := &report{perf: perf}
	return os.WriteFile(path, []byte(spliceSection(string(doc), eventHeading, r.eventSection(), "\n## Findings")), 0o644)
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
