package drift

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

const driftProfile = "kns-3-scheduler"

func runningPod(name, node string) *v1.Pod {
	p := st.MakePod().Namespace("ns").Name(name).UID(name).SchedulerName(driftProfile).Node(node).Obj()
	p.Status.Phase = v1.PodRunning
	return p
}

func newDriftTracker(t *testing.T, clock *time.Time, pods []*v1.Pod, nodes []*v1.Node) *Tracker {
	t.Helper()
	pi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range pods {
		if err := pi.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	ni := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, n := range nodes {
		if err := ni.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	d := New(driftProfile, 200, corelisters.NewPodLister(pi), corelisters.NewNodeLister(ni))
	d.now = func() time.Time { return *clock }
	return d
}

// TestDrift steps a clock through simulations and checks which pods are
// listed as drifted: only after more than a window of fresh numbers with
// the pod's node below a feasible alternative by the margin.
func TestDrift(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sim := func(scores map[string]int64, received time.Time) *status.Simulation {
		return &status.Simulation{MilliScores: scores, WindowSeconds: 30, Received: received}
	}
	nodes := []*v1.Node{
		st.MakeNode().Name("n1").Obj(),
		st.MakeNode().Name("n2").Obj(),
		st.MakeNode().Name("off").Label(placement.LabelScheduler, placement.ValueDisabled).Obj(),
		st.MakeNode().Name("tainted").Taints([]v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}).Obj(),
		st.MakeNode().Name("cordoned").Unschedulable(true).Obj(),
	}
	other := runningPod("other-profile", "n1")
	other.Spec.SchedulerName = "default-scheduler"
	pending := runningPod("pending", "")
	pending.Status.Phase = v1.PodPending
	pods := []*v1.Pod{runningPod("on-n1", "n1"), runningPod("on-n2", "n2"), other, pending}

	for _, tc := range []struct {
		name   string
		scores map[string]int64
		// steps are offsets from t0 at which a simulation received then
		// is judged, the last one's listing checked.
		steps     []time.Duration
		stale     time.Duration // the last step's simulation this old
		want      []string
		wantNow   int64
		wantThen  int64
		wantSince time.Duration
	}{
		{name: "below by the margin for longer than a window", scores: map[string]int64{"n1": 300, "n2": 900},
			steps: []time.Duration{0, 10 * time.Second, 31 * time.Second}, want: []string{"on-n1"}, wantNow: 300, wantThen: 300},
		{name: "not yet a window", scores: map[string]int64{"n1": 300, "n2": 900},
			steps: []time.Duration{0, 29 * time.Second}},
		{name: "within the margin", scores: map[string]int64{"n1": 300, "n2": 499},
			steps: []time.Duration{0, 31 * time.Second}},
		{name: "better alternatives only where the pod may not go", scores: map[string]int64{"n1": 300, "n2": 300, "off": 1000, "tainted": 1000, "cordoned": 1000},
			steps: []time.Duration{0, 31 * time.Second}},
		{name: "the pod's node unscored", scores: map[string]int64{"n2": 900},
			steps: []time.Duration{0, 31 * time.Second}},
		{name: "a stale simulation lists nothing", scores: map[string]int64{"n1": 300, "n2": 900},
			steps: []time.Duration{0, 31 * time.Second}, stale: 61 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := t0
			d := newDriftTracker(t, &clock, pods, nodes)
			var got []string
			var last []string
			for i, at := range tc.steps {
				clock = t0.Add(at)
				received := clock
				if i == len(tc.steps)-1 {
					received = clock.Add(-tc.stale)
				}
				list, omitted := d.Update(sim(tc.scores, received))
				if omitted != 0 {
					t.Errorf("omitted %d", omitted)
				}
				last = last[:0]
				for _, p := range list {
					last = append(last, p.Name)
					if p.Name == "on-n1" && (p.MilliNow != tc.wantNow || p.MilliThen != tc.wantThen || p.Best != "n2" || p.MilliBest != 900 || !p.Since.Equal(t0.Add(tc.wantSince))) {
						t.Errorf("on-n1 listed as %+v", p)
					}
				}
			}
			got = last
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("drifted %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDriftFreshness: a simulation counts while it was received within
// two windows and sampled within three. The newest window a simulator
// serves ended up to a window ago, and a PerCycle profile with no cycles
// refreshes it once per publication, so the numbers a publication reads
// are routinely more than two windows old, and must still count.
func TestDriftFreshness(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	const window = 5 * time.Second
	nodes := []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()}
	for _, tc := range []struct {
		name              string
		received, sampled time.Duration // before each judgement
		want              int
	}{
		{name: "received now, the window just ended", received: 0, sampled: window, want: 1},
		{name: "received an interval ago, sampled a window before", received: 7 * time.Second, sampled: 13 * time.Second, want: 1},
		{name: "received more than two windows ago", received: 11 * time.Second, sampled: 11 * time.Second, want: 0},
		{name: "sampled more than three windows ago", received: 0, sampled: 16 * time.Second, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := t0
			d := newDriftTracker(t, &clock, []*v1.Pod{runningPod("p", "n1")}, nodes)
			sim := func() *status.Simulation {
				return &status.Simulation{MilliScores: map[string]int64{"n1": 100, "n2": 900}, WindowSeconds: int(window / time.Second),
					Received: clock.Add(-tc.received), Timestamp: clock.Add(-tc.sampled)}
			}
			d.Update(sim())
			clock = t0.Add(window + time.Second)
			if list, _ := d.Update(sim()); len(list) != tc.want {
				t.Errorf("listed %d, want %d", len(list), tc.want)
			}
		})
	}
}

// TestDriftClockRestarts checks a stale simulation in the middle restarts
// the pod's clock: stale numbers never add to drift.
func TestDriftClockRestarts(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := t0
	d := newDriftTracker(t, &clock, []*v1.Pod{runningPod("p", "n1")}, []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()})
	scores := map[string]int64{"n1": 100, "n2": 900}
	step := func(at time.Duration, received time.Time) int {
		clock = t0.Add(at)
		list, _ := d.Update(&status.Simulation{MilliScores: scores, WindowSeconds: 30, Received: received})
		return len(list)
	}
	step(0, t0)
	// 20 s later the newest simulation is 61 s old: stale.
	if n := step(20*time.Second, t0.Add(-41*time.Second)); n != 0 {
		t.Fatalf("listed %d on a stale simulation", n)
	}
	// Fresh again at 25 s: the clock runs from 25 s, so 40 s is not yet a window.
	step(25*time.Second, t0.Add(25*time.Second))
	if n := step(40*time.Second, t0.Add(40*time.Second)); n != 0 {
		t.Errorf("listed %d at 40 s: the stale simulation at 20 s should have restarted the clock", n)
	}
	if n := step(56*time.Second, t0.Add(56*time.Second)); n != 1 {
		t.Errorf("listed %d at 56 s, more than a window after 25 s: want 1", n)
	}
	// The pod gone: forgotten.
	d.pods = corelisters.NewPodLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))
	if n := step(60*time.Second, t0.Add(60*time.Second)); n != 0 || len(d.seen) != 0 {
		t.Errorf("after the pod left: listed %d, remembered %d", n, len(d.seen))
	}
}

// defaultTolerations are what the DefaultTolerationSeconds admission
// plugin gives every pod: each with its own tolerationSeconds pointer.
func defaultTolerations() []v1.Toleration {
	seconds := func() *int64 { s := int64(300); return &s }
	return []v1.Toleration{
		{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds()},
		{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: seconds()},
	}
}

// TestDriftClassesByValue: pods the filters treat alike share one pass
// over the nodes, whatever pointers their tolerations hold; pods they
// treat differently get their own.
func TestDriftClassesByValue(t *testing.T) {
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	nodes := []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()}
	var pods []*v1.Pod
	for i := range 50 {
		p := runningPod(fmt.Sprintf("p%02d", i), "n1")
		p.Spec.Tolerations = defaultTolerations()
		pods = append(pods, p)
	}
	rigorous := runningPod("rigorous", "n1")
	rigorous.Spec.Tolerations = defaultTolerations()
	rigorous.Annotations = map[string]string{placement.AnnotationQoS: placement.ValueRigorous}
	longer := runningPod("longer", "n1")
	longer.Spec.Tolerations = defaultTolerations()
	*longer.Spec.Tolerations[0].TolerationSeconds = 600
	d := newDriftTracker(t, &clock, append(pods, rigorous, longer), nodes)
	d.Update(&status.Simulation{MilliScores: map[string]int64{"n1": 100, "n2": 900}, WindowSeconds: 30, Received: clock})
	if d.passes != 3 {
		t.Errorf("%d passes over the nodes for 52 pods in 3 classes, want 3", d.passes)
	}
}

// TestDriftClassesAreBoundedAndDropped: a pod's class is written by its
// owner (a QoS annotation value, tolerations, each up to 256 KiB), and an
// owner can give every pod one of its own. The passes over the nodes stay
// bounded, the classes the profile's pods had before are judged first, so
// a flood of new classes does not hide their drift, and a class no pod
// has any more is dropped.
func TestDriftClassesAreBoundedAndDropped(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := t0
	nodes := []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()}
	old := []*v1.Pod{runningPod("old-1", "n1"), runningPod("old-2", "n1")}
	var flood []*v1.Pod
	for i := range 3 * maxPasses {
		p := runningPod(fmt.Sprintf("flood-%03d", i), "n1")
		p.Annotations = map[string]string{placement.AnnotationQoS: fmt.Sprintf("%03d", i) + strings.Repeat("x", 64<<10)}
		flood = append(flood, p)
	}
	d := newDriftTracker(t, &clock, old, nodes)
	sim := func() *status.Simulation {
		return &status.Simulation{MilliScores: map[string]int64{"n1": 100, "n2": 900}, WindowSeconds: 30, Received: clock}
	}
	d.Update(sim())
	d.pods = corelisters.NewPodLister(indexer(t, append(slices.Clone(old), flood...)))
	clock = t0.Add(31 * time.Second)
	list, _ := d.Update(sim())
	if d.passes > maxPasses {
		t.Errorf("%d passes over the nodes for %d classes, want at most %d", d.passes, 1+len(flood), maxPasses)
	}
	if names := driftedNames(list); !slices.Equal(names, []string{"old-1", "old-2"}) {
		t.Errorf("listed %v drifted, want the pods of the class known before the flood, old-1 and old-2", names)
	}
	if len(d.classes) != 1+len(flood) {
		t.Errorf("%d classes known, want %d", len(d.classes), 1+len(flood))
	}

	// The flood gone: its classes are dropped; a new class comes back.
	d.pods = corelisters.NewPodLister(indexer(t, old))
	d.Update(sim())
	if len(d.classes) != 1 {
		t.Errorf("%d classes known once only one class's pods run, want 1", len(d.classes))
	}
	d.pods = corelisters.NewPodLister(indexer(t, append(slices.Clone(old), flood[0])))
	d.Update(sim())
	if len(d.classes) != 2 || d.passes != 2 {
		t.Errorf("%d classes known and %d passes for two classes, want 2 and 2", len(d.classes), d.passes)
	}
}

func driftedNames(list []status.DriftedPod) []string {
	var names []string
	for _, p := range list {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// TestDriftListIsBounded: past 100 drifted pods the listing keeps the
// longest drifted and counts the rest.
func TestDriftListIsBounded(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := t0
	var pods []*v1.Pod
	for i := range 130 {
		pods = append(pods, runningPod(fmt.Sprintf("p%03d", i), "n1"))
	}
	d := newDriftTracker(t, &clock, pods, []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()})
	sim := func() *status.Simulation {
		return &status.Simulation{MilliScores: map[string]int64{"n1": 100, "n2": 900}, WindowSeconds: 30, Received: clock}
	}
	// The first 30 pods drift from t0, the others from 10 s later.
	late := d.pods
	d.pods = corelisters.NewPodLister(indexer(t, pods[:30]))
	d.Update(sim())
	clock = t0.Add(10 * time.Second)
	d.pods = late
	d.Update(sim())
	clock = t0.Add(time.Minute)
	list, omitted := d.Update(sim())
	if len(list) != 100 || omitted != 30 {
		t.Fatalf("listed %d, omitted %d; want 100 and 30", len(list), omitted)
	}
	for i, p := range list[:30] {
		if !p.Since.Equal(t0) {
			t.Fatalf("entry %d (%s) drifted since %s: the 30 longest drifted must come first", i, p.Name, p.Since)
		}
	}
}

func indexer(t *testing.T, pods []*v1.Pod) cache.Indexer {
	t.Helper()
	pi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range pods {
		if err := pi.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return pi
}

// BenchmarkDriftUpdate is one publish tick's drift pass at the size the
// README names: 5,000 nodes and 10,000 or 50,000 running pods with the
// default tolerations.
func BenchmarkDriftUpdate(b *testing.B) {
	for _, pods := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("nodes=5000/pods=%d", pods), func(b *testing.B) { benchmarkDriftUpdate(b, pods) })
	}
}

func benchmarkDriftUpdate(b *testing.B, pods int) {
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ni := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	scores := map[string]int64{}
	for i := range 5000 {
		n := st.MakeNode().Name(fmt.Sprintf("node-%04d", i)).Obj()
		if err := ni.Add(n); err != nil {
			b.Fatal(err)
		}
		scores[n.Name] = int64(i % 1000)
	}
	pi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range pods {
		p := runningPod(fmt.Sprintf("pod-%05d", i), fmt.Sprintf("node-%04d", i%5000))
		p.Spec.Tolerations = defaultTolerations()
		if err := pi.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	d := New(driftProfile, 200, corelisters.NewPodLister(pi), corelisters.NewNodeLister(ni))
	d.now = func() time.Time { return clock }
	sim := &status.Simulation{MilliScores: scores, WindowSeconds: 30, Received: clock}
	// A tick in the steady state: the tracker has seen the pods before.
	d.Update(sim)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d.Update(sim)
	}
}

// TestDriftExtremeValues: scores anywhere in the int64 range compare
// exactly, and a window the simulator claims beyond any sane length
// counts as the longest one drift allows.
func TestDriftExtremeValues(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	nodes := []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()}
	for _, tc := range []struct {
		name   string
		scores map[string]int64
		window int
		after  time.Duration
		want   int
	}{
		{name: "an alternative far below does not wrap into drift", scores: map[string]int64{"n1": 1000, "n2": math.MinInt64 + 1},
			window: 30, after: 31 * time.Second, want: 0},
		{name: "an alternative far above does not wrap out of drift", scores: map[string]int64{"n1": math.MinInt64, "n2": math.MaxInt64},
			window: 30, after: 31 * time.Second, want: 1},
		{name: "a window that overflows a Duration", scores: map[string]int64{"n1": 100, "n2": 900},
			window: 10_000_000_000, after: 61 * time.Minute, want: 1},
		{name: "a window of decades", scores: map[string]int64{"n1": 100, "n2": 900},
			window: 1_000_000_000, after: 61 * time.Minute, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := t0
			d := newDriftTracker(t, &clock, []*v1.Pod{runningPod("p", "n1")}, nodes)
			sim := func() *status.Simulation {
				return &status.Simulation{MilliScores: tc.scores, WindowSeconds: tc.window, Received: clock, Timestamp: clock}
			}
			d.Update(sim())
			clock = t0.Add(tc.after)
			if list, _ := d.Update(sim()); len(list) != tc.want {
				t.Errorf("listed %d, want %d", len(list), tc.want)
			}
		})
	}
}

// TestDriftReadsEachNewObject: the tracker reads a pod object once, but an
// update brings a new object, read again: a pod that turns rigorous has
// no rigorous node to go to and is no longer listed, and its clock is kept
// across the update while it stays below.
func TestDriftReadsEachNewObject(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := t0
	p := runningPod("p", "n1")
	d := newDriftTracker(t, &clock, []*v1.Pod{p}, []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()})
	sim := func() *status.Simulation {
		return &status.Simulation{MilliScores: map[string]int64{"n1": 100, "n2": 900}, WindowSeconds: 30, Received: clock}
	}
	d.Update(sim())
	// Updated (a label), still below: the clock runs on.
	updated := p.DeepCopy()
	updated.Labels = map[string]string{"app": "web"}
	d.pods = corelisters.NewPodLister(indexer(t, []*v1.Pod{updated}))
	clock = t0.Add(31 * time.Second)
	if list, _ := d.Update(sim()); len(list) != 1 || !list[0].Since.Equal(t0) {
		t.Fatalf("after an update that changes nothing drift reads: %+v, want p drifted since t0", list)
	}
	// Rigorous now: n2 is no candidate.
	rigorous := updated.DeepCopy()
	rigorous.Annotations = map[string]string{placement.AnnotationQoS: placement.ValueRigorous}
	d.pods = corelisters.NewPodLister(indexer(t, []*v1.Pod{rigorous}))
	clock = t0.Add(32 * time.Second)
	if list, _ := d.Update(sim()); len(list) != 0 {
		t.Errorf("a rigorous pod with no rigorous node listed: %+v", list)
	}
	if len(d.views) != 1 {
		t.Errorf("%d pod objects remembered, want only the one listed", len(d.views))
	}
}
