//go:build e2e

package e2e

import (
	"flag"
	"slices"
	"strings"
	"time"

	"kns3.dev/kns3/test/perf/value"
)

// The value benchmark's flags (TestValue). Their defaults are the kind
// suite's brief run; make bench runs it in full (hack/bench/run.sh).
var (
	valueDuration  = flag.Duration("kns3.value-duration", 5*time.Second, "how long each placement's clients run in the value benchmark (make bench: 15s)")
	valueOut       = flag.String("kns3.value-out", "", "write the value benchmark's results into this directory, one JSON file per workload (make bench)")
	valueTrials    = flag.Int("kns3.value-trials", 1, "trials of every placement at each load level (make bench: 5)")
	valueLevels    = flag.String("kns3.value-levels", "twice", "load levels, comma-separated, of below, equal and twice (make bench: all three)")
	valueSplits    = flag.String("kns3.value-splits", "", "load levels, comma-separated, at which to run every split of the clients between the two links, each client held to its node, beside the default scheduler's placement (hack/bench/run.sh full splits: equal)")
	valueWorkloads = flag.String("kns3.value-workloads", value.WorkloadNetbench, "the clients' servers, comma-separated, of netbench (its own HTTP server) and redis, run one after the other (make bench: both)")
)

// parseValueFlags reads -kns3.value-levels, -kns3.value-splits and
// -kns3.value-workloads.
func (v *valueRun) parseValueFlags() (levels, splits []valueLevel, workloads []string) {
	v.t.Helper()
	levels, splits = v.parseLevels("-kns3.value-levels", *valueLevels), v.parseLevels("-kns3.value-splits", *valueSplits)
	if len(levels)+len(splits) == 0 {
		v.t.Fatal("-kns3.value-levels and -kns3.value-splits are both empty: nothing to run")
	}
	return levels, splits, v.parseWorkloads()
}

// parseWorkloads reads -kns3.value-workloads, and checks -kns3.value-trials.
func (c *cluster) parseWorkloads() []string {
	c.t.Helper()
	var workloads []string
	for _, w := range strings.Split(*valueWorkloads, ",") {
		w = strings.TrimSpace(w)
		if !slices.Contains(value.Workloads, w) {
			c.t.Fatalf("-kns3.value-workloads: unknown workload %q, want %s", w, strings.Join(value.Workloads, " or "))
		}
		workloads = append(workloads, w)
	}
	if *valueTrials < 1 {
		c.t.Fatalf("-kns3.value-trials=%d, want at least 1", *valueTrials)
	}
	return workloads
}

// parseLevels reads a comma-separated list of load levels from flag; an
// empty list is none.
func (v *valueRun) parseLevels(flag, list string) []valueLevel {
	v.t.Helper()
	var levels []valueLevel
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		lv, ok := valueLevelsByName[name]
		if !ok {
			v.t.Fatalf("%s: unknown level %q, want below, equal or twice", flag, name)
		}
		levels = append(levels, lv)
	}
	return levels
}
