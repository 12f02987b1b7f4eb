package explain

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/score"
)

func node(name string, labels map[string]string, taints ...v1.Taint) v1.Node {
	n := st.MakeNode().Name(name).Taints(taints).Obj()
	n.Labels = labels
	return *n
}

// sim is a published simulation of scores (the simulator's, as the plugin
// holds them: × 1000).
func sim(scores map[string]float64) *status.Simulation {
	r := &status.Simulation{Source: "test", WindowSeconds: 30, Received: time.Unix(1_800_000_000, 0), MilliScores: map[string]int64{}}
	for n, s := range scores {
		r.MilliScores[n] = int64(s * score.MilliScale)
	}
	return r
}

// row is a Row in short: filter verdict, simulator score (-1: none),
// CustomScorePlugin's normalized score (-1: none), points (-1: none),
// rank, chosen.
type row struct {
	node       string
	filter     string
	score      float64
	normalized int64
	points     int64
	rank       int
	chosen     bool
}

func short(rows []output.Row) []row {
	out := make([]row, len(rows))
	for i, r := range rows {
		out[i] = row{node: r.Node, filter: r.Filter, score: -1, normalized: -1, points: -1, rank: r.Rank, chosen: r.Chosen}
		if r.SimulatorScore != nil {
			out[i].score = *r.SimulatorScore
		}
		for _, s := range r.Scores {
			if s.Plugin == status.CustomScorePlugin {
				out[i].normalized = s.Normalized
			}
		}
		if r.Points != nil {
			out[i].points = *r.Points
		}
	}
	return out
}

var (
	disabled     = map[string]string{placement.LabelScheduler: placement.ValueDisabled}
	rigorous     = map[string]string{placement.LabelCapability: placement.ValueRigorous}
	controlPlane = v1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: v1.TaintEffectNoSchedule}
	// The demo's cluster: worker is best but disabled, worker2 is
	// rigorous, the control plane is tainted.
	demoNodes = []v1.Node{
		node("cp", nil, controlPlane),
		node("worker", disabled),
		node("worker2", rigorous),
		node("worker3", nil),
	}
	demoScores = map[string]float64{"worker": 0.95, "worker2": 0.707, "worker3": 0.40}
)

func TestBuild(t *testing.T) {
	plain := st.MakePod().Namespace("ns").Name("p").SchedulerName("kns-3-scheduler").Node("worker2").Obj()
	rigorousPod := st.MakePod().Namespace("ns").Name("r").SchedulerName("kns-3-scheduler").
		Annotation(placement.AnnotationQoS, placement.ValueRigorous).Obj()
	for _, tc := range []struct {
		name     string
		in       Input
		want     []row
		reasons  map[string]string // node → reason substring
		absolute bool
	}{
		{
			name: "placed pod: the filter rejects the disabled node whatever its score; the tainted node is no candidate",
			in:   Input{Pod: plain, Nodes: demoNodes, Simulation: sim(demoScores)},
			want: []row{
				{"worker2", output.Pass, 0.707, 100, 1000, 1, true},
				{"worker3", output.Pass, 0.40, 0, 0, 2, false},
				{"cp", output.Pass, -1, -1, -1, 0, false},
				{"worker", output.Reject, 0.95, -1, -1, 0, false},
			},
			reasons: map[string]string{"worker": placement.ErrReasonDisabled, "cp": "untolerated taint node-role.kubernetes.io/control-plane"},
		},
		{
			name: "rigorous pod: only the rigorous node passes, and as the only candidate it gets 100",
			in:   Input{Pod: rigorousPod, Nodes: demoNodes, Simulation: sim(demoScores)},
			want: []row{
				{"worker2", output.Pass, 0.707, 100, 1000, 1, false},
				{"cp", output.Reject, -1, -1, -1, 0, false},
				{"worker", output.Reject, 0.95, -1, -1, 0, false},
				{"worker3", output.Reject, 0.40, -1, -1, 0, false},
			},
			reasons: map[string]string{"worker3": placement.ErrReasonNotRigorous},
		},
		{
			name: "an unscored candidate scores 0 and takes part in the normalization",
			in:   Input{Pod: plain, Nodes: demoNodes, Simulation: sim(map[string]float64{"worker2": 0.5})},
			want: []row{
				{"worker2", output.Pass, 0.5, 100, 1000, 1, true},
				{"worker3", output.Pass, -1, 0, 0, 2, false},
				{"cp", output.Pass, -1, -1, -1, 0, false},
				{"worker", output.Reject, -1, -1, -1, 0, false},
			},
		},
		{
			name:     "Absolute normalization keeps the simulator's scale",
			in:       Input{Pod: plain, Nodes: demoNodes, Simulation: sim(demoScores), Absolute: true},
			absolute: true,
			want: []row{
				{"worker2", output.Pass, 0.707, 70, 700, 1, true},
				{"worker3", output.Pass, 0.40, 40, 400, 2, false},
				{"cp", output.Pass, -1, -1, -1, 0, false},
				{"worker", output.Reject, 0.95, -1, -1, 0, false},
			},
		},
		{
			name: "ties share a rank and MinMax gives every tied node 100",
			in:   Input{Pod: plain, Nodes: demoNodes, Simulation: sim(map[string]float64{"worker2": 0.5, "worker3": 0.5})},
			want: []row{
				{"worker2", output.Pass, 0.5, 100, 1000, 1, true},
				{"worker3", output.Pass, 0.5, 100, 1000, 1, false},
				{"cp", output.Pass, -1, -1, -1, 0, false},
				{"worker", output.Reject, -1, -1, -1, 0, false},
			},
		},
		{
			name: "simulator down: verdicts only, no scores",
			in:   Input{Pod: plain, Nodes: demoNodes, SimulatorError: "down"},
			want: []row{
				{"worker2", output.Pass, -1, -1, -1, 0, true},
				{"worker3", output.Pass, -1, -1, -1, 0, false},
				{"cp", output.Pass, -1, -1, -1, 0, false},
				{"worker", output.Reject, -1, -1, -1, 0, false},
			},
		},
		{
			name: "a tolerated taint and an unschedulable node",
			in: Input{
				Pod: st.MakePod().Namespace("ns").Name("t").Toleration(controlPlane.Key).Obj(),
				Nodes: []v1.Node{node("cp", nil, controlPlane), func() v1.Node {
					n := node("cordoned", nil)
					n.Spec.Unschedulable = true
					return n
				}()},
				Simulation: sim(map[string]float64{"cp": 0.1, "cordoned": 0.9}),
			},
			want: []row{
				{"cp", output.Pass, 0.1, 100, 1000, 1, false},
				{"cordoned", output.Pass, 0.9, -1, -1, 0, false},
			},
			reasons: map[string]string{"cordoned": "node is unschedulable"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Build(tc.in)
			if diff := cmp.Diff(tc.want, short(e.Nodes), cmp.AllowUnexported(row{})); diff != "" {
				t.Errorf("rows (-want,+got):\n%s", diff)
			}
			for _, r := range e.Nodes {
				want, ok := tc.reasons[r.Node]
				if got := r.FilterReason + r.Other; ok && !strings.Contains(got, want) {
					t.Errorf("%s: reasons %q, want %q", r.Node, got, want)
				}
				if r.Filter == output.Reject && r.FilterReason == "" {
					t.Errorf("%s: rejected without a reason", r.Node)
				}
			}
			if wantNorm := map[bool]string{true: "Absolute", false: "MinMax"}[tc.absolute]; e.Normalization != wantNorm {
				t.Errorf("normalization %q, want %q", e.Normalization, wantNorm)
			}
		})
	}
}

func TestPrint(t *testing.T) {
	pending := st.MakePod().Namespace("ns").Name("r").SchedulerName("kns-3-scheduler").Obj()
	e := Build(Input{Pod: pending, Nodes: demoNodes, Simulation: sim(demoScores), LastFailedScheduling: "0/4 nodes are available"})
	now := time.Unix(1_800_000_012, 0)
	var out bytes.Buffer
	if err := Print(&out, e, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Pod ns/r (scheduler kns-3-scheduler) is pending.",
		"Last FailedScheduling: 0/4 nodes are available",
		`Simulation: received by the scheduler 12s ago; source "test" over a 30s window; normalization MinMax.`,
		"NODE", "worker2   pass", "0.707", placement.ErrReasonDisabled,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	placed := Build(Input{Pod: st.MakePod().Namespace("ns").Name("p").Node("worker2").Obj(), Nodes: demoNodes, PlacementEvent: "Network-aware: …", SimulatorError: "down"})
	out.Reset()
	if err := Print(&out, placed, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"is on worker2.", "Placement event: Network-aware: …", "Simulation: none (down)", "here"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// What cluster users and the simulator wrote reaches the terminal
// escaped: no control sequence, no line of its own.
func TestPrintEscapes(t *testing.T) {
	s := sim(demoScores)
	s.Source = "lab\x1b]0;owned\x07"
	pending := st.MakePod().Namespace("ns").Name("r").SchedulerName("kns-3-scheduler").Obj()
	e := Build(Input{Pod: pending, Nodes: demoNodes, Simulation: s, LastFailedScheduling: "0/4 nodes\n\x1b[2Jfake line",
		PlacementEvent: "\x1b[1A\x1b[2KNetwork-aware: all good", SimulatorError: "x"})
	var out bytes.Buffer
	if err := Print(&out, e, time.Unix(1_800_000_012, 0)); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Errorf("output holds a control character:\n%q", out.String())
	}
	for _, want := range []string{`Last FailedScheduling: 0/4 nodes\n^[[2Jfake line`, `Placement event: ^[[1A^[[2KNetwork-aware: all good`, `source "lab^[]0;owned\x07"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPrintMetrics checks the measured metrics behind the scores get
// columns of their own, only when the simulation has any.
func TestPrintMetrics(t *testing.T) {
	s := sim(demoScores)
	bw, loss, lat := 19.2, 0.046, 0.21
	fast := 500.0
	s.Metrics = map[string]status.NodeMetrics{"worker3": {LatencyMs: &lat, BandwidthMbps: &bw, PacketLoss: &loss},
		"worker2": {BandwidthMbps: &fast, BandwidthAtLeast: true}}
	pod := st.MakePod().Namespace("ns").Name("p").SchedulerName("kns-3-scheduler").Node("worker2").Obj()
	var out bytes.Buffer
	if err := Print(&out, Build(Input{Pod: pod, Nodes: demoNodes, Simulation: s}), time.Unix(1_800_000_012, 0)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LATENCY", "BANDWIDTH", "LOSS", "0.21 ms", "19.2 Mbit/s", "4.6%", "≥ 500 Mbit/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Print(&out, Build(Input{Pod: pod, Nodes: demoNodes, Simulation: sim(demoScores)}), time.Unix(1_800_000_012, 0)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "LATENCY") {
		t.Errorf("metrics columns without metrics:\n%s", out.String())
	}
}

// Print escapes every text it did not write, names included.
func TestPrintEscapesNames(t *testing.T) {
	e := &output.Explanation{Namespace: "ns\x1b[2J", Pod: "web\x07", SchedulerName: "s", Node: "a\x1b]0;x\x07", Normalization: "MinMax\x1b[2J",
		Nodes: []output.Row{{Node: "a\x1b]0;x\x07", Filter: output.Pass, Chosen: true}}}
	var b strings.Builder
	if err := Print(&b, e, time.Now()); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("output holds a control character:\n%q", b.String())
	}
}
