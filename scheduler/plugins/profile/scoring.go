package profile

import (
	"reflect"
	"sync"

	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/apis/status"
)

// declared is what each KNS-3 score plugin declared of its scoring, by the
// framework handle of its profile: the plugins of one profile share it,
// so two profiles, or schedulers, in one process never mix. A profile's
// framework lives as long as its scheduler, and so does its entry.
var declared = struct {
	sync.Mutex
	byHandle map[fwk.Handle]map[string]status.ScorePlugin
}{byHandle: map[fwk.Handle]map[string]status.ScorePlugin{}}

// DeclareScoring records, from a KNS-3 score plugin's New, what a reader
// needs to work out the points the plugin gives a node in h's profile
// (its name and args; the weight is the profile's, see Scoring). The
// published status says it, so that kubectl kns3 explain can rank nodes
// as the profile does. Nothing is recorded without a handle, or for a
// handle that cannot key a map (a test's, holding a slice).
func DeclareScoring(h fwk.Handle, plugin status.ScorePlugin) {
	if !keys(h) {
		return
	}
	declared.Lock()
	defer declared.Unlock()
	if declared.byHandle[h] == nil {
		declared.byHandle[h] = map[string]status.ScorePlugin{}
	}
	declared.byHandle[h][plugin.Name] = plugin
}

// Scoring returns the KNS-3 plugins h's profile scores nodes with (those
// that declared their scoring and that the profile runs at Score), in the
// profile's order, each with its weight there; known is false when h
// cannot list its plugins (a test's handle, or a framework not built yet:
// ask from a cycle or once the scheduler runs, not from New).
func Scoring(h fwk.Handle) (scoring []status.ScorePlugin, known bool) {
	ps := plugins(h)
	if ps == nil || !keys(h) {
		return nil, false
	}
	declared.Lock()
	defer declared.Unlock()
	for _, p := range ps.Score.Enabled {
		if d, ok := declared.byHandle[h][p.Name]; ok {
			d.Weight = p.Weight
			scoring = append(scoring, d)
		}
	}
	return scoring, true
}

// keys reports whether h can key the map of declarations: the scheduler's
// framework (a pointer) can; a test's handle may hold a slice.
func keys(h fwk.Handle) bool {
	return h != nil && reflect.ValueOf(h).Comparable()
}
