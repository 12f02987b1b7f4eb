package main

import (
	"fmt"
	"strings"
)

// overheadProfile is one profile of section 1, by its test case.
type overheadProfile struct {
	testCase, label string
	// goal is the least ratio to the default profile's throughput
	// accepted; 0 for the default profile itself.
	goal float64
}

// overheadProfiles are the profiles measured on one workload: the default
// profile, the shipped kns-3-scheduler profile (PerCycle mode), the
// one-scheduler install's (Background mode) and the live install's
// (PerCycle mode with NetworkCapacity).
var overheadProfiles = []overheadProfile{
	{"ProfileOverhead_Default", "default", 0},
	{"ProfileOverhead_KNS3", "kns-3-scheduler, PerCycle", 0.95},
	{"ProfileOverhead_KNS3Background", "kns-3-scheduler, Background", 1.0},
	{"ProfileOverhead_KNS3Live", "kns-3-scheduler, live", 0.95},
}

// overheadSection is section 1: each profile's throughput by node count,
// and each KNS-3 profile's ratio to the default one as the median of the
// runs' own ratios (the profiles run one after the other in each run).
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
	p("The measured pods share their labels, as a ReplicaSet's do. Throughput in pods/s; each ratio\n")
	p("to the default profile is the median of the runs' own ratios.\n\n")
	p("| nodes |")
	for _, pr := range overheadProfiles {
		p(" %s |", pr.label)
	}
	for _, pr := range overheadProfiles[1:] {
		p(" %s / default (goal ≥ %.2f) |", strings.TrimPrefix(pr.label, "kns-3-scheduler, "), pr.goal)
	}
	p(" runs |\n|---|")
	for range len(overheadProfiles)*2 - 1 {
		p("---|")
	}
	p("---|\n")
	for _, n := range nodeCounts {
		p("| %d |", n)
		runs := []string{}
		for _, pr := range overheadProfiles {
			v, k := r.throughput(fmt.Sprintf("%s/%dNodes", pr.testCase, n))
			p(" %s |", cell(v, k, "%.1f"))
			runs = append(runs, fmt.Sprint(k))
		}
		def := fmt.Sprintf("%s/%dNodes", overheadProfiles[0].testCase, n)
		for _, pr := range overheadProfiles[1:] {
			ratios := r.pairRatios(fmt.Sprintf("%s/%dNodes", pr.testCase, n), def)
			if len(ratios) == 0 {
				p(" — |")
				continue
			}
			m := medianRatio(ratios)
			verdict := "met"
			if m < pr.goal {
				verdict = "**not met**"
			}
			p(" %.2f (%s) |", m, verdict)
		}
		p(" %s |\n", strings.Join(runs, " / "))
	}
	for _, n := range nodeCounts {
		def := fmt.Sprintf("%s/%dNodes", overheadProfiles[0].testCase, n)
		var per []string
		for _, pr := range overheadProfiles[1:] {
			if ratios := r.pairRatios(fmt.Sprintf("%s/%dNodes", pr.testCase, n), def); len(ratios) > 0 {
				per = append(per, fmt.Sprintf("%s %s", strings.TrimPrefix(pr.label, "kns-3-scheduler, "), perRun(ratios)))
			}
		}
		if len(per) > 0 {
			p("\n%d nodes, per run: %s.\n", n, strings.Join(per, "; "))
		}
	}
	return b.String()
}

// cycleBenchmark reports whether a Go benchmark belongs to section 3, the
// plugin's cycle; the rest are section 6's.
func cycleBenchmark(name string) bool {
	for _, prefix := range []string{"BenchmarkScoreCycle", "BenchmarkDecode", "BenchmarkOf", "BenchmarkLinks", "BenchmarkCapacityPreScore", "BenchmarkPeersPreScore"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
