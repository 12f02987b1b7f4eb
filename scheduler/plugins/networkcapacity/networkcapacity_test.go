package networkcapacity

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

var measuredAt = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// answer is a /simulate body measuring each node's link as bandwidth and
// use (a negative use: not measured) at measuredAt.
func answer(links map[string][2]float64) []byte {
	return answerAtLeast(links, nil)
}

// answerAtLeast is answer with the bandwidth of the atLeast nodes served as
// a lower bound, as for a link faster than the probes could push.
func answerAtLeast(links map[string][2]float64, atLeast map[string]bool) []byte {
	var entries []string
	at := measuredAt.Format(time.RFC3339Nano)
	for node, l := range links {
		use := ""
		if l[1] >= 0 {
			use = fmt.Sprintf(`, "link_use_mbps": {"value": %g, "low": %g, "high": %g, "samples": 5, "measured_at": %q, "age_seconds": 0}`, l[1], l[1], l[1], at)
		}
		entries = append(entries, fmt.Sprintf(`%q: {"score": 1, "latency_ms": 0.1, "bandwidth_mbps": %g, "packet_loss": 0,
			"measured": {"bandwidth_mbps": {"value": %g, "low": %g, "at_least": %t, "samples": 3, "measured_at": %q, "age_seconds": 0}%s}}`,
			node, l[0], l[0], l[0], atLeast[node], at, use))
	}
	return []byte(fmt.Sprintf(`{"results": {%s}, "timestamp": %q, "window_seconds": 5}`, strings.Join(entries, ","), measuredAt.Format(time.RFC3339)))
}

// boundAt is a pod bound to its node at t, its containers ready at once,
// declaring annotations.
func boundAt(name string, t time.Time, annotations map[string]string) *v1.Pod {
	return readyAt(name, t, t, annotations)
}

// readyAt is a pod bound to its node at bound whose containers became
// ready at ready, declaring annotations.
func readyAt(name string, bound, ready time.Time, annotations map[string]string) *v1.Pod {
	p := pulling(name, bound, annotations)
	p.Status.Conditions = append(p.Status.Conditions,
		v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
		v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)})
	return p
}

// notReadyNow is p with its containers no longer ready: a container
// restarting.
func notReadyNow(p *v1.Pod) *v1.Pod {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type != v1.PodScheduled {
			p.Status.Conditions[i].Status = v1.ConditionFalse
		}
	}
	return p
}

// pulling is a pod bound to its node at bound whose containers are not
// ready yet (its image still pulling), declaring annotations.
func pulling(name string, bound time.Time, annotations map[string]string) *v1.Pod {
	p := st.MakePod().Name(name).Namespace("default").Obj()
	p.Annotations = annotations
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(bound)}}
	return p
}

// assumed is a pod the scheduler placed and has not bound: no condition yet.
func assumed(name string, annotations map[string]string) *v1.Pod {
	p := st.MakePod().Name(name).Namespace("default").Obj()
	p.Annotations = annotations
	return p
}

func node(name string, pods ...*v1.Pod) fwk.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(st.MakeNode().Name(name).Obj())
	return ni
}

func declares(mbit string) map[string]string {
	return map[string]string{IngressBandwidthAnnotation: mbit}
}

func newPlugin(t testing.TB, now time.Time) *NetworkCapacity {
	t.Helper()
	p, err := New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*NetworkCapacity)
	pl.now = func() time.Time { return now }
	return pl
}

// scoreCycle runs PreScore, Score and NormalizeScore as the framework does
// over nodes with the simulation body, and returns the normalized scores by
// node (nil when PreScore skipped).
func scoreCycle(t *testing.T, pl *NetworkCapacity, body []byte, nodes []fwk.NodeInfo) (map[string]int64, fwk.CycleState) {
	t.Helper()
	var sim *network.Simulation
	if body != nil {
		sim = &network.Simulation{Body: body}
	}
	return scoreCycleOn(t, pl, sim, nodes)
}

// scoreCycleOn is scoreCycle on the answer sim, which may be an earlier
// cycle's.
func scoreCycleOn(t *testing.T, pl *NetworkCapacity, sim *network.Simulation, nodes []fwk.NodeInfo) (map[string]int64, fwk.CycleState) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	if sim != nil {
		placement.Write(state, &placement.Cycle{Simulation: sim})
	}
	pod := st.MakePod().Name("new").Obj()
	if s := pl.PreScore(ctx, state, pod, nodes); s.IsSkip() {
		return nil, state
	} else if !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	list := make(fwk.NodeScoreList, len(nodes))
	for i, n := range nodes {
		s, status := pl.Score(ctx, state, pod, n)
		if !status.IsSuccess() {
			t.Fatalf("Score(%s): %v", n.Node().Name, status)
		}
		list[i] = fwk.NodeScore{Name: n.Node().Name, Score: s}
	}
	if s := pl.NormalizeScore(ctx, state, pod, list); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	out := map[string]int64{}
	for _, s := range list {
		out[s.Name] = s.Score
	}
	// The placement event reads the same scores from the cycle state.
	if kept, ok := placement.ReadPoints(state, Name); !ok || !cmp.Equal(kept, out) {
		t.Errorf("points left in the cycle state %v, %t; want the normalized scores %v", kept, ok, out)
	}
	return out, state
}

func TestScoresFreeBandwidth(t *testing.T) {
	now := measuredAt.Add(3 * time.Second)
	// The answers' window is 5 s: it began at measuredAt − 5 s.
	before, starting, after := measuredAt.Add(-30*time.Second), measuredAt.Add(-8*time.Second), measuredAt.Add(2*time.Second)
	tests := []struct {
		name    string
		links   map[string][2]float64
		atLeast map[string]bool
		nodes   []fwk.NodeInfo
		want    map[string]int64 // nil: PreScore skips
	}{{
		name:    "two links known only as at least some bandwidth, with room for the pod, tie",
		links:   map[string][2]float64{"a": {360, 1}, "b": {650, 1}},
		atLeast: map[string]bool{"a": true, "b": true},
		nodes:   []fwk.NodeInfo{node("a"), node("b")},
		want:    map[string]int64{"a": 100, "b": 100},
	}, {
		name:    "a lower bound without room for the pod is ranked by it",
		links:   map[string][2]float64{"a": {30, 0}, "b": {650, 0}},
		atLeast: map[string]bool{"a": true, "b": true},
		nodes:   []fwk.NodeInfo{node("a", assumed("p1", declares("25M"))), node("b")},
		want:    map[string]int64{"a": 0, "b": 100}, // 5 free of at least 30, all in the reserve; the pod needs 10
	}, {
		name:    "a measured link below a roomy lower bound is ranked in proportion to it",
		links:   map[string][2]float64{"a": {100, 0}, "b": {650, 0}},
		atLeast: map[string]bool{"b": true},
		nodes:   []fwk.NodeInfo{node("a"), node("b")},
		want:    map[string]int64{"a": 15, "b": 100},
	}, {
		name:  "idle identical links score alike",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a"), node("b")},
		want:  map[string]int64{"a": 100, "b": 100},
	}, {
		name:  "measured use is taken off the bandwidth",
		links: map[string][2]float64{"a": {100, 60}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a"), node("b")},
		want:  map[string]int64{"a": 27, "b": 100}, // 20 below the target and 20 in the reserve, against 80 and 20
	}, {
		name:  "a pod assumed and not yet bound is counted at its declared need",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", assumed("p1", declares("20M"))), node("b")},
		want:  map[string]int64{"a": 76, "b": 100}, // 60 and 20, against 80 and 20
	}, {
		name:  "pods of one burst add up; one without a declaration counts the default",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", assumed("p1", declares("20M")), assumed("p2", nil)), node("b", assumed("p3", declares("50M")))},
		want:  map[string]int64{"a": 100, "b": 62}, // free 70 and 50: 50 and 30 below the target
	}, {
		name:  "a pod placed well before the window is in the measurement, not counted again",
		links: map[string][2]float64{"a": {100, 30}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", boundAt("old", before, declares("30M"))), node("b", boundAt("new", after, declares("30M")))},
		want:  map[string]int64{"a": 100, "b": 100}, // 70 free each
	}, {
		name:  "a pod placed just before the window, still starting, is counted",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", boundAt("starting", starting, declares("30M"))), node("b")},
		want:  map[string]int64{"a": 63, "b": 100},
	}, {
		name:  "a pod bound well before the window, its image still pulling, is counted: no measurement holds it",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", pulling("pulling", before, declares("30M"))), node("b")},
		want:  map[string]int64{"a": 63, "b": 100},
	}, {
		name:  "a pod bound well before the window, ready only inside it, is counted",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", readyAt("slow-start", before, after, declares("30M"))), node("b", readyAt("ready", before, before, declares("30M")))},
		want:  map[string]int64{"a": 63, "b": 100},
	}, {
		name:  "a pod ready once, its containers not ready now, is counted",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", notReadyNow(readyAt("restarting", before, before, declares("30M")))), node("b")},
		want:  map[string]int64{"a": 63, "b": 100},
	}, {
		name:  "the larger of ingress and egress counts",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", assumed("p1", map[string]string{IngressBandwidthAnnotation: "10M", EgressBandwidthAnnotation: "40M"})), node("b")},
		want:  map[string]int64{"a": 51, "b": 100},
	}, {
		name:  "a full link scores 0, never below",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		nodes: []fwk.NodeInfo{node("a", assumed("p1", declares("150M"))), node("b")},
		want:  map[string]int64{"a": 0, "b": 100},
	}, {
		name:  "a node whose link is not described scores 0: unknown is never the best",
		links: map[string][2]float64{"a": {20, -1}},
		nodes: []fwk.NodeInfo{node("a"), node("unknown")},
		want:  map[string]int64{"a": 100, "unknown": 0},
	}, {
		name:  "no feasible node described: skip",
		links: map[string][2]float64{"other": {100, 0}},
		nodes: []fwk.NodeInfo{node("a"), node("b")},
	}, {
		name:  "without a simulation: skip",
		nodes: []fwk.NodeInfo{node("a"), node("b")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.links != nil {
				body = answerAtLeast(tc.links, tc.atLeast)
			}
			got, _ := scoreCycle(t, newPlugin(t, now), body, tc.nodes)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("scores %v, want %v", got, tc.want)
			}
		})
	}
}

// A burst of ten 20 Mbit/s pods over two idle 100 Mbit/s links, each pod
// going to the best-scored node and assumed there, as the scheduler
// does: five on each link. Without counting them all ten would tie, and
// the first-listed node would take them.
func TestBurstSpreads(t *testing.T) {
	pl := newPlugin(t, measuredAt.Add(time.Second))
	body := answer(map[string][2]float64{"a": {100, 0}, "b": {100, 0}})
	placed := map[string][]*v1.Pod{}
	for i := range 10 {
		nodes := []fwk.NodeInfo{node("a", placed["a"]...), node("b", placed["b"]...)}
		scores, _ := scoreCycle(t, pl, body, nodes)
		best := "a"
		if scores["b"] > scores["a"] {
			best = "b"
		}
		placed[best] = append(placed[best], assumed(fmt.Sprintf("p%d", i), declares("20M")))
	}
	if len(placed["a"]) != 5 || len(placed["b"]) != 5 {
		t.Errorf("burst placed %d on a and %d on b, want 5 and 5", len(placed["a"]), len(placed["b"]))
	}
}

// The target utilization: a link filled to it loses the next pod to a
// slower one with room below its own, though it has the more bandwidth
// free; the value benchmark's middle level, five 16 Mbit/s clients placed
// on a 100 Mbit/s link beside an idle 25 Mbit/s one.
func TestTargetUtilization(t *testing.T) {
	body := answer(map[string][2]float64{"fast": {100, 0}, "slow": {25, 0}})
	var five []*v1.Pod
	for i := range 5 {
		five = append(five, assumed(fmt.Sprintf("p%d", i), declares("16M")))
	}
	tests := []struct {
		name   string
		target int32
		nodes  []fwk.NodeInfo
		want   map[string]int64
	}{{
		name:   "idle: the faster link, with the more room below its target",
		target: 80,
		nodes:  []fwk.NodeInfo{node("fast"), node("slow")},
		want:   map[string]int64{"fast": 100, "slow": 25},
	}, {
		name:   "filled to its target, the faster link ranks by a tenth of its reserve",
		target: 80,
		nodes:  []fwk.NodeInfo{node("fast", five...), node("slow")},
		want:   map[string]int64{"fast": 10, "slow": 100}, // 0 + 20/10 against 20 + 5/10
	}, {
		name:   "a target of the whole link ranks by what is free",
		target: 100,
		nodes:  []fwk.NodeInfo{node("fast", five...), node("slow")},
		want:   map[string]int64{"fast": 80, "slow": 100}, // 20 against 25
	}, {
		name:   "past its target, the faster link loses to one still below its own",
		target: 80,
		nodes:  []fwk.NodeInfo{node("fast", append(five, assumed("p5", declares("16M")))...), node("slow", assumed("q", declares("16M")))},
		want:   map[string]int64{"fast": 9, "slow": 100}, // 4/10 against 4 + 5/10
	}, {
		name:   "both past their targets: the one with the more reserve left",
		target: 80,
		nodes:  []fwk.NodeInfo{node("fast", five...), node("slow", assumed("q", declares("16M")), assumed("r", declares("8M")))},
		want:   map[string]int64{"fast": 100, "slow": 5}, // 20/10 against 1/10
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(context.Background(), &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: tc.target}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := scoreCycle(t, p.(*NetworkCapacity), body, tc.nodes)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("scores %v, want %v", got, tc.want)
			}
		})
	}
}

// linkNote is what the placement event says of node's link: the notes in
// state, as CustomBindPlugin reads them.
func linkNote(state fwk.CycleState, node string) string {
	return strings.Join(placement.Notes(state, node), "; ")
}

func TestDescribe(t *testing.T) {
	pl := newPlugin(t, measuredAt.Add(time.Second))
	_, state := scoreCycle(t, pl, answer(map[string][2]float64{"a": {100, 10}, "b": {100, -1}}),
		[]fwk.NodeInfo{node("a", assumed("p1", declares("20M"))), node("b")})
	if got, want := linkNote(state, "a"), "link: 70 Mbit/s free of 100 Mbit/s, 50 Mbit/s of it below the 80 % fill target (10 Mbit/s in use; 20 Mbit/s counted for 1 pod placed since the measurement)"; got != want {
		t.Errorf("linkNote(a) = %q, want %q", got, want)
	}
	if got := linkNote(state, "b"); !strings.Contains(got, "use not measured") {
		t.Errorf("linkNote(b) = %q, want it to say the use was not measured", got)
	}
	if got := linkNote(state, "c"); got != "" {
		t.Errorf("linkNote(c) = %q for a node not in the cycle, want empty", got)
	}
}

// Pods share a signature when they declare the same bandwidth, and only
// then: the declared need is all of a pod that its scores depend on.
func TestSignPod(t *testing.T) {
	pl := newPlugin(t, measuredAt)
	sign := func(p *v1.Pod) []fwk.SignFragment {
		t.Helper()
		f, s := pl.SignPod(context.Background(), p)
		if !s.IsSuccess() {
			t.Fatalf("SignPod: %v", s)
		}
		return f
	}
	pod := func(name string, annotations ...string) *v1.Pod {
		p := st.MakePod().Name(name)
		for i := 0; i+1 < len(annotations); i += 2 {
			p = p.Annotation(annotations[i], annotations[i+1])
		}
		return p.Obj()
	}
	tests := []struct {
		name string
		a, b *v1.Pod
		same bool
	}{
		{"neither declares", pod("a"), pod("b", "other", "x"), true},
		{"the same ingress", pod("a", IngressBandwidthAnnotation, "20M"), pod("b", IngressBandwidthAnnotation, "20M"), true},
		{"another ingress", pod("a", IngressBandwidthAnnotation, "20M"), pod("b", IngressBandwidthAnnotation, "30M"), false},
		{"ingress against none", pod("a", IngressBandwidthAnnotation, "20M"), pod("b"), false},
		{"ingress against the same egress", pod("a", IngressBandwidthAnnotation, "20M"), pod("b", EgressBandwidthAnnotation, "20M"), false},
		{"another egress", pod("a", EgressBandwidthAnnotation, "1G"), pod("b", EgressBandwidthAnnotation, "2G"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if same := cmp.Equal(sign(tt.a), sign(tt.b)); same != tt.same {
				t.Errorf("pods %v and %v share a signature: %v, want %v", tt.a.Annotations, tt.b.Annotations, same, tt.same)
			}
		})
	}
}

// filterNodes runs PreFilter and, unless it skips, Filter on every node,
// with the simulation body held as CustomScorePlugin's PreFilter holds it
// (nil: none held). It returns each node's status code, nil when PreFilter
// skipped.
func filterNodes(t *testing.T, pl *NetworkCapacity, body []byte, pod *v1.Pod, nodes []fwk.NodeInfo) map[string]string {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	if body != nil {
		network.WriteHeld(state, decoded(t, body))
	}
	if _, s := pl.PreFilter(ctx, state, pod, nodes); s.IsSkip() {
		return nil
	} else if !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	out := map[string]string{}
	for _, n := range nodes {
		s := pl.Filter(ctx, state, pod, n)
		switch {
		case s.IsSuccess():
			out[n.Node().Name] = "fits"
		case s.Code() == fwk.Unschedulable && s.Message() == ErrReasonLinkFull:
			out[n.Node().Name] = "full"
		default:
			t.Fatalf("Filter(%s): %v", n.Node().Name, s)
		}
	}
	return out
}

func TestFilterBelowDeclaredNeed(t *testing.T) {
	now := measuredAt.Add(3 * time.Second)
	before := measuredAt.Add(-30 * time.Second)
	tests := []struct {
		name    string
		links   map[string][2]float64 // nil: no simulation held
		atLeast map[string]bool
		pod     map[string]string
		nodes   []fwk.NodeInfo
		want    map[string]string // nil: PreFilter skips
	}{{
		name:  "a link with less free than the pod declares is filtered out",
		links: map[string][2]float64{"a": {100, 90}, "b": {100, 0}},
		pod:   declares("20M"),
		nodes: []fwk.NodeInfo{node("a"), node("b")},
		want:  map[string]string{"a": "full", "b": "fits"},
	}, {
		name:  "exactly the declared need free fits",
		links: map[string][2]float64{"a": {100, 80}},
		pod:   declares("20M"),
		nodes: []fwk.NodeInfo{node("a")},
		want:  map[string]string{"a": "fits"},
	}, {
		name:  "pods assumed on the node and not yet bound count against it",
		links: map[string][2]float64{"a": {100, 0}, "b": {100, 0}},
		pod:   declares("30M"),
		nodes: []fwk.NodeInfo{node("a", assumed("p1", declares("50M")), assumed("p2", declares("30M"))), node("b", assumed("p3", declares("50M")))},
		want:  map[string]string{"a": "full", "b": "fits"},
	}, {
		name:  "a pod the measurement already holds is not counted again",
		links: map[string][2]float64{"a": {100, 50}},
		pod:   declares("40M"),
		nodes: []fwk.NodeInfo{node("a", boundAt("old", before, declares("50M")))},
		want:  map[string]string{"a": "fits"},
	}, {
		name:  "the larger of ingress and egress is the need",
		links: map[string][2]float64{"a": {100, 70}},
		pod:   map[string]string{IngressBandwidthAnnotation: "10M", EgressBandwidthAnnotation: "40M"},
		nodes: []fwk.NodeInfo{node("a")},
		want:  map[string]string{"a": "full"},
	}, {
		name:    "a link known only as at least some bandwidth passes: not measured is no reason to reject",
		links:   map[string][2]float64{"a": {30, 0}},
		atLeast: map[string]bool{"a": true},
		pod:     declares("50M"),
		nodes:   []fwk.NodeInfo{node("a")},
		want:    map[string]string{"a": "fits"},
	}, {
		name:  "a node the simulation does not describe passes",
		links: map[string][2]float64{"a": {10, 0}},
		pod:   declares("50M"),
		nodes: []fwk.NodeInfo{node("a"), node("unknown")},
		want:  map[string]string{"a": "full", "unknown": "fits"},
	}, {
		name:  "a pod that declares nothing is never filtered: an estimate is no requirement",
		links: map[string][2]float64{"a": {1, 1}},
		nodes: []fwk.NodeInfo{node("a")},
	}, {
		name:  "without a held simulation (PerCycle mode) nothing is filtered",
		pod:   declares("50M"),
		nodes: []fwk.NodeInfo{node("a")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.links != nil {
				body = answerAtLeast(tc.links, tc.atLeast)
			}
			got := filterNodes(t, newPlugin(t, now), body, assumed("new", tc.pod), tc.nodes)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("filter %v, want %v", got, tc.want)
			}
		})
	}
}

// Filter's rejection is undone by a pod leaving a node or a node joining:
// the plugin registers both.
func TestEventsToRegister(t *testing.T) {
	events, err := newPlugin(t, measuredAt).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[fwk.ClusterEvent]bool{}
	for _, e := range events {
		got[e.Event] = true
	}
	for _, want := range []fwk.ClusterEvent{
		{Resource: fwk.AssignedPod, ActionType: fwk.Delete},
		{Resource: fwk.Node, ActionType: fwk.Add},
	} {
		if !got[want] {
			t.Errorf("EventsToRegister has no %v: %v", want, events)
		}
	}
}

// A profile that enables the filter without its PreFilter gets an error
// that says so, not a filter that silently lets every node through.
func TestFilterWithoutPreFilter(t *testing.T) {
	s := newPlugin(t, measuredAt).Filter(context.Background(), framework.NewCycleState(), assumed("new", declares("20M")), node("a"))
	if s.Code() != fwk.Error || !strings.Contains(s.Message(), "preFilter") {
		t.Errorf("Filter without PreFilter: %v, want an error naming preFilter", s)
	}
}

// answerWithin is answer with each bandwidth served with a 95 % interval:
// value, low and high, and no link use.
func answerWithin(links map[string][3]float64) []byte {
	var entries []string
	at := measuredAt.Format(time.RFC3339Nano)
	for node, l := range links {
		entries = append(entries, fmt.Sprintf(`%q: {"score": 1, "latency_ms": 0.1, "bandwidth_mbps": %g, "packet_loss": 0,
			"measured": {"bandwidth_mbps": {"value": %g, "low": %g, "high": %g, "samples": 3, "measured_at": %q, "age_seconds": 0}}}`,
			node, l[0], l[0], l[1], l[2], at))
	}
	return []byte(fmt.Sprintf(`{"results": {%s}, "timestamp": %q, "window_seconds": 5}`, strings.Join(entries, ","), measuredAt.Format(time.RFC3339)))
}

// Noise and trivia do not rank: bandwidths within each other's served
// intervals, or less than a fifth apart, rank as the faster one
// (simulator/api/ties), so links differ by their use and counted pods
// alone. The intervals are narrowed by ties.Narrowing (×0.707): ±10 Mbit/s
// reaches 7.07.
func TestNoiseDoesNotRank(t *testing.T) {
	tests := []struct {
		name  string
		links map[string][3]float64
		nodes []fwk.NodeInfo
		want  map[string]int64
	}{{
		name:  "identical idle links measured a few Mbit/s apart tie",
		links: map[string][3]float64{"a": {98, 88, 108}, "b": {103, 93, 113}},
		nodes: []fwk.NodeInfo{node("a"), node("b")},
		want:  map[string]int64{"a": 100, "b": 100}, // as measured: 95 and 100
	}, {
		name:  "within the noise, the pods counted rank them",
		links: map[string][3]float64{"a": {98, 88, 108}, "b": {103, 93, 113}},
		nodes: []fwk.NodeInfo{node("a", assumed("p1", declares("10M"))), node("b")},
		want:  map[string]int64{"a": 88, "b": 100}, // 72.4 + 2.06 against 82.4 + 2.06; as measured 83
	}, {
		name:  "links told apart rank as measured",
		links: map[string][3]float64{"fast": {100, 90, 110}, "slow": {25, 22.5, 27.5}},
		nodes: []fwk.NodeInfo{node("fast"), node("slow")},
		want:  map[string]int64{"fast": 100, "slow": 25},
	}, {
		name:  "told apart, but less than a fifth apart: too little to count",
		links: map[string][3]float64{"a": {100, 99, 101}, "b": {85, 84, 86}},
		nodes: []fwk.NodeInfo{node("a"), node("b")},
		want:  map[string]int64{"a": 100, "b": 100}, // as measured: 100 and 85
	}, {
		name:  "a link beyond the fastest's reach starts a group of its own, though within a tied link's",
		links: map[string][3]float64{"a": {100, 90, 110}, "b": {94, 84, 104}, "c": {70, 60, 80}},
		nodes: []fwk.NodeInfo{node("a"), node("b"), node("c")},
		want:  map[string]int64{"a": 100, "b": 100, "c": 70},
	}, {
		name:  "an unresolved interval, wider than the links are apart, ties them",
		links: map[string][3]float64{"fast": {100, 20, 180}, "slow": {25, 5, 60}},
		nodes: []fwk.NodeInfo{node("fast"), node("slow")},
		want:  map[string]int64{"fast": 100, "slow": 100},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := scoreCycle(t, newPlugin(t, measuredAt.Add(time.Second)), answerWithin(tc.links), tc.nodes)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("scores %v, want %v", got, tc.want)
			}
		})
	}
}

// A lower bound keeps its bound: ranked at the faster link's bandwidth,
// a link the probes could push only to 11 Mbit/s would take pods as if it
// carried 100.
func TestLowerBoundKeepsItsBound(t *testing.T) {
	at := measuredAt.Format(time.RFC3339Nano)
	body := []byte(fmt.Sprintf(`{"results": {
		"bound": {"score": 1, "bandwidth_mbps": 11, "measured": {"bandwidth_mbps": {"value": 11, "low": 11, "at_least": true, "samples": 3, "measured_at": %q}}},
		"fast": {"score": 1, "bandwidth_mbps": 100, "measured": {"bandwidth_mbps": {"value": 100, "low": 90, "high": 110, "samples": 3, "measured_at": %q}}}},
		"timestamp": %q, "window_seconds": 5}`, at, at, measuredAt.Format(time.RFC3339)))
	got, state := scoreCycle(t, newPlugin(t, measuredAt.Add(time.Second)), body, []fwk.NodeInfo{node("bound"), node("fast")})
	// 8.8 below its target, too little for the 10 Mbit/s default need:
	// ranked by it, 8.8 + 0.22 against 80 + 2.
	if want := map[string]int64{"bound": 11, "fast": 100}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scores %v, want %v", got, want)
	}
	if d := linkNote(state, "bound"); strings.Contains(d, "ranked as") || !strings.Contains(d, "free of at least 11 Mbit/s") {
		t.Errorf("linkNote(bound) = %q: a lower bound reads as one, and must not be ranked as another link", d)
	}
}

func TestDescribeNoise(t *testing.T) {
	_, state := scoreCycle(t, newPlugin(t, measuredAt.Add(time.Second)),
		answerWithin(map[string][3]float64{"a": {98, 88, 108}, "b": {103, 93, 113}}), []fwk.NodeInfo{node("a"), node("b")})
	want := "link: 98 Mbit/s free of 98 Mbit/s, 78 Mbit/s of it below the 80 % fill target (use not measured; 0 Mbit/s counted for 0 pods placed since the measurement; ranked as 103 Mbit/s, within the measurement's noise or a fifth of a faster link)"
	if got := linkNote(state, "a"); got != want {
		t.Errorf("linkNote(a) = %q, want %q", got, want)
	}
	if got := linkNote(state, "b"); strings.Contains(got, "ranked as") {
		t.Errorf("linkNote(b) = %q: the fastest link is ranked as itself", got)
	}
	// Tied at a bandwidth that reads the same: nothing to say.
	_, state = scoreCycle(t, newPlugin(t, measuredAt.Add(time.Second)),
		answerWithin(map[string][3]float64{"a": {98.9, 88, 108}, "b": {99.4, 89, 109}}), []fwk.NodeInfo{node("a"), node("b")})
	if got := linkNote(state, "a"); strings.Contains(got, "ranked as") {
		t.Errorf("linkNote(a) = %q: ranked as the same 99 Mbit/s it reads", got)
	}
}
