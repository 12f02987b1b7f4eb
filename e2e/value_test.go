//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/test/perf/value"
)

// Each client fetches clientObjectBytes clientObjectsPerSecond times a
// second, clientMbps, and declares it in kubernetes.io/ingress-bandwidth.
const (
	clientObjectBytes      = 200_000
	clientObjectsPerSecond = 10
	clientMbps             = clientObjectBytes * 8 * clientObjectsPerSecond / 1e6
	// clientPingInterval is how often each client makes a small call: 750
	// calls in a 15 s run, so that a p99 is not one client's worst call or
	// two.
	clientPingInterval = 20 * time.Millisecond
)

// The value benchmark's links: the plain worker's is the best, the
// rigorous worker's a quarter of it, so that an even spread overloads the
// slower link at every level (at half, the default scheduler's even spread
// of the middle level fits both links, and no placement can beat it), and
// packing everything onto the best link overloads that one at the top
// level. The sample scenario, typed in long ago, still ranks the rigorous
// worker first.
var (
	bestLink = netshape.Shape{RateMbit: 100}
	slowLink = netshape.Shape{RateMbit: 25}
)

// valueLevel is a load level: how many clients, against the best link.
type valueLevel struct {
	name    string
	clients int
}

// The levels ask about half the best link, about all of it, and twice it.
var valueLevelsByName = map[string]valueLevel{
	"below": {"below", 3},
	"equal": {"equal", 6},
	"twice": {"twice", 12},
}

// uncountedProfile is the specification's profile, run beside the live
// install's for the comparison: live measurements without NetworkCapacity.
const uncountedProfile = "kns-3-uncounted"

// A placement of the benchmark: which profile places the clients, with
// which scenario in front of the measurements; pin, when set, holds each
// client to its node, the i-th client to pin[i].
type valuePlacement struct {
	name, scheduler, scenario string
	pin                       []string
}

// valueLiveScenario is the scenario of the live placements: the
// measurements alone.
const valueLiveScenario = "source: value-live\nnodes: {}\n"

// valueRun is one run of the value benchmark (TestValue): the view of the
// cluster its feature has, and the scenario the simulator serves, which a
// placement changes.
type valueRun struct {
	*cluster
	scenario string
}

// run runs the same clients at each load level, trial after
// trial, placed four ways in balanced order: by the default scheduler; by
// KNS-3 with the sample scenario's static numbers; by KNS-3 with live
// measurements and without NetworkCapacity (the specification's profile);
// and by the live install's profile, with it. It reports small-call
// latency, throughput and where the clients went. It checks only what
// placement must follow: the static scenario sends every client to the
// node it ranks first; live measurements without capacity send every
// client placed with the first one's scores to the best link; with capacity,
// at twice the best link's capacity, the slower link takes some.
func (v *valueRun) run(ctx context.Context) {
	v.t.Helper()
	levels, splits, workloads := v.parseValueFlags()
	links := map[string]netshape.Shape{v.rigorous: slowLink, v.plain: bestLink}
	for node, s := range links {
		v.t.Cleanup(func() {
			if err := netshape.Clear(context.Background(), node); err != nil {
				v.t.Error(err)
			}
		})
		if err := netshape.Apply(ctx, node, s); err != nil {
			v.t.Fatal(err)
		}
	}
	v.clearShapedWorkers(ctx)
	v.runUncountedProfile(ctx)
	placements := []valuePlacement{
		{name: value.PlacementDefault, scheduler: "default-scheduler"},
		// The sample scenario's numbers (deploy/base/sample-scenario.yaml)
		// for the two workers.
		{name: value.PlacementStatic, scheduler: uncountedProfile, scenario: fmt.Sprintf(
			"source: value-static\nnodes:\n  %s: {latency_ms: 4, bandwidth_mbps: 1000, packet_loss: 0.01}\n  %s: {score: 0.40}\n",
			v.rigorous, v.plain)},
		{name: value.PlacementUncounted, scheduler: uncountedProfile, scenario: valueLiveScenario},
		{name: value.PlacementCapacity, scheduler: config.ProfileName, scenario: valueLiveScenario},
	}
	v.setScenarioDoc(valueLiveScenario, servesSource("live+value-live"))
	v.awaitLive("the shaped links measured", v.linksToldApart, 2*liveWindow+10*time.Second)

	v.scenario = valueLiveScenario
	for _, workload := range workloads {
		server := v.workloadServer(ctx, workload)
		if len(levels) > 0 {
			report := v.runWorkload(ctx, workload, server, levels, func(valueLevel) []valuePlacement { return placements })
			v.writeReport(report, value.FileName(workload))
		}
		if len(splits) > 0 {
			report := v.runWorkload(ctx, workload, server, splits, v.splitPlacements)
			v.writeReport(report, value.SplitsFileName(workload))
		}
	}
}

// splitPlacements are the default scheduler's placement of lv's clients,
// then every split of them between the two links, most on the best link
// first, as value.SplitPlacements names them: what any placement of the
// clients would reach, which no scheduler's can beat.
func (v *valueRun) splitPlacements(lv valueLevel) []valuePlacement {
	names := value.SplitPlacements(lv.clients)
	placements := []valuePlacement{{name: names[0], scheduler: "default-scheduler"}}
	for i, name := range names[1:] {
		best := lv.clients - i
		pin := make([]string, lv.clients)
		for k := range pin {
			pin[k] = v.rigorous
			if k < best {
				pin[k] = v.plain
			}
		}
		placements = append(placements, valuePlacement{name: name, scheduler: "default-scheduler", pin: pin})
	}
	return placements
}

// writeReport writes report into -kns3.value-out as name, when set.
func (v *valueRun) writeReport(report value.Report, name string) {
	v.t.Helper()
	if *valueOut == "" {
		return
	}
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		v.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*valueOut, name), data, 0o644); err != nil {
		v.t.Fatal(err)
	}
}

// runWorkload runs workload's clients of server at each level, trial
// after trial, placed every way placementsOf says for the level, in
// balanced order (value.TrialOrder).
func (v *valueRun) runWorkload(ctx context.Context, workload, server string, levels []valueLevel, placementsOf func(valueLevel) []valuePlacement) value.Report {
	v.t.Helper()
	report := value.Report{Version: kns3.Version, Date: time.Now().UTC(), DurationSeconds: valueDuration.Seconds(),
		Workload: workload, ClientMbps: clientMbps, BestLinkMbps: bestLink.RateMbit,
		PingIntervalMs: float64(clientPingInterval.Milliseconds()), PingsOpenLoop: true, Order: value.OrderBalanced,
		LinkMbps: map[string]float64{v.rigorous: slowLink.RateMbit, v.plain: bestLink.RateMbit},
		Links:    map[string]string{v.rigorous: slowLink.String(), v.plain: bestLink.String()},
	}
	for _, lv := range levels {
		placements := placementsOf(lv)
		level := value.Level{Name: lv.name, Clients: lv.clients, DemandMbps: float64(lv.clients) * clientMbps}
		if names := placementNames(placements); !slices.Equal(names, value.Placements) {
			level.Placements = names
		}
		for trial := range *valueTrials {
			tr := value.Trial{Placements: make([]value.Placement, len(placements))}
			for _, i := range value.TrialOrder(len(placements), trial) {
				pl := placements[i]
				if pl.scenario != "" && pl.scenario != v.scenario {
					source := strings.TrimPrefix(strings.SplitN(pl.scenario, "\n", 2)[0], "source: ")
					v.setScenarioDoc(pl.scenario, servesSource("live+"+source))
					v.scenario = pl.scenario
				}
				before := v.awaitQuietLinks(pl.scenario == valueLiveScenario)
				p, pods := v.runClients(ctx, pl.name, pl.scheduler, server, lv.clients, pl.pin)
				tr.Order = append(tr.Order, pl.name)
				tr.Placements[i] = p
				v.t.Logf("%s, %s, trial %d: %-30s p50 %7.1f ms  p99 %7.1f ms  %5.1f Mbit/s  nodes %v; created after the simulator served %s",
					workload, lv.name, trial+1, p.Name, p.P50Ms, p.P99Ms, p.Mbps, p.Nodes, v.describeWorkers(before))
				v.checkPlacement(lv, pl, p, pods, before)
			}
			level.Trials = append(level.Trials, tr)
		}
		level.Summarise()
		for _, s := range level.Summary {
			v.t.Logf("%s, %s (%d clients, %.0f Mbit/s asked): %-30s median p99 %.1f ms (%.2f× default, worst %.2f×), median %.1f Mbit/s (%.2f×, worst %.2f×)",
				workload, level.Name, level.Clients, level.DemandMbps, s.Name, s.MedianP99Ms, s.MedianP99Ratio, s.WorstP99Ratio, s.MedianMbps, s.MedianMbpsRatio, s.WorstMbpsRatio)
		}
		report.Levels = append(report.Levels, level)
	}
	return report
}

// placementNames are the placements' names, in order.
func placementNames(placements []valuePlacement) []string {
	names := make([]string, len(placements))
	for i, p := range placements {
		names[i] = p.name
	}
	return names
}

// checkPlacement checks what a placement must follow, whatever the
// workload measures; before is the simulator's answer the clients were
// created after.
func (v *valueRun) checkPlacement(lv valueLevel, pl valuePlacement, p value.Placement, pods []clientPod, before api.SimulationResponse) {
	v.t.Helper()
	if pl.pin != nil {
		want := map[string]int{}
		for _, node := range pl.pin {
			want[node]++
		}
		if !maps.Equal(p.Nodes, want) {
			v.t.Errorf("%s: clients on %v, want %v, the nodes they are held to", p.Name, p.Nodes, want)
		}
		return
	}
	switch p.Name {
	case value.PlacementStatic:
		if p.Nodes[v.rigorous] != lv.clients {
			v.t.Errorf("static scenario: clients on %v, want all %d on %s, which it ranks first", p.Nodes, lv.clients, v.rigorous)
		}
	case value.PlacementUncounted:
		v.checkHerded(p, pods, before)
	case value.PlacementCapacity:
		if lv.name == "twice" && (p.Nodes[v.rigorous] == 0 || p.Nodes[v.plain] == 0) {
			v.t.Errorf("live with capacity at twice the best link: clients on %v, want both links used", p.Nodes)
		}
	}
}

// checkHerded checks that live measurements without capacity herd: every
// client placed with the simulation the first one was placed with goes to
// the best link, however many went there before it. A profile that counted
// its own placements would send some to the slower link with the same
// scores (the capacity placement does). A client placed once the others'
// traffic had changed the measurement may go where the new scores send it:
// the score follows the network, as it must. Which simulation a client was
// placed with is read from its placement event: the two workers' simulator
// scores, to the thousandth.
func (v *valueRun) checkHerded(p value.Placement, pods []clientPod, before api.SimulationResponse) {
	v.t.Helper()
	slices.SortStableFunc(pods, func(a, b clientPod) int { return a.scheduled.Compare(b.scheduled) })
	var first workerScores
	same := 0
	for i, pod := range pods {
		ev := v.clientPlacement(pod)
		scores, ok := v.workerScores(ev)
		if !ok {
			v.t.Errorf("live without capacity: client %s was not placed by the workers' simulator scores: %s", pod.name, ev)
			continue
		}
		if i == 0 {
			first = scores
			if best, slow := parseScore(scores.best), parseScore(scores.slow); !(best > slow) {
				v.t.Errorf("live without capacity: the first client was placed with %s scoring %s and %s %s, want the best link ranked first: %s; the simulator served before the clients: %s",
					v.plain, scores.best, v.rigorous, scores.slow, ev, v.describeWorkers(before))
			}
		}
		if scores != first {
			v.t.Logf("live without capacity: client %s placed on %s with new scores (%s %s, %s %s): %s",
				pod.name, pod.node, v.plain, scores.best, v.rigorous, scores.slow, ev)
			continue
		}
		same++
		if pod.node != v.plain {
			v.t.Errorf("live without capacity: client %s placed on %s with the first client's scores, want %s, the best link (clients on %v): %s",
				pod.name, pod.node, v.plain, p.Nodes, ev)
		}
	}
	v.t.Logf("live without capacity: %d of %d client(s) placed with the first client's scores (%s %s, %s %s)",
		same, len(pods), v.plain, first.best, v.rigorous, first.slow)
}

// parseScore reads a score as a placement event prints it (the pattern
// below admits only digits and dots); NaN when it is not a number, so that
// no comparison with it holds.
func parseScore(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// workerScores are the best and the slow link's simulator scores, as a
// placement event prints them.
type workerScores struct{ best, slow string }

// placedWith matches a network-aware placement event: the chosen node and
// its simulator score, then the best alternative and its score.
var placedWith = regexp.MustCompile(`^Network-aware: (\S+) has simulator score ([0-9.]+), rank \d+ of \d+ feasible nodes; best alternative (\S+) \(([0-9.]+)\)`)

// workerScores reads the two workers' scores from a placement event; false
// when the event is not a network-aware placement between them.
func (v *valueRun) workerScores(event string) (workerScores, bool) {
	m := placedWith.FindStringSubmatch(event)
	if m == nil {
		return workerScores{}, false
	}
	scores := map[string]string{m[1]: m[2], m[3]: m[4]}
	best, okBest := scores[v.plain]
	slow, okSlow := scores[v.rigorous]
	return workerScores{best: best, slow: slow}, okBest && okSlow
}

// describeWorkers says what r served of the two workers: score and
// every estimate.
func (v *valueRun) describeWorkers(r api.SimulationResponse) string {
	var parts []string
	for _, w := range []string{v.plain, v.rigorous} {
		res := r.Results[w]
		parts = append(parts, fmt.Sprintf("%s: score %.3f; %s", w, res.Score, describeMeasured(res.Measured)))
	}
	return fmt.Sprintf("at %s: %s", r.Timestamp.Format(time.TimeOnly), strings.Join(parts, "; "))
}

// awaitQuietLinks waits until the workers' links carry no more than the
// probes: the previous placement's traffic is out of the window that the
// next placement is scored on. With measured, it also waits until the
// simulator serves both shaped links measured again and told apart, as
// at the start: a placement that filled a link leaves it unmeasured for a
// while, and a live placement is to be scored on the network, not on what
// the probes have not yet seen again. It returns the answer that showed
// it.
func (v *valueRun) awaitQuietLinks(measured bool) api.SimulationResponse {
	v.t.Helper()
	since := time.Now()
	what := "the workers' links quiet"
	if measured {
		what += ", and measured apart"
	}
	r := v.awaitLive(what, func(r api.SimulationResponse) bool {
		for _, w := range []string{v.rigorous, v.plain} {
			m := r.Results[w].Measured
			if m == nil || m.LinkUseMbps == nil || m.LinkUseMbps.Value > 5 {
				return false
			}
		}
		return windowAfter(r, since) && (!measured || v.linksToldApart(r))
	}, twoWindows+4*liveWindow+10*time.Second)
	v.t.Logf("%s after %s", what, time.Since(since).Round(time.Second))
	return r
}

// linksToldApart says whether r serves both shaped links' bandwidths: the
// slow one measured near its rate, not a lower bound (which ties with any
// faster link), and the best one well above it.
func (v *valueRun) linksToldApart(r api.SimulationResponse) bool {
	slow, best := r.Results[v.rigorous].BandwidthMbps, r.Results[v.plain].BandwidthMbps
	m := r.Results[v.rigorous].Measured
	return slow != nil && best != nil && m != nil && m.BandwidthMbps != nil && !m.BandwidthMbps.AtLeast &&
		*slow < 1.3*slowLink.RateMbit && *best > 1.3*slowLink.RateMbit
}

// runUncountedProfile adds the specification's profile, as
// uncountedProfile, beside the live install's in the scheduler's
// configuration, and waits for the scheduler to run it. Going back to
// deploy/ (removeLive) restores the configuration.
func (v *valueRun) runUncountedProfile(ctx context.Context) {
	v.t.Helper()
	spec, err := os.ReadFile(filepath.Join(kindCluster.Inputs.Root, "deploy", "scheduler-config.yaml"))
	if err != nil {
		v.t.Fatal(err)
	}
	live, err := os.ReadFile(filepath.Join(kindCluster.Inputs.Root, "deploy", "live", "scheduler-config.yaml"))
	if err != nil {
		v.t.Fatal(err)
	}
	_, specProfiles, ok := strings.Cut(string(spec), "profiles:\n")
	if !ok {
		v.t.Fatal("deploy/scheduler-config.yaml has no profiles")
	}
	both := string(live) + strings.Replace(specProfiles, "schedulerName: "+config.ProfileName, "schedulerName: "+uncountedProfile, 1)
	v.runSchedulerConfig(ctx, "kns-3-scheduler-config-value", both)
}
