package status

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEventTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		e    v1.Event
		want time.Time
	}{
		{"core writer: lastTimestamp", v1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0)}, LastTimestamp: metav1.NewTime(t0.Add(time.Hour))}, t0.Add(time.Hour)},
		{"events.k8s.io writer: eventTime", v1.Event{EventTime: metav1.NewMicroTime(t0.Add(time.Minute))}, t0.Add(time.Minute)},
		{"a series: its last observation", v1.Event{EventTime: metav1.NewMicroTime(t0), Series: &v1.EventSeries{LastObservedTime: metav1.NewMicroTime(t0.Add(2 * time.Hour))}}, t0.Add(2 * time.Hour)},
		{"nothing but creation", v1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0)}}, t0},
	} {
		if got := EventTime(&tc.e); !got.Equal(tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestPlacementsNewestFirst(t *testing.T) {
	t0 := time.Now()
	ev := func(pod string, at time.Time) v1.Event {
		return v1.Event{InvolvedObject: v1.ObjectReference{Namespace: "ns", Name: pod}, Message: pod, EventTime: metav1.NewMicroTime(at)}
	}
	got := Placements([]v1.Event{ev("old", t0.Add(-time.Hour)), ev("new", t0), ev("mid", t0.Add(-time.Minute))}, 2)
	if len(got) != 2 || got[0].Pod != "new" || got[1].Pod != "mid" {
		t.Errorf("Placements = %+v, want new then mid", got)
	}
}

func TestParseMetricsIgnoresOtherSeries(t *testing.T) {
	profiles, err := ParseMetrics(strings.NewReader(`# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 3
# TYPE kns3_simulator_breaker_state gauge
kns3_simulator_breaker_state{profile="a"} 0
kns3_simulator_breaker_state{profile="b"} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(profiles) != 2 || profiles[0].Name != "a" || profiles[0].Breaker != "closed" || profiles[1].Breaker != "open" {
		t.Errorf("profiles %+v", profiles)
	}
	if _, err := ParseMetrics(strings.NewReader("garbage{")); err == nil {
		t.Error("a broken exposition parsed")
	}
}
