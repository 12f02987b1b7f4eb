package explain

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/ from the output")

// liveScoring is the live profile's: the simulator's scores at 10, free
// bandwidth at 20, with NetworkCapacity's default args.
var liveScoring = []status.ScorePlugin{{Name: status.CustomScorePlugin, Weight: 10},
	{Name: status.NetworkCapacity, Weight: 20, Capacity: &status.CapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 80}}}

// sampled is when the live simulation's numbers were sampled; its window
// is 5 s, so pods placed after sampled − 11 s are counted on their link.
var sampled = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// liveSim is a live simulation of the demo's two schedulable workers,
// both 100 Mbit/s links with the probes' traffic on them, the simulator
// preferring worker2 by a hair, and counted on each link the pods placed
// since the measurement: worker2 carries 80 Mbit/s of them, worker3 60
// plus the pod explained.
func liveSim() *status.Simulation {
	s := sim(map[string]float64{"worker2": 0.912, "worker3": 0.905})
	s.Received, s.Timestamp, s.WindowSeconds, s.Source = sampled.Add(time.Second), sampled, 5, "live"
	bw, use, lat2, lat3, loss := 100.0, 0.4, 0.21, 0.25, 0.0
	since := capacity.CountedSince(sampled.Add(-5 * time.Second))
	s.Metrics = map[string]status.NodeMetrics{
		"worker2": {LatencyMs: &lat2, BandwidthMbps: &bw, PacketLoss: &loss, LinkUseMbps: &use,
			Capacity: &status.LinkCapacity{RankedBandwidthMbps: 100, CountedMbps: 80, CountedPods: 4, CountedSince: since, FreeMbps: 19.6}},
		"worker3": {LatencyMs: &lat3, BandwidthMbps: &bw, PacketLoss: &loss, LinkUseMbps: &use,
			Capacity: &status.LinkCapacity{RankedBandwidthMbps: 100, CountedMbps: 80, CountedPods: 4, CountedSince: since, FreeMbps: 19.6}},
	}
	return s
}

// burstPod is a pod of a burst declaring 20 Mbit/s, placed on node at,
// its containers ready at once.
func burstPod(node string, at time.Time) *v1.Pod {
	p := st.MakePod().Namespace("ns").Name("burst-7").SchedulerName("kns-3-scheduler").Node(node).
		Annotation(capacity.IngressBandwidthAnnotation, "20M").Obj()
	p.Status.Conditions = []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)},
		{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)},
	}
	return p
}

// liveEvent is the placement event of burst-7 on worker3, as
// CustomBindPlugin writes it from the cycle's points.
func liveEvent() string {
	d, _ := placement.Decide([]placement.PluginPoints{
		{Plugin: status.CustomScorePlugin, Weight: 10, Scores: map[string]int64{"worker2": 100, "worker3": 0}},
		{Plugin: status.NetworkCapacity, Weight: 20, Scores: map[string]int64{"worker2": 9, "worker3": 100}}}, "worker3")
	return placement.Placement{Node: "worker3", Score: 905, Rank: 2, Feasible: 2, Alternative: "worker2", AlternativeScore: 912, Decision: &d,
		Notes: []string{"link: 39.6 Mbit/s free of 100 Mbit/s, 19.6 Mbit/s of it below the 80 % fill target (0 Mbit/s in use; 60 Mbit/s counted for 3 pods placed since the measurement)"}}.Message()
}

// TestOwnNeedTakenOff: the status, read after the placement, counts the
// pod's own need against its node. Counted there, it would rank the
// other link first: explain takes it off again, and ranks the pod's node
// first, as the cycle that placed it did. A pod the measurement already
// holds is not counted, and nothing is taken off.
func TestOwnNeedTakenOff(t *testing.T) {
	placed := sampled.Add(-2 * time.Second)
	e := Build(Input{Pod: burstPod("worker3", placed), Nodes: demoNodes, Simulation: liveSim(), Scoring: liveScoring, Now: sampled.Add(3 * time.Second)})
	own := rowOf(e, "worker3")
	if own.OwnNeedMbps != 20 || own.FreeMbps == nil || math.Abs(*own.FreeMbps-39.6) > 1e-9 || own.Rank != 1 || len(e.Caveats) != 0 {
		t.Errorf("worker3: own need %g, free %v, rank %d; caveats %q; want 20 taken off, 39.6 free, ranked first, no caveat",
			own.OwnNeedMbps, deref(own.FreeMbps), own.Rank, e.Caveats)
	}
	if e.DecidedBy != status.NetworkCapacity || e.DecidedFrom != output.DecidedFromStatus || e.RunnerUp != "worker2" {
		t.Errorf("decided by %q from %q against %q, want NetworkCapacity from the status against worker2", e.DecidedBy, e.DecidedFrom, e.RunnerUp)
	}
	// Placed long before the measurement: the status does not count it.
	e = Build(Input{Pod: burstPod("worker3", sampled.Add(-time.Hour)), Nodes: demoNodes, Simulation: liveSim(), Scoring: liveScoring, Now: sampled.Add(3 * time.Second)})
	if own := rowOf(e, "worker3"); own.OwnNeedMbps != 0 || math.Abs(*own.FreeMbps-19.6) > 1e-9 || own.Rank != 2 {
		t.Errorf("worker3: own need %g taken off, free %v, rank %d; want nothing taken off, and worker2 first", own.OwnNeedMbps, deref(own.FreeMbps), own.Rank)
	}
}

// TestCaveats: when the node ranked first here is not the pod's, the
// explanation says why it may not be; not otherwise.
func TestCaveats(t *testing.T) {
	// worker2 ranks first (the simulator's preference, equal links): a
	// pod on worker3 placed before the simulation was sampled.
	s := liveSim()
	for _, n := range []string{"worker2", "worker3"} {
		s.Metrics[n].Capacity.CountedMbps = 0
	}
	e := Build(Input{Pod: burstPod("worker3", sampled.Add(-time.Hour)), Nodes: demoNodes, Simulation: s, Scoring: liveScoring, Now: sampled})
	if rowOf(e, "worker2").Rank != 1 || len(e.Caveats) < 2 ||
		!strings.Contains(e.Caveats[0], "resources, pod affinity and spread") || !strings.Contains(e.Caveats[1], "newer than the placement") {
		t.Errorf("worker2 rank %d, caveats %q: want worker2 first, and why the pod may not be there", rowOf(e, "worker2").Rank, e.Caveats)
	}
	// The event says NetworkCapacity decided; worked out from the status
	// now, none of KNS-3's plugins would: said too.
	e = Build(Input{Pod: burstPod("worker3", sampled.Add(-time.Hour)), Nodes: demoNodes, Simulation: s, Scoring: liveScoring, Now: sampled,
		PlacementEvent: liveEvent()})
	if e.DecidedBy != status.NetworkCapacity || e.DecidedFrom != output.DecidedFromEvent || !strings.Contains(strings.Join(e.Caveats, "\n"), "none of KNS-3's plugins would decide") {
		t.Errorf("decided by %q from %q, caveats %q", e.DecidedBy, e.DecidedFrom, e.Caveats)
	}
	// A name the profile does not score with is not taken from the event.
	e = Build(Input{Pod: burstPod("worker3", sampled), Nodes: demoNodes, Simulation: liveSim(), Scoring: liveScoring, Now: sampled,
		PlacementEvent: "x; decided by Forged: 1 points ahead of runner-up worker2"})
	if e.DecidedFrom != output.DecidedFromStatus {
		t.Errorf("decided by %q from %q: want the status's word over a plugin the profile does not run", e.DecidedBy, e.DecidedFrom)
	}
}

// TestUnrecomputed: links the status left out cannot be counted; the
// explanation says so and ranks by the rest.
func TestUnrecomputed(t *testing.T) {
	s := liveSim()
	s.Metrics, s.MetricsOmitted = nil, true
	e := Build(Input{Pod: burstPod("worker3", sampled), Nodes: demoNodes, Simulation: s, Scoring: liveScoring, Now: sampled})
	if len(e.Unrecomputed) != 1 || !strings.HasPrefix(e.Unrecomputed[0], "NetworkCapacity: ") || len(rowOf(e, "worker3").Scores) != 1 {
		t.Errorf("unrecomputed %q, worker3's scores %v: want NetworkCapacity named and left out", e.Unrecomputed, rowOf(e, "worker3").Scores)
	}
}

// TestPrintLive is the output for the live profile, against golden files
// (go test -update rewrites them): the pod's node ranked first by both
// plugins' points, the event naming NetworkCapacity; and a pod whose node
// is no longer first, with why it may not be.
func TestPrintLive(t *testing.T) {
	now := sampled.Add(3 * time.Second)
	for _, tc := range []struct {
		golden string
		in     Input
	}{
		{"live.golden", Input{Pod: burstPod("worker3", sampled.Add(-2*time.Second)), Nodes: demoNodes, Simulation: liveSim(), Scoring: liveScoring,
			PlacementEvent: liveEvent(), Now: now}},
		{"live-caveats.golden", Input{Pod: burstPod("worker3", sampled.Add(-time.Hour)), Nodes: demoNodes, Simulation: liveSim(), Scoring: liveScoring, Now: now}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := Print(&out, Build(tc.in), now); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, out.String())
			}
		})
	}
}

func rowOf(e *output.Explanation, node string) output.Row {
	for _, r := range e.Nodes {
		if r.Node == node {
			return r
		}
	}
	return output.Row{}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
