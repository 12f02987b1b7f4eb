package networkcapacity

import (
	"context"
	"testing"
	"time"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// A bandwidth no link has (2e16 Mbit/s, a corrupt or hostile answer) must
// not fail the profile's cycles: in kbit/s it overflows an int64, and the
// framework rejects a negative score, failing every cycle. It is no
// bandwidth: the link is not described, and the other links rank.
func TestHugeBandwidth(t *testing.T) {
	body := answer(map[string][2]float64{"huge": {2e16, -1}, "b": {100, -1}})
	got, _ := scoreCycle(t, newPlugin(t, measuredAt.Add(time.Second)), body, []fwk.NodeInfo{node("huge"), node("b")})
	for name, s := range got {
		if s < fwk.MinNodeScore || s > fwk.MaxNodeScore {
			t.Errorf("%s scored %d, out of [%d, %d]: the framework fails the cycle", name, s, fwk.MinNodeScore, fwk.MaxNodeScore)
		}
	}
	if got["huge"] != 0 || got["b"] != fwk.MaxNodeScore {
		t.Errorf("scores %v, want huge 0 (no bandwidth) and b %d", got, fwk.MaxNodeScore)
	}
}

// Score clamps what it cannot hold: whatever a link ranks at, its score
// is not negative.
func TestScoreClamps(t *testing.T) {
	pl := newPlugin(t, measuredAt)
	state := framework.NewCycleState()
	a := &answerLinks{index: map[string]int32{"a": 0}, links: []network.Link{{BandwidthMbps: 1e300, RankedBandwidthMbps: 1e300}}, since: []time.Time{{}}}
	write(state, &Cycle{answer: a, placed: []placedOn{{feasible: true}}, targetPercent: 80})
	s, status := pl.Score(context.Background(), state, nil, node("a"))
	if !status.IsSuccess() {
		t.Fatal(status)
	}
	if s < 0 {
		t.Errorf("Score = %d for a link ranked at 1e300 Mbit/s, want it clamped, not negative", s)
	}
}
