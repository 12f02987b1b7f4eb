package explain

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/peers"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// peersScoring is a live profile's scoring without NetworkCapacity: the
// simulator's scores at 10, the cost to a pod's peers at 20.
var peersScoring = []status.ScorePlugin{{Name: status.CustomScorePlugin, Weight: 10}, {Name: status.NetworkPeers, Weight: 20}}

// peersSim is a live simulation that prefers worker2, then worker3, then
// the control plane, with the pairs between them: the server's node,
// worker, is 0.3 ms from cp, measured; its pair to worker2 is measured
// slow and lossy (5 ms, 4 % loss); worker3 has no coordinate and no
// measured pair, so its cost to the server is unknown.
func peersSim() *status.Simulation {
	s := sim(map[string]float64{"cp": 0.900, "worker2": 0.912, "worker3": 0.905})
	s.Received, s.Timestamp, s.WindowSeconds, s.Source = sampled.Add(time.Second), sampled, 5, "live"
	s.Pairs = &status.Pairs{
		Coordinates: map[string]status.Coordinate{
			"worker":  {Vec: []float64{0, 0}, Error: 0.05},
			"cp":      {Vec: []float64{0.0003, 0}, Error: 0.05},
			"worker2": {Vec: []float64{0.004, 0}, Error: 0.05},
		},
		Measured: []status.MeasuredPair{
			{From: "cp", To: "worker", LatencyMs: &status.PairEstimate{Value: 0.3, Low: 0.28, High: 0.32}, PacketLoss: &status.PairEstimate{High: 0.001}},
			{From: "worker", To: "worker2", LatencyMs: &status.PairEstimate{Value: 5, Low: 4.5, High: 5.5},
				PacketLoss: &status.PairEstimate{Value: 0.04, Low: 0.03, High: 0.05}},
		},
	}
	return s
}

// placedPod is a pod of namespace ns placed on node at at.
func placedPod(w *st.PodWrapper, node string, at time.Time) *v1.Pod {
	p := w.Namespace("ns").Node(node).Obj()
	p.UID = types.UID(p.Name)
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
	return p
}

// peersClient is a client of the server declaring 10 Mbit/s to it,
// tolerating the control plane's taint, placed on cp at at.
func peersClient(at time.Time) *v1.Pod {
	w := st.MakePod().Name("client-0").SchedulerName("kns-3-scheduler").Label("app", "client").
		Annotation(peers.PeersAnnotation, "app=server").Annotation(peers.PeerTrafficAnnotation, "10M").Toleration(controlPlane.Key)
	return placedPod(w, "cp", at)
}

// peersServer is the server, on worker since long before the client.
func peersServer() v1.Pod {
	return *placedPod(st.MakePod().Name("server-1").Label("app", "server"), "worker", sampled.Add(-time.Hour))
}

// peersEvent is the placement event of client-0 on cp, as
// CustomBindPlugin writes it from the cycle's points.
func peersEvent() string {
	d, _ := placement.Decide([]placement.PluginPoints{
		{Plugin: status.CustomScorePlugin, Weight: 10, Scores: map[string]int64{"cp": 0, "worker2": 100, "worker3": 42}},
		{Plugin: status.NetworkPeers, Weight: 20, Scores: map[string]int64{"cp": 100, "worker2": 2, "worker3": 0}}}, "cp")
	return placement.Placement{Node: "cp", Score: 900, Rank: 3, Feasible: 3, Alternative: "worker2", AlternativeScore: 912, Decision: &d,
		Notes: []string{"peers: 1 on worker (measured 0.3 ms); cost 0.3 ms, lowest 0.3 ms"}}.Message()
}

func peersInput() Input {
	return Input{Pod: peersClient(sampled.Add(2 * time.Second)), Nodes: demoNodes, Simulation: peersSim(), Scoring: peersScoring,
		Peers: []v1.Pod{peersServer()}, PlacementEvent: peersEvent(), Now: sampled.Add(3 * time.Second)}
}

// peersScores is each candidate's NetworkPeers score (-1: none) and cost
// ("?" unknown, "-" none).
func peersScores(e *output.Explanation) map[string]string {
	out := map[string]string{}
	for _, r := range e.Nodes {
		if !r.Candidate() {
			continue
		}
		score := int64(-1)
		for _, s := range r.Scores {
			if s.Plugin == status.NetworkPeers {
				score = s.Normalized
			}
		}
		out[r.Node] = fmt.Sprintf("%d %s", score, peersCost(r.PeersCost))
	}
	return out
}

// TestPeersRankThePodsNode: a client the simulator ranks last, placed
// on cp because its server is 0.3 ms away there (13 ms from worker2 by
// the slow, lossy pair, unknown from worker3): NetworkPeers' points,
// worked out from the status, rank cp first, as the placement event
// says. Without them (a kubectl kns3 that does not know the plugin),
// worker2 would.
func TestPeersRankThePodsNode(t *testing.T) {
	e := Build(peersInput())
	want := map[string]string{"cp": "100 0.3 ms", "worker2": "2 13 ms", "worker3": "0 ?"}
	if diff := cmp.Diff(want, peersScores(e)); diff != "" {
		t.Errorf("NetworkPeers' scores and costs (-want +got):\n%s", diff)
	}
	if own := rowOf(e, "cp"); own.Rank != 1 || len(e.Caveats) != 0 || len(e.Unrecomputed) != 0 {
		t.Errorf("cp ranked %d, caveats %q, not worked out %q: want cp first, nothing to say", own.Rank, e.Caveats, e.Unrecomputed)
	}
	if e.DecidedBy != status.NetworkPeers || e.DecidedFrom != output.DecidedFromEvent || e.RunnerUp != "worker2" {
		t.Errorf("decided by %q from %q against %q, want NetworkPeers from the event against worker2", e.DecidedBy, e.DecidedFrom, e.RunnerUp)
	}
	wantPeers := &output.Peers{Selectors: "app=server", TrafficMbps: 10, Hosts: []output.PeerHost{{Node: "worker", Pods: 1}}}
	if diff := cmp.Diff(wantPeers, e.Peers); diff != "" {
		t.Errorf("peers (-want +got):\n%s", diff)
	}
}

// TestPeersNodeAffinity: a client held off its server's node by its
// node affinity. The server's node would cost nothing and rank first; it
// is no candidate, as upstream's NodeAffinity filter rejects it, and the
// client's node ranks first among those it could go to.
func TestPeersNodeAffinity(t *testing.T) {
	in := peersInput()
	client := st.MakePod().Name("client-0").SchedulerName("kns-3-scheduler").Label("app", "client").
		Annotation(peers.PeersAnnotation, "app=server").Toleration(controlPlane.Key).
		NodeAffinityNotIn(placement.LabelCapability, []string{placement.ValueRigorous})
	in.Pod = placedPod(client, "cp", sampled.Add(2*time.Second))
	in.Peers = []v1.Pod{*placedPod(st.MakePod().Name("server-1").Label("app", "server"), "worker2", sampled.Add(-time.Hour))}
	in.PlacementEvent = ""
	e := Build(in)
	if r := rowOf(e, "worker2"); r.Candidate() || r.Other != ErrReasonNodeAffinity {
		t.Errorf("worker2: candidate %t (%q), want rejected by the pod's node affinity", r.Candidate(), r.Other)
	}
	want := map[string]string{"cp": "100 3.7 ms", "worker3": "0 ?"}
	if diff := cmp.Diff(want, peersScores(e)); diff != "" {
		t.Errorf("NetworkPeers' scores and costs (-want +got):\n%s", diff)
	}
	if own := rowOf(e, "cp"); own.Rank != 1 || e.DecidedBy != status.NetworkPeers {
		t.Errorf("cp ranked %d, decided by %q; want cp first, by NetworkPeers", own.Rank, e.DecidedBy)
	}
}

// TestPeersNotWorkedOut: what NetworkPeers needs and the status or the
// API server does not give is named, and the plugin is left out of the
// points; a pod that declares no peers, or none that is placed, gets no
// NetworkPeers points, as the plugin's PreScore skips it.
func TestPeersNotWorkedOut(t *testing.T) {
	appGroup := peersClient(sampled)
	appGroup.Annotations = nil
	appGroup.Labels = map[string]string{peers.AppGroupLabel: "shop", peers.AppGroupWorkloadLabel: "frontend"}
	invalid := peersClient(sampled)
	invalid.Annotations[peers.PeerTrafficAnnotation] = "fast"
	for _, tc := range []struct {
		name        string
		change      func(*Input)
		unworked    string // the Unrecomputed entry, "" for none
		skipped     string // e.Peers.Skipped, "-" for no e.Peers
		wantInvalid bool
	}{
		{"a status without pairs", func(in *Input) { in.Simulation.Pairs = nil },
			"NetworkPeers: the status holds no pairs between nodes (its scheduler is older than this kubectl kns3)", "", false},
		{"pairs left out to keep the status bounded", func(in *Input) { in.Simulation.Pairs, in.Simulation.PairsOmitted = nil, true },
			"NetworkPeers: the status leaves out the pairs between nodes to stay within its bound", "", false},
		{"peers not listed", func(in *Input) { in.Peers, in.PeersError = nil, "pods is forbidden" },
			"NetworkPeers: the pod's peers could not be listed: pods is forbidden", "", false},
		{"peers through an AppGroup", func(in *Input) { in.Pod = appGroup },
			`NetworkPeers: the pod declares its peers through AppGroup "shop", which kubectl kns3 does not read: AppGroup peers are not worked out`, "-", false},
		{"no peers declared", func(in *Input) { in.Pod = burstPod("cp", sampled) }, "", "-", false},
		{"annotations that cannot be read", func(in *Input) { in.Pod = invalid }, "",
			"the pod's annotations cannot be read, and it is placed as if it declared no peers", true},
		{"no peer placed", func(in *Input) { in.Peers = nil }, "", "none of the pod's peers is placed", false},
		{"no pairs in the simulation", func(in *Input) { in.Simulation.Pairs = &status.Pairs{} }, "",
			"the simulation says nothing of the pairs between nodes", false},
		{"no candidate's cost known", func(in *Input) { in.Simulation.Pairs.Coordinates, in.Simulation.Pairs.Measured = nil, nil }, "",
			"the simulation says nothing of the pairs between nodes", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := peersInput()
			tc.change(&in)
			e := Build(in)
			if got := strings.Join(e.Unrecomputed, "\n"); got != tc.unworked {
				t.Errorf("not worked out: %q, want %q", got, tc.unworked)
			}
			if tc.skipped == "-" {
				if e.Peers != nil {
					t.Errorf("peers %+v, want none", e.Peers)
				}
			} else if e.Peers == nil || e.Peers.Skipped != tc.skipped || (e.Peers.Invalid != "") != tc.wantInvalid {
				t.Errorf("peers %+v, want skipped %q, invalid %t", e.Peers, tc.skipped, tc.wantInvalid)
			}
			for node, s := range peersScores(e) {
				if !strings.HasPrefix(s, "-1 ") {
					t.Errorf("%s: NetworkPeers score and cost %s, want no score", node, s)
				}
			}
		})
	}
}

// TestPeersUnknownCosts: no candidate's cost known, NetworkPeers gives no
// points (PreScore skips), and each candidate's cost shows as unknown.
func TestPeersUnknownCosts(t *testing.T) {
	in := peersInput()
	in.Simulation.Pairs.Coordinates = map[string]status.Coordinate{"worker": {Vec: []float64{0, 0}}}
	in.Simulation.Pairs.Measured = nil
	e := Build(in)
	want := map[string]string{"cp": "-1 ?", "worker2": "-1 ?", "worker3": "-1 ?"}
	if diff := cmp.Diff(want, peersScores(e)); diff != "" || e.Peers.Skipped != "no candidate's cost to the peers' nodes is known" {
		t.Errorf("skipped %q; NetworkPeers' scores and costs (-want +got):\n%s", e.Peers.Skipped, diff)
	}
}

// TestPeersPlacedAfter: peers placed after the pod are named, and when
// they put another node first, the caveats say the cycle did not see
// them; and that the links' use, left out of the status, is not counted
// in the share of a pair the pod's declared traffic takes.
func TestPeersPlacedAfter(t *testing.T) {
	in := peersInput()
	later := func(i int) v1.Pod {
		return *placedPod(st.MakePod().Name(fmt.Sprintf("server-%d", i+2)).Label("app", "server"), "worker2", sampled.Add(time.Minute))
	}
	for i := range 7 {
		in.Peers = append(in.Peers, later(i))
	}
	in.Simulation.MetricsOmitted = true
	e := Build(in)
	if e.Peers.PlacedAfterCount != 7 || len(e.Peers.PlacedAfter) != maxPlacedAfter || e.Peers.PlacedAfter[0] != "ns/server-2 on worker2" {
		t.Fatalf("placed after: %d, %q; want 7, the first %d named", e.Peers.PlacedAfterCount, e.Peers.PlacedAfter, maxPlacedAfter)
	}
	if rowOf(e, "worker2").Rank != 1 {
		t.Fatalf("worker2 ranked %d, want first: it hosts 7 of the 8 servers now", rowOf(e, "worker2").Rank)
	}
	caveats := strings.Join(e.Caveats, "\n")
	if !strings.Contains(caveats, "7 of the pod's peers were placed after it (ns/server-2 on worker2, ") || !strings.Contains(caveats, " and 2 more)") {
		t.Errorf("caveats %q, want the peers placed after the pod named", e.Caveats)
	}
	if !strings.Contains(caveats, "worked out here without the traffic measured on the links") {
		t.Errorf("caveats %q, want the links' use left out of the pod's traffic share said", e.Caveats)
	}
}

// TestLinkUsesAsTheAnswer: the links' use, read from the status's metrics
// as CustomScorePlugin publishes them, is the use the plugin reads from
// the answer, for the nodes it gives a link.
func TestLinkUsesAsTheAnswer(t *testing.T) {
	body := []byte(`{"results": {
		"used": {"score": 1, "bandwidth_mbps": 100, "measured": {"link_use_mbps": {"value": 40}}},
		"idle": {"score": 1, "bandwidth_mbps": 100},
		"unbounded": {"score": 1, "bandwidth_mbps": 1e12, "measured": {"link_use_mbps": {"value": 4}}},
		"no-bandwidth": {"score": 1, "latency_ms": 1, "measured": {"link_use_mbps": {"value": 4}}},
		"overused": {"score": 1, "bandwidth_mbps": 100, "measured": {"link_use_mbps": {"value": 2e9}}}
	}, "timestamp": "2026-12-03T12:00:00Z", "window_seconds": 5}`)
	s := &status.Simulation{Metrics: map[string]status.NodeMetrics{}}
	for node, m := range network.MetaOf(body).Metrics {
		s.Metrics[node] = status.NodeMetrics{BandwidthMbps: m.BandwidthMbps, LinkUseMbps: m.LinkUseMbps}
	}
	type use struct {
		mbps     float64
		measured bool
	}
	uses := func(links map[string]network.Link) map[string]use {
		out := map[string]use{}
		for n, l := range links {
			out[n] = use{l.UseMbps, l.UseMeasured}
		}
		return out
	}
	want := uses((&network.Simulation{Body: body}).Links())
	if diff := cmp.Diff(want, uses(linkUses(s)), cmp.AllowUnexported(use{})); diff != "" {
		t.Errorf("links' use from the status (-answer's +status's):\n%s", diff)
	}
}

// TestPrintPeers is the output for a pod NetworkPeers placed near its
// server, against a golden file (go test -update rewrites it).
func TestPrintPeers(t *testing.T) {
	now := sampled.Add(3 * time.Second)
	var out bytes.Buffer
	if err := Print(&out, Build(peersInput()), now); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "peers.golden")
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
}
