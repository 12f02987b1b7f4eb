package custombind

import (
	"bytes"
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/profile"
)

// recorderHandle is a framework handle that has only an event recorder.
type recorderHandle struct {
	fwk.Handle
	recorder events.EventRecorderLogger
}

func (h recorderHandle) EventRecorder() events.EventRecorderLogger { return h.recorder }

func TestPostBindLogsAtVerbosityOne(t *testing.T) {
	pod := st.MakePod().Namespace("ns").Name("web-0").Obj()
	for _, tc := range []struct {
		verbosity int
		want      string
	}{
		{0, ""},
		{1, `"KNS-3 bound pod to node" pod="ns/web-0" node="worker-node-2" placement="Not ranked (single_node): worker-node-2 was the only feasible node`},
	} {
		var buf bytes.Buffer
		cfg := textlogger.NewConfig(textlogger.Verbosity(tc.verbosity), textlogger.Output(&buf))
		ctx := klog.NewContext(context.Background(), textlogger.NewLogger(cfg))
		pl, err := New(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		pl.(fwk.PostBindPlugin).PostBind(ctx, framework.NewCycleState(), pod, "worker-node-2")
		got := buf.String()
		if tc.want == "" && got != "" {
			t.Errorf("v=%d: logged %q, want nothing", tc.verbosity, got)
		}
		if tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("v=%d: logged %q, want it to contain %q", tc.verbosity, got, tc.want)
		}
		if n := strings.Count(got, "\n"); tc.want != "" && n != 1 {
			t.Errorf("v=%d: %d lines logged, want exactly 1", tc.verbosity, n)
		}
	}
}

// TestPostBindRecordsOnePlacementEvent: each bound pod gets exactly one
// Normal NetworkPlacement event, whose note is the placement's message.
// (The message's content is customscore's table test.)
func TestPostBindRecordsOnePlacementEvent(t *testing.T) {
	recorder := events.NewFakeRecorder(10)
	ctx := context.Background()
	pl, err := New(ctx, nil, recorderHandle{recorder: recorder})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web-0", "web-1"} {
		pod := st.MakePod().Namespace("ns").Name(name).Obj()
		pl.(fwk.PostBindPlugin).PostBind(ctx, framework.NewCycleState(), pod, "node-a")
	}
	close(recorder.Events)
	var got []string
	for e := range recorder.Events {
		got = append(got, e)
	}
	want := v1.EventTypeNormal + " " + EventReason + " Not ranked (single_node): node-a was the only feasible node"
	if len(got) != 2 {
		t.Fatalf("recorded %d events for 2 bound pods, want 2: %q", len(got), got)
	}
	for _, e := range got {
		if !strings.HasPrefix(e, want) {
			t.Errorf("event %q, want prefix %q", e, want)
		}
	}
}

// TestPostBindReadsTheScoringCycle: the event says what the cycle state
// holds, as CustomScorePlugin's PreScore wrote it.
func TestPostBindReadsTheScoringCycle(t *testing.T) {
	recorder := events.NewFakeRecorder(1)
	ctx := context.Background()
	pl, err := New(ctx, nil, recorderHandle{recorder: recorder})
	if err != nil {
		t.Fatal(err)
	}
	state := framework.NewCycleState()
	placement.Write(state, &placement.Cycle{Feasible: []string{"node-a", "node-b"}, Scores: map[string]int64{"node-a": 400, "node-b": 900}})
	pl.(fwk.PostBindPlugin).PostBind(ctx, state, st.MakePod().Namespace("ns").Name("web-0").Obj(), "node-a")
	want := placement.NetworkAwarePrefix + "node-a has simulator score 0.400, rank 2 of 2 feasible nodes; best alternative node-b (0.900)"
	if e := <-recorder.Events; !strings.HasSuffix(e, want) {
		t.Errorf("event %q, want it to end %q", e, want)
	}
}

// linkNote is a plugin's note on the nodes, as NetworkCapacity leaves one.
type linkNote map[string]string

func (n linkNote) Clone() fwk.StateData        { return n }
func (n linkNote) NodeNote(node string) string { return n[node] }

const linkNoteKey fwk.StateKey = "TestPlugin/links"

func init() { placement.RegisterNote(linkNoteKey) }

// TestPostBindAddsThePluginsNotes: the event says what the profile's
// plugins noted of the node the pod went to, and nothing of other nodes.
func TestPostBindAddsThePluginsNotes(t *testing.T) {
	recorder := events.NewFakeRecorder(2)
	ctx := context.Background()
	pl, err := New(ctx, nil, recorderHandle{recorder: recorder})
	if err != nil {
		t.Fatal(err)
	}
	state := framework.NewCycleState()
	placement.Write(state, &placement.Cycle{Feasible: []string{"node-a", "node-b"}, Scores: map[string]int64{"node-a": 900, "node-b": 400}})
	state.Write(linkNoteKey, linkNote{"node-a": "link: 70 Mbit/s free"})
	for _, node := range []string{"node-a", "node-b"} {
		pl.(fwk.PostBindPlugin).PostBind(ctx, state, st.MakePod().Namespace("ns").Name("web-0").Obj(), node)
	}
	if e := <-recorder.Events; !strings.HasSuffix(e, "best alternative node-b (0.400); link: 70 Mbit/s free") {
		t.Errorf("event on node-a %q, want it to end with node-a's note", e)
	}
	if e := <-recorder.Events; strings.Contains(e, "link: ") {
		t.Errorf("event on node-b %q names a link the note says nothing of", e)
	}
}

// listingHandle is a framework handle with an event recorder that lists
// its profile's plugins, as the scheduler's framework does.
type listingHandle struct {
	recorderHandle
	preScore []string
}

func (h listingHandle) ListPlugins() *config.Plugins {
	var ps config.Plugins
	for _, n := range h.preScore {
		ps.PreScore.Enabled = append(ps.PreScore.Enabled, config.Plugin{Name: n})
	}
	return &ps
}

// TestPostBindInAProfileWithoutTheScorePlugin: without CustomScorePlugin
// the cycle never holds its state, so the event must not claim the node
// was the only feasible one; with it, an empty state still means so.
func TestPostBindInAProfileWithoutTheScorePlugin(t *testing.T) {
	for _, tc := range []struct {
		name     string
		preScore []string
		want     string
	}{
		{"without CustomScorePlugin", []string{"TaintToleration"}, "Not ranked (no_score_plugin): node-a chosen by a profile that does not score with CustomScorePlugin"},
		{"with CustomScorePlugin", []string{"TaintToleration", "CustomScorePlugin"}, "Not ranked (single_node): node-a was the only feasible node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorder := events.NewFakeRecorder(1)
			ctx := context.Background()
			pl, err := New(ctx, nil, listingHandle{recorderHandle{recorder: recorder}, tc.preScore})
			if err != nil {
				t.Fatal(err)
			}
			pl.(fwk.PostBindPlugin).PostBind(ctx, framework.NewCycleState(), st.MakePod().Namespace("ns").Name("web-0").Obj(), "node-a")
			if e := <-recorder.Events; !strings.Contains(e, tc.want) {
				t.Errorf("event %q, want it to contain %q", e, tc.want)
			}
		})
	}
}

// scoringHandle is a framework handle with an event recorder whose
// profile scores with the live profile's two KNS-3 plugins.
type scoringHandle struct {
	recorderHandle
	plugins *config.Plugins
}

func (h scoringHandle) ListPlugins() *config.Plugins { return h.plugins }

// TestPostBindNamesThePluginThatDecided: the event weighs the points the
// profile's KNS-3 plugins left with the profile's weights, and names the
// plugin that put the node ahead of the runner-up; without points (the
// scheduler scored no node) it names none.
func TestPostBindNamesThePluginThatDecided(t *testing.T) {
	recorder := events.NewFakeRecorder(2)
	ctx := context.Background()
	h := scoringHandle{recorderHandle{recorder: recorder}, &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{
		{Name: "NodeResourcesFit", Weight: 1}, {Name: status.CustomScorePlugin, Weight: 10}, {Name: status.NetworkCapacity, Weight: 20}}}}}
	profile.DeclareScoring(h, status.ScorePlugin{Name: status.CustomScorePlugin})
	profile.DeclareScoring(h, status.ScorePlugin{Name: status.NetworkCapacity})
	pl, err := New(ctx, nil, h)
	if err != nil {
		t.Fatal(err)
	}
	state := framework.NewCycleState()
	placement.Write(state, &placement.Cycle{Feasible: []string{"node-a", "node-b"}, Scores: map[string]int64{"node-a": 400, "node-b": 900}})
	placement.WritePoints(state, placement.PointsKey(status.CustomScorePlugin), fwk.NodeScoreList{{Name: "node-a", Score: 0}, {Name: "node-b", Score: 100}})
	placement.WritePoints(state, placement.PointsKey(status.NetworkCapacity), fwk.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 25}})
	// Points a plugin the profile does not score with left: not counted.
	placement.WritePoints(state, placement.PointsKey("Stranger"), fwk.NodeScoreList{{Name: "node-b", Score: 100}})
	pl.(fwk.PostBindPlugin).PostBind(ctx, state, st.MakePod().Namespace("ns").Name("web-0").Obj(), "node-a")
	want := "best alternative node-b (0.900); decided by NetworkCapacity: 500 points ahead of runner-up node-b; " +
		"points here and on node-b (weight × normalized score): CustomScorePlugin 0 and 1000, NetworkCapacity 2000 and 500"
	if e := <-recorder.Events; !strings.HasSuffix(e, want) {
		t.Errorf("event %q, want it to end %q", e, want)
	}
	pl.(fwk.PostBindPlugin).PostBind(ctx, framework.NewCycleState(), st.MakePod().Namespace("ns").Name("web-1").Obj(), "node-a")
	if e := <-recorder.Events; strings.Contains(e, "decided by") {
		t.Errorf("event %q names a decider without points", e)
	}
}
