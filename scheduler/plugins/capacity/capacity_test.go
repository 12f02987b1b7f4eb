package capacity

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

func pod(annotations map[string]string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: annotations}}
}

func TestNeedMbps(t *testing.T) {
	tests := []struct {
		annotations map[string]string
		want        float64
	}{
		{nil, 7},
		{map[string]string{IngressBandwidthAnnotation: "20M"}, 20},
		{map[string]string{IngressBandwidthAnnotation: "1G"}, 1000},
		{map[string]string{EgressBandwidthAnnotation: "500k"}, 0.5},
		{map[string]string{IngressBandwidthAnnotation: "lots"}, 7},
		{map[string]string{IngressBandwidthAnnotation: "-5M"}, 7},
		{map[string]string{IngressBandwidthAnnotation: "lots", EgressBandwidthAnnotation: "3M"}, 3},
		{map[string]string{IngressBandwidthAnnotation: "2M", EgressBandwidthAnnotation: "3M"}, 3},
	}
	for _, tc := range tests {
		if got := NeedMbps(pod(tc.annotations), 7); got != tc.want {
			t.Errorf("NeedMbps(%v) = %g, want %g", tc.annotations, got, tc.want)
		}
	}
}

// A pod counts against its link from the window's start less six seconds
// (a second of rounding, five for its traffic to start) after its
// containers became ready, until it finishes; a pod not ready yet, or not
// bound yet, is as if placed now, however long ago it was bound.
func TestCounted(t *testing.T) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	now := start.Add(10 * time.Second)
	started := func(at time.Time, phase v1.PodPhase) *v1.Pod {
		p := pod(nil)
		p.Status.Phase = phase
		p.Status.Conditions = []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at.Add(-time.Minute))},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)},
		}
		return p
	}
	notReady := func(bound time.Time) *v1.Pod {
		p := started(bound, v1.PodPending)
		p.Status.Conditions[1].Status = v1.ConditionFalse
		return p
	}
	readyOnly := func(at time.Time) *v1.Pod {
		p := pod(nil)
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"started long before the window", started(start.Add(-time.Minute), v1.PodRunning), false},
		{"started just before the window", started(start.Add(-5*time.Second), v1.PodRunning), true},
		{"started at the bound itself", started(start.Add(-6*time.Second), v1.PodRunning), false},
		{"started in the window", started(start.Add(time.Second), v1.PodRunning), true},
		{"bound long ago, still starting (pulling its image)", notReady(start.Add(-time.Hour)), true},
		{"ready by its Ready condition alone", readyOnly(start.Add(-time.Minute)), false},
		{"assumed, not bound", pod(nil), true},
		{"finished", started(start.Add(time.Second), v1.PodSucceeded), false},
		{"failed", started(start.Add(time.Second), v1.PodFailed), false},
	} {
		if got := Counted(tc.pod, start, now); got != tc.want {
			t.Errorf("%s: Counted = %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestRoomAndRank(t *testing.T) {
	for _, tc := range []struct {
		bandwidth, use, counted float64
		free, below, rank       float64
	}{
		{100, 10, 20, 70, 50, 52}, // 20 of reserve: 50 + 2
		{100, 0, 0, 100, 80, 82},  // idle
		{100, 90, 0, 10, 0, 1},    // in the reserve only
		{100, 80, 40, 0, 0, 0},    // over full
		{25, 5, 0, 20, 15, 15.5},  // a slower link
		{11, 0, 0, 11, 8.8, 9.02}, // a lower bound's
		{100, 0, 100, 0, 0, 0},    // counted full
		{100, 30, 10.5, 59.5, 39.5, 41.5},
	} {
		free, below := Room(tc.bandwidth, tc.use, tc.counted, 80)
		rank := RankMbps(free, below)
		if fmt.Sprintf("%.2f %.2f %.2f", free, below, rank) != fmt.Sprintf("%.2f %.2f %.2f", tc.free, tc.below, tc.rank) {
			t.Errorf("Room(%g, %g, %g, 80) = %g, %g ranked %g; want %g, %g ranked %g", tc.bandwidth, tc.use, tc.counted, free, below, rank, tc.free, tc.below, tc.rank)
		}
	}
	if got := RankMilli(52.0004); got != 52000 {
		t.Errorf("RankMilli(52.0004) = %d, want 52000", got)
	}
}

func TestNormalize(t *testing.T) {
	list := func(scores ...int64) fwk.NodeScoreList {
		out := make(fwk.NodeScoreList, len(scores))
		for i, s := range scores {
			out[i] = fwk.NodeScore{Name: fmt.Sprintf("n%d", i), Score: s}
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		scores     fwk.NodeScoreList
		asMostFree func(string) bool
		want       []int64
	}{
		{"in proportion to the most free", list(82000, 41000, 0), nil, []int64{100, 50, 0}},
		{"a few Mbit/s apart, a few points apart", list(82000, 79000), nil, []int64{100, 96}},
		{"all full", list(0, 0), nil, []int64{0, 0}},
		{"a roomy lower bound scores as the most free", list(9020, 82000), func(n string) bool { return n == "n0" }, []int64{100, 100}},
	} {
		Normalize(tc.scores, tc.asMostFree)
		for i, s := range tc.scores {
			if s.Score != tc.want[i] {
				t.Errorf("%s: %s scored %d, want %d", tc.name, s.Name, s.Score, tc.want[i])
			}
		}
	}
}
