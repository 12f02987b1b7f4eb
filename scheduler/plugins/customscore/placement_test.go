package customscore

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/scheduler/plugins/placement"
)

// TestPlacementFromPreScore runs PreScore and reads its placement, as the
// binding cycle does.
func TestPlacementFromPreScore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		status int
		want   placement.Placement
	}{
		{name: "scored", status: 200, body: `{"results":{"n1":{"score":0.9},"n2":{"score":0.4}}}`,
			want: placement.Placement{Node: "n2", Score: 400, Rank: 2, Feasible: 2, Alternative: "n1", AlternativeScore: 900}},
		{name: "simulator fails", status: 500, body: `{"detail":"down"}`,
			want: placement.Placement{Node: "n2", Fallback: placement.FallbackSimulatorFailed, Feasible: 2}},
		{name: "no candidate scored", status: 200, body: `{"results":{"other":{"score":0.9}}}`,
			want: placement.Placement{Node: "n2", Fallback: placement.FallbackNoneScored, Feasible: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			pl := newTestPlugin(t, srv.URL, "retries: 0")
			state := framework.NewCycleState()
			pl.PreScore(t.Context(), state, st.MakePod().Name("p").Obj(), nodeInfos("n1", "n2"))
			if got := placement.FromCycleState(state, nil, "n2"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FromCycleState = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPlacementWithoutPreScore(t *testing.T) {
	pod := st.MakePod().Name("p").Obj()
	if got := placement.FromCycleState(framework.NewCycleState(), pod, "a"); got.Fallback != placement.FallbackSingleNode {
		t.Errorf("FromCycleState an unscored cycle = %+v, want %s", got, placement.FallbackSingleNode)
	}
	if got := placement.FromCycleState(nil, pod, "a"); got.Fallback != placement.FallbackSingleNode {
		t.Errorf("FromCycleState without state = %+v, want %s", got, placement.FallbackSingleNode)
	}
}

// The key names the plugin, as upstream's keys do.
func TestStateKeyNamesThePlugin(t *testing.T) {
	if want := fwk.StateKey(Name + "/simulation"); placement.StateKey != want {
		t.Errorf("placement.StateKey = %q, want %q", placement.StateKey, want)
	}
}
