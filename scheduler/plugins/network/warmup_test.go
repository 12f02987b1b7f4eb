package network

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A warming-up simulator's answer carries its warm_up: Decode reads it,
// on the fast path for the simulator's own shape, and only an object is a
// warm-up.
func TestDecodeWarmUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want *WarmUp
		fast bool
	}{
		{"the simulator's warm-up", `{"warm_up": {"measured_in_full": 3, "nodes": 100, "quorum": 0.9}, "window_seconds": 15, "results": {"a": {"score": 0}}}`,
			&WarmUp{MeasuredInFull: 3, Nodes: 100, Quorum: 0.9}, true},
		{"after the results", `{"results": {"a": {"score": 0}}, "warm_up": {"measured_in_full": 0, "nodes": 5, "quorum": 1}}`,
			&WarmUp{Nodes: 5, Quorum: 1}, true},
		{"none", `{"results": {"a": {"score": 0.5}}}`, nil, true},
		{"null", `{"results": {"a": {"score": 0.5}}, "warm_up": null}`, nil, true},
		{"not an object", `{"results": {"a": {"score": 0.5}}, "warm_up": true}`, nil, true},
		{"an object with odd fields", `{"results": {"a": {"score": 0}}, "warm_up": {"measured_in_full": "3", "nodes": -2, "quorum": 1.5}}`,
			&WarmUp{}, true},
		{"another case, on encoding/json's path", `{"results": {"a": {"score": 0}}, "Warm_Up": {"nodes": 7}}`, &WarmUp{Nodes: 7}, false},
		{"the array shape", `{"results": [{"node": "a", "score": 0}], "warm_up": {"nodes": 7}}`, &WarmUp{Nodes: 7}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, err := Decode([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sim.WarmUp); diff != "" {
				t.Errorf("WarmUp (-want +got):\n%s", diff)
			}
			if _, fast := fastDecode([]byte(tc.body)); fast != tc.fast {
				t.Errorf("fast path taken: %t, want %t", fast, tc.fast)
			}
		})
	}
}
