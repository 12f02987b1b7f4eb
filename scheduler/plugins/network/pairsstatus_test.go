package network

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kns3.dev/kns3/scheduler/apis/status"
)

// TestPairsThroughStatus: the pairs a status holds, published as JSON and
// read back, cost every pair of kept nodes exactly what the answer's
// pairs cost them, stale metrics left out as the answer's reader leaves
// them; a node not kept is in no coordinate and no pair.
func TestPairsThroughStatus(t *testing.T) {
	p := (&Simulation{Body: []byte(pairsAnswer)}).Pairs()
	keep := func(node string) bool { return node != "b" }
	s := p.Status(keep)
	body, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var read status.Pairs
	if err := json.Unmarshal(body, &read); err != nil {
		t.Fatal(err)
	}
	if _, ok := read.Coordinates["b"]; ok {
		t.Errorf("b's coordinate published, want only the nodes kept: %s", body)
	}
	// c–a keeps its latency and loss, not its stale bandwidth; b–c is b's.
	want := []status.MeasuredPair{{From: "a", To: "c", LatencyMs: &status.PairEstimate{Value: 5, Low: 4.5, High: 5.6},
		PacketLoss: &status.PairEstimate{Value: 0.04, Low: 0.03, High: 0.05}}}
	if diff := cmp.Diff(want, read.Measured); diff != "" {
		t.Errorf("measured pairs published (-want +got):\n%s", diff)
	}
	back := PairsFromStatus(&read)
	nodes := []string{"a", "c", "fresh", "odd", "flat", "zz"}
	for _, a := range nodes {
		for _, b := range nodes {
			if diff := cmp.Diff(p.Cost(a, b), back.Cost(a, b)); diff != "" {
				t.Errorf("Cost(%q, %q) through the status (-answer's +status's):\n%s", a, b, diff)
			}
		}
	}
	// Kept, b's pair to c would have its fresh bandwidth bound and its
	// coordinates' round trip.
	all := PairsFromStatus(p.Status(func(string) bool { return true }))
	if diff := cmp.Diff(p.Cost("b", "c"), all.Cost("b", "c")); diff != "" {
		t.Errorf("Cost(b, c) through the status (-answer's +status's):\n%s", diff)
	}
}

func TestPairsFromStatusEmpty(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *status.Pairs
	}{
		{"none", nil},
		{"empty: the answer had none", &status.Pairs{}},
		{"nothing usable", &status.Pairs{
			Coordinates: map[string]status.Coordinate{"a": {}, "b": {Vec: []float64{1}, Error: -1}},
			Measured:    []status.MeasuredPair{{From: "a", To: "a", LatencyMs: &status.PairEstimate{Value: 1}}, {From: "a", To: "b"}},
		}},
	} {
		if p := PairsFromStatus(tc.s); p != nil {
			t.Errorf("%s: PairsFromStatus = %+v, want nil", tc.name, p)
		}
	}
	if s := (*Pairs)(nil).Status(func(string) bool { return true }); s == nil || len(s.Coordinates) != 0 || len(s.Measured) != 0 {
		t.Errorf("a nil Pairs' status = %+v, want empty", s)
	}
}
