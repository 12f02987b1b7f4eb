package main

import (
	"fmt"
	"strings"
)

// besideGoal is the most CPU the work beside the scheduling loop may take,
// in percent of one core, and the least throughput the loop may keep with
// drift beside it.
const (
	besideGoal      = 2.0
	besideLoopGoal  = 0.98
	besideHeading   = "## 6. Beside the scheduling loop (Go benchmarks)"
	besideBenchmark = "BenchmarkBesideTheLoop/nodes=5000/pods="
)

// besideSection is section 6: what runs beside the scheduling loop on the
// leader at 5000 nodes, per second, and what drift costs the loop.
func (r *report) besideSection() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n\n", besideHeading)
	p("At 5000 nodes with 10000 and 50000 running KNS-3 pods (the default tolerations each), one simulator\n")
	p("window (30 s) of the work beside the loop, done back to back: 30 polls of the `Background` loop (one full\n")
	p("answer, 29 answered 304) and 6 publisher ticks (the status with its drift pass, encoded, compared, and\n")
	p("written to a fake API server when it changed). `cpu` is that work's time per second of running, in percent\n")
	p("of one core; `drift` the drift passes alone; `retained` the heap they keep (the simulation, the last\n")
	p("status, drift's pods). `BenchmarkDriftUpdate` is one drift pass.\n\n")
	p("| pods | cpu (%% of a core) | drift (%% of a core) | drift pass | retained (MB) | goal (≤ %.0f%%) | runs |\n|---|---|---|---|---|---|---|\n", besideGoal)
	for _, pods := range []int{10000, 50000} {
		name := fmt.Sprintf("%s%d", besideBenchmark, pods)
		cpu, n := r.goBench["cpu-%"].median(name)
		drift, _ := r.goBench["drift-cpu-%"].median(name)
		mb, _ := r.goBench["retained-MB"].median(name)
		pass, np := r.goBench["ns/op"].median(fmt.Sprintf("BenchmarkDriftUpdate/nodes=5000/pods=%d", pods))
		verdict := "—"
		if n > 0 {
			verdict = "met"
			if cpu > besideGoal {
				verdict = "**not met**"
			}
		}
		passCell := "—"
		if np > 0 {
			passCell = duration(pass)
		}
		p("| %d | %s | %s | %s | %s | %s | %d |\n", pods, cell(cpu, n, "%.2f"), cell(drift, n, "%.2f"), passCell, cell(mb, n, "%.1f"), verdict, n)
	}
	alone, n := r.goBench["cycles/s-alone"].median("BenchmarkLoopBesideDrift")
	with, _ := r.goBench["cycles/s-with-drift"].median("BenchmarkLoopBesideDrift")
	ratio, _ := r.goBench["with/alone"].median("BenchmarkLoopBesideDrift")
	p("\n`BenchmarkLoopBesideDrift`: the plugin's cycle in `Background` mode at 5000 nodes on one core\n")
	p("(`GOMAXPROCS` 1), for a publish interval (5 s) alone and with the drift pass of 50000 pods beside it.\n\n")
	if n == 0 {
		p("Not measured.\n")
		return b.String()
	}
	verdict := "met"
	if ratio < besideLoopGoal {
		verdict = "**not met**"
	}
	p("| cycles/s alone | cycles/s with drift | with / alone | goal (≥ %.2f) | runs |\n|---|---|---|---|---|\n", besideLoopGoal)
	p("| %.0f | %.0f | %.3f | %s | %d |\n", alone, with, ratio, verdict, n)
	return b.String()
}
