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
// without CustomBindPlugin at PostBind, which records the event.
func (r *report) eventSection() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n\n", eventHeading)
	p("SchedulingBasic at 5000 nodes on the `kns-3-scheduler` profile, with and without CustomBindPlugin at\n")
	p("PostBind, which records one `NetworkPlacement` event per pod (the rest of the profile is the same).\n")
	p("Throughput in pods/s; each run measures the pair one after the other (`tools/bench/run.sh full event`\n")
	p("re-measures this section alone).\n\n")
	on, non := r.throughput("ProfileOverhead_KNS3/5000Nodes")
	off, noff := r.throughput("ProfileOverhead_KNS3NoEvent/5000Nodes")
	p("| event | pods/s | runs |\n|---|---|---|\n")
	p("| on | %s | %d |\n| off | %s | %d |\n\n", cell(on, non, "%.1f"), non, cell(off, noff, "%.1f"), noff)
	rat := ratio(on, off, non, noff)
	p("On / off (medians): %s; per run: %s. ", rat, r.pairRatios("ProfileOverhead_KNS3/5000Nodes", "ProfileOverhead_KNS3NoEvent/5000Nodes"))
	switch {
	case non == 0 || noff == 0:
		p("No measurement.\n")
	case on/off >= eventGoal:
		p("Goal (at most 3%% fewer pods/s, on / off ≥ %.2f): met.\n", eventGoal)
	default:
		p("Goal (at most 3%% fewer pods/s, on / off ≥ %.2f): **not met**.\n", eventGoal)
	}
	return b.String()
}

// pairRatios lists a/b run by run, when both workloads ran equally often.
func (r *report) pairRatios(a, b string) string {
	as := r.perf["SchedulingThroughput|"+a+"|Average"]
	bs := r.perf["SchedulingThroughput|"+b+"|Average"]
	if len(as) == 0 || len(as) != len(bs) {
		return "—"
	}
	out := make([]string, len(as))
	for i := range as {
		out[i] = fmt.Sprintf("%.2f (%.1f / %.1f)", as[i]/bs[i], as[i], bs[i])
	}
	return strings.Join(out, ", ")
}

// writeEventReport puts the event's section into out/performance.md in
// place of the one there, leaving the other sections as they are: the
// event's two workloads run on their own (tools/bench/run.sh full event).
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
	return os.WriteFile(path, []byte(spliceSection(string(doc), eventHeading, r.eventSection())), 0o644)
}

// spliceSection replaces the section of doc starting with heading, up to
// the next "## " heading, with section; without one, section goes before
// "## Findings", or at the end.
func spliceSection(doc, heading, section string) string {
	if !strings.HasSuffix(section, "\n") {
		section += "\n"
	}
	start := strings.Index(doc, heading)
	if start < 0 {
		if f := strings.Index(doc, "\n## Findings"); f >= 0 {
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
