package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kns3.dev/kns3/installclient"
	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
)

func TestPlacementsNewestFirst(t *testing.T) {
	t0 := time.Now()
	ev := func(pod string, at time.Time) v1.Event {
		return v1.Event{InvolvedObject: v1.ObjectReference{Namespace: "ns", Name: pod}, Message: pod, EventTime: metav1.NewMicroTime(at)}
	}
	got := Placements([]v1.Event{ev("old", t0.Add(-time.Hour)), ev("new", t0), ev("mid", t0.Add(-time.Minute))})
	if len(got) != 3 || got[0].Pod != "new" || got[1].Pod != "mid" || got[2].Pod != "old" {
		t.Errorf("Placements = %+v, want new, mid, old", got)
	}
}

func TestBuildAndPrint(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kns-3-system", Name: "kns-3-scheduler-x"}, Spec: v1.PodSpec{NodeName: "cp"}}
	doc := func(profile, breaker string, published time.Time, down bool) schedstatus.ProfileStatus {
		d := schedstatus.ProfileStatus{
			Profile: profile, Instance: "kns-3-scheduler-x", Published: published, IntervalSeconds: 5, HeartbeatSeconds: 60,
			RefreshMode: "PerCycle", Breaker: breaker, ScoredCycles: 12,
			Fallbacks: map[string]int64{"breaker_open": 7, "simulator_failed": 3, "stale": 0},
			Simulator: schedstatus.Simulator{
				LastSuccess: now.Add(-10 * time.Second),
				Simulation: &schedstatus.Simulation{Received: now.Add(-10 * time.Second), Source: "lab\x1b[2J", WindowSeconds: 30,
					Timestamp: now.Add(-20 * time.Second), MilliScores: map[string]int64{"a": 900, "b": 100}, Omitted: 3},
			},
		}
		if down {
			d.Simulator.LastFailure, d.Simulator.LastError = now.Add(-2*time.Second), "connection refused"
		}
		return d
	}
	in := &installclient.Install{
		Kind: installclient.SecondScheduler, Namespace: "kns-3-system",
		Pods:     []installclient.Pod{{Pod: pod, SchedulerReady: true, Restarts: 1, Publishing: true}},
		Ignored:  []string{"kns-3-system/fake"},
		Profiles: []schedstatus.ProfileStatus{doc("kns-3-scheduler", "open", now.Add(-3*time.Second), true), doc("old", "closed", now.Add(-time.Hour), false)},
	}
	events := []v1.Event{{InvolvedObject: v1.ObjectReference{Namespace: "ns", Name: "web"}, Message: "Network-aware:\n\x1b]0;x\x07 forged?", EventTime: metav1.NewMicroTime(now.Add(-time.Minute))}}
	s := Build(in, events, now)
	p := s.Profiles[0]
	if p.FallbacksTotal != 10 || !p.Simulator.Down || p.Simulator.Nodes != 5 || p.Stale {
		t.Errorf("profile %+v", p)
	}
	if !s.Profiles[1].Stale {
		t.Error("a document an hour old is not stale")
	}
	var out bytes.Buffer
	if err := Print(&out, s, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"KNS-3 install: second-scheduler, namespace kns-3-system.",
		"kns-3-system/kns-3-scheduler-x   cp     ready       not ready   1          yes",
		"kns-3-scheduler   PerCycle   open      12              10          breaker_open=7,simulator_failed=3   3s ago by kns-3-scheduler-x",
		"(stale: the scheduler stopped publishing)",
		"Simulator (kns-3-scheduler): down: the last request, 2s ago, failed: connection refused; newest simulation received 10s ago: source \"lab^[[2J\", sampled 2026-11-30T09:59:40Z over a 30s window, 5 nodes scored.",
		"Simulator (old): answered 10s ago;",
		`ns/web            1m0s   Network-aware:\n^[]0;x\x07 forged?`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Errorf("output holds a control character:\n%q", out.String())
	}
}

func TestPrintDrift(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	doc := schedstatus.ProfileStatus{Profile: "kns-3-scheduler", Published: now, HeartbeatSeconds: 60,
		Drift:        []schedstatus.DriftedPod{{Namespace: "ns", Name: "web\x1b[2J", Node: "w2", MilliThen: 707, MilliNow: 18, Best: "w3", MilliBest: 590, Since: now.Add(-90 * time.Second)}},
		DriftOmitted: 4}
	in := &installclient.Install{Kind: installclient.SecondScheduler, Namespace: "kns-3-system", Profiles: []schedstatus.ProfileStatus{doc}}
	var b bytes.Buffer
	if err := Print(&b, Build(in, nil, now), now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"DRIFTED POD",
		"ns/web^[[2J   kns-3-scheduler   w2     0.707        0.018       w3 (0.590)      1m30s ago",
		"(kns-3-scheduler: 4 more drifted pods not listed)",
		"KNS-3 never evicts",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	in.Profiles[0].Drift, in.Profiles[0].DriftOmitted = nil, 0
	b.Reset()
	if err := Print(&b, Build(in, nil, now), now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Drifted pods: none") {
		t.Errorf("without drift:\n%s", b.String())
	}
}

// Print escapes every field it did not write: the pods table, the
// document's mode and breaker, the placements' namespace and pod.
func TestPrintEscapesEveryField(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := &output.Status{Install: "second-scheduler", Namespace: "kns-3-system",
		Pods: []output.SchedulerPod{{Namespace: "kns-3-system", Name: "p\x1b[2J", Node: "n\x07", SchedulerReady: true}},
		Profiles: []output.Profile{{Name: "kns-3-scheduler", RefreshMode: "Per\x1b[2JCycle", Breaker: "open\x07",
			Published: metav1.NewTime(now), Fallbacks: map[string]int64{}}},
		Placements: []output.Placement{{Time: metav1.NewTime(now), Namespace: "ns\x1b]0;x\x07", Pod: "web\x1b[2J", Message: "m"}},
	}
	var out bytes.Buffer
	if err := Print(&out, s, now); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Errorf("output holds a control character:\n%q", out.String())
	}
	for _, want := range []string{"kns-3-system/p^[[2J", "Per^[[2JCycle", `open\x07`, `ns^[]0;x\x07/web^[[2J`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
