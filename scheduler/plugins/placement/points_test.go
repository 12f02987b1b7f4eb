package placement

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The live profile's two plugins: the simulator's scores at 10, free
// bandwidth at 20.
func livePoints(simulator, free map[string]int64) []PluginPoints {
	return []PluginPoints{{Plugin: "CustomScorePlugin", Weight: 10, Scores: simulator}, {Plugin: "NetworkCapacity", Weight: 20, Scores: free}}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points []PluginPoints
		node   string
		want   Decision
		clause string
	}{
		{
			name:   "free bandwidth outweighs the simulator's preference",
			points: livePoints(map[string]int64{"a": 0, "b": 100}, map[string]int64{"a": 100, "b": 40}),
			node:   "a",
			want: Decision{Node: "a", RunnerUp: "b", DecidedBy: "NetworkCapacity", Plugins: []PluginMargin{
				{"CustomScorePlugin", 10, 0, 1000}, {"NetworkCapacity", 20, 2000, 800}}},
			clause: "decided by NetworkCapacity: 200 points ahead of runner-up b; points here and on b (weight × normalized score): CustomScorePlugin 0 and 1000, NetworkCapacity 2000 and 800",
		},
		{
			name:   "both put it ahead: the one that put it furthest decided",
			points: livePoints(map[string]int64{"a": 100, "b": 0, "c": 50}, map[string]int64{"a": 100, "b": 90, "c": 10}),
			node:   "a",
			want: Decision{Node: "a", RunnerUp: "b", DecidedBy: "CustomScorePlugin", Plugins: []PluginMargin{
				{"CustomScorePlugin", 10, 1000, 0}, {"NetworkCapacity", 20, 2000, 1800}}},
		},
		{
			name:   "level on KNS-3's points: none of them decided",
			points: livePoints(map[string]int64{"a": 100, "b": 100}, map[string]int64{"a": 100, "b": 100}),
			node:   "b",
			want: Decision{Node: "b", RunnerUp: "a", Plugins: []PluginMargin{
				{"CustomScorePlugin", 10, 1000, 1000}, {"NetworkCapacity", 20, 2000, 2000}}},
			clause: "decided by none of KNS-3's plugins: level with runner-up a; points here and on a (weight × normalized score): CustomScorePlugin 1000 and 1000, NetworkCapacity 2000 and 2000",
		},
		{
			name:   "behind on KNS-3's points, though one plugin preferred it: the profile's other plugins chose",
			points: livePoints(map[string]int64{"a": 100, "b": 0}, map[string]int64{"a": 0, "b": 100}),
			node:   "a",
			want: Decision{Node: "a", RunnerUp: "b", Plugins: []PluginMargin{
				{"CustomScorePlugin", 10, 1000, 0}, {"NetworkCapacity", 20, 0, 2000}}},
			clause: "decided by none of KNS-3's plugins: 1000 points behind runner-up b;",
		},
		{
			name:   "one plugin alone, the runner-up the first name among equals",
			points: []PluginPoints{{Plugin: "CustomScorePlugin", Weight: 10, Scores: map[string]int64{"c": 100, "b": 30, "a": 30}}},
			node:   "c",
			want:   Decision{Node: "c", RunnerUp: "a", DecidedBy: "CustomScorePlugin", Plugins: []PluginMargin{{"CustomScorePlugin", 10, 1000, 300}}},
		},
		{
			name:   "a node one plugin did not score gets none of its points",
			points: livePoints(map[string]int64{"a": 100, "b": 0}, map[string]int64{"b": 100}),
			node:   "a",
			want: Decision{Node: "a", RunnerUp: "b", Plugins: []PluginMargin{
				{"CustomScorePlugin", 10, 1000, 0}, {"NetworkCapacity", 20, 0, 2000}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Decide(tc.points, tc.node)
			if !ok {
				t.Fatal("no decision")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want,+got):\n%s", diff)
			}
			clause := got.Clause()
			if tc.clause != "" && !strings.HasPrefix(clause, tc.clause) {
				t.Errorf("clause %q, want it to begin %q", clause, tc.clause)
			}
			if plugin, found := DecidedBy("Network-aware: x; " + clause + "; link: 1 Mbit/s free"); !found || plugin != got.DecidedBy {
				t.Errorf("DecidedBy(%q) = %q, %t; want %q", clause, plugin, found, got.DecidedBy)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		points []PluginPoints
	}{
		{"no points", nil},
		{"the node not scored", livePoints(map[string]int64{"b": 1}, map[string]int64{"b": 1})},
		{"no other node", livePoints(map[string]int64{"a": 100}, map[string]int64{"a": 100})},
	} {
		if d, ok := Decide(tc.points, "a"); ok {
			t.Errorf("%s: decision %+v, want none", tc.name, d)
		}
	}
}

func TestDecidedByReadsOnlyTheClause(t *testing.T) {
	for _, tc := range []struct {
		message string
		plugin  string
		found   bool
	}{
		{"Network-aware: a has simulator score 0.500, rank 1 of 2 feasible nodes; best alternative b (0.400)", "", false},
		{"Not ranked (single_node): a was the only feasible node, so the scheduler scored no node", "", false},
		{"decided by NetworkCapacity: 1 points ahead of runner-up b", "NetworkCapacity", true},
		{"x; decided by none of KNS-3's plugins: level with runner-up b; points here", "", true},
		// Not the clause's shape: no name is taken from it.
		{"x; decided by the simulator, of course: trust me", "", false},
		{"x; decided by : nothing", "", false},
	} {
		if plugin, found := DecidedBy(tc.message); plugin != tc.plugin || found != tc.found {
			t.Errorf("DecidedBy(%q) = %q, %t; want %q, %t", tc.message, plugin, found, tc.plugin, tc.found)
		}
	}
}

// TestPointsAreTheirOwn: the points left in the state are a copy of the
// list, which the framework owns, and a clone of the state that writes
// its own (upstream's batching re-scoring a node) leaves the cycle's as
// they were.
func TestPointsAreTheirOwn(t *testing.T) {
	state := framework.NewCycleState()
	list := fwk.NodeScoreList{{Name: "a", Score: 100}, {Name: "b", Score: 40}}
	WritePoints(state, PointsKey("P"), list)
	list[0].Score = 7
	clone := state.Clone()
	WritePoints(clone, PointsKey("P"), fwk.NodeScoreList{{Name: "a", Score: 0}, {Name: "b", Score: 100}, {Name: "c", Score: 50}})
	got, ok := ReadPoints(state, "P")
	if want := map[string]int64{"a": 100, "b": 40}; !ok || !cmp.Equal(got, want) {
		t.Errorf("the cycle's points %v, %t; want %v", got, ok, want)
	}
	if got, _ := ReadPoints(clone, "P"); len(got) != 3 {
		t.Errorf("the clone's points %v, want its own three", got)
	}
	if _, ok := ReadPoints(state, "Other"); ok {
		t.Error("points of a plugin that left none")
	}
	if _, ok := ReadPoints(nil, "P"); ok {
		t.Error("points of no state")
	}
}

// The decision comes after the ranking and before the plugins' notes,
// and the whole still fits an event with the longest names.
func TestMessageWithDecision(t *testing.T) {
	d, _ := Decide(livePoints(map[string]int64{"a": 0, "b": 100}, map[string]int64{"a": 100, "b": 40}), "a")
	p := Placement{Node: "a", Score: 500, Rank: 2, Feasible: 2, Alternative: "b", AlternativeScore: 900, Decision: &d, Notes: []string{"link: 80 Mbit/s free"}}
	want := "Network-aware: a has simulator score 0.500, rank 2 of 2 feasible nodes; best alternative b (0.900); " +
		"decided by NetworkCapacity: 200 points ahead of runner-up b; points here and on b (weight × normalized score): " +
		"CustomScorePlugin 0 and 1000, NetworkCapacity 2000 and 800; link: 80 Mbit/s free"
	if got := p.Message(); got != want {
		t.Errorf("message\n%q, want\n%q", got, want)
	}
	long := strings.Repeat("n", 253)
	d, _ = Decide(livePoints(map[string]int64{long + "1": 0, long + "2": 100}, map[string]int64{long + "1": 100, long + "2": 40}), long+"1")
	p = Placement{Node: long + "1", Score: 500, Rank: 2, Feasible: 2, Alternative: long + "2", AlternativeScore: 900, Decision: &d}
	if got := p.Message(); len(got) > MaxMessage || !strings.Contains(got, "decided by NetworkCapacity: ") {
		t.Errorf("message of %d bytes, want at most %d and the decider named:\n%s", len(got), MaxMessage, got)
	}
}
