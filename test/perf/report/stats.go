package main

import (
	"fmt"
	"math"
)

// Intervals. Each quantity is measured once per run, and two profiles'
// runs are paired: run i of each ran back to back, in a rotating order
// (hack/bench/run.sh), so a pair shares the machine's state, which drifts
// more between pairs than within one. A ratio is judged on the pairs' own
// ratios, and its 95 % interval is a t interval on their logarithms: a
// ratio is multiplicative (0.5 and 2 are equally far from 1), the logs
// of a few runs' ratios are near enough symmetric and normal, and a t
// interval is honest about a handful of runs, where a bootstrap over 7
// pairs would be too narrow (it cannot see beyond the pairs it has).

// estimate is a geometric mean with its 95 % interval; Lo and Hi are NaN
// for fewer than two values.
type estimate struct {
	Mean, Lo, Hi float64
	N            int
}

// logInterval is the geometric mean of values and its 95 % t interval,
// from the mean and standard error of their logarithms. Values that are
// not positive are left out.
func logInterval(values []float64) estimate {
	var logs []float64
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) {
			logs = append(logs, math.Log(v))
		}
	}
	e := estimate{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: len(logs)}
	if len(logs) == 0 {
		return e
	}
	mean := 0.0
	for _, l := range logs {
		mean += l
	}
	mean /= float64(len(logs))
	e.Mean = math.Exp(mean)
	if len(logs) < 2 {
		return e
	}
	ss := 0.0
	for _, l := range logs {
		ss += (l - mean) * (l - mean)
	}
	se := math.Sqrt(ss/float64(len(logs)-1)) / math.Sqrt(float64(len(logs)))
	half := tQuantile975(len(logs)-1) * se
	e.Lo, e.Hi = math.Exp(mean-half), math.Exp(mean+half)
	return e
}

// ratioInterval is logInterval of the pairs' own ratios, a / b.
func ratioInterval(pairs [][2]float64) estimate {
	ratios := make([]float64, 0, len(pairs))
	for _, p := range pairs {
		if p[1] > 0 {
			ratios = append(ratios, p[0]/p[1])
		}
	}
	return logInterval(ratios)
}

// resolved reports whether e has an interval.
func (e estimate) resolved() bool { return !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi) }

// halfWidth is how far the interval reaches from the mean, relative to
// it: 0.05 for an interval within ±5 %; +Inf without one.
func (e estimate) halfWidth() float64 {
	if !e.resolved() || e.Mean <= 0 {
		return math.Inf(1)
	}
	return max(e.Hi/e.Mean-1, 1-e.Lo/e.Mean)
}

// format is "0.95 [0.91, 0.99]" with digits decimals, the mean alone
// without an interval, "—" without a value.
func (e estimate) format(digits int) string {
	if e.N == 0 {
		return "—"
	}
	f := fmt.Sprintf("%%.%df", digits)
	if !e.resolved() {
		return fmt.Sprintf(f, e.Mean)
	}
	return fmt.Sprintf(f+" ["+f+", "+f+"]", e.Mean, e.Lo, e.Hi)
}

// Verdicts on a goal: met only when the whole interval clears it.
const (
	verdictMet         = "met"
	verdictNotMet      = "**not met**"
	verdictNotResolved = "not resolved"
)

// intervalVerdict judges e against goal: at least goal when atLeast, at most goal
// otherwise. Met when the interval lies wholly on the goal's side, not
// met when wholly on the other, not resolved when it straddles the goal
// or there is no interval.
func intervalVerdict(e estimate, goal float64, atLeast bool) string {
	if !e.resolved() {
		return verdictNotResolved
	}
	lo, hi := e.Lo, e.Hi
	if !atLeast {
		lo, hi, goal = -hi, -lo, -goal
	}
	switch {
	case lo >= goal:
		return verdictMet
	case hi < goal:
		return verdictNotMet
	}
	return verdictNotResolved
}

// tTable is the t distribution's 97.5th percentile for 1 to 30 degrees of
// freedom.
var tTable = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tQuantile975 is the t distribution's 97.5th percentile for df degrees of
// freedom; beyond the table, the normal's 1.96 plus the first term of the
// expansion in 1/df, within 0.004 of the exact value.
func tQuantile975(df int) float64 {
	switch {
	case df < 1:
		return math.NaN()
	case df <= len(tTable):
		return tTable[df-1]
	}
	return 1.96 + 2.37/float64(df)
}
