package profile

import (
	"reflect"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"kns3.dev/kns3/scheduler/apis/status"
)

// listingHandle lists its profile's plugins, as the scheduler's framework
// does once built.
type listingHandle struct {
	fwk.Handle
	plugins *config.Plugins
}

func (h listingHandle) ListPlugins() *config.Plugins { return h.plugins }

func TestRuns(t *testing.T) {
	profile := listingHandle{plugins: &config.Plugins{
		PreFilter: config.PluginSet{Enabled: []config.Plugin{{Name: "A"}}},
		PreScore:  config.PluginSet{Enabled: []config.Plugin{{Name: "B"}, {Name: "A"}}},
	}}
	for _, tc := range []struct {
		name        string
		h           fwk.Handle
		point       Point
		plugin      string
		runs, known bool
	}{
		{"enabled", profile, PreFilter, "A", true, true},
		{"enabled second", profile, PreScore, "A", true, true},
		{"not at this point", profile, PreFilter, "B", false, true},
		{"at no point", profile, Score, "A", false, true},
		{"a handle that lists nothing", listingHandle{}, PreScore, "A", false, false},
		{"a handle that cannot list", nil, PreScore, "A", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if runs, known := Runs(tc.h, tc.point, tc.plugin); runs != tc.runs || known != tc.known {
				t.Errorf("Runs(%s, %s) = %t, %t; want %t, %t", tc.point, tc.plugin, runs, known, tc.runs, tc.known)
			}
		})
	}
}

func TestRunsPanicsOnNoExtensionPoint(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Runs at \"Prescore\" did not panic: a misspelt point would read as a plugin not run")
		}
	}()
	Runs(listingHandle{plugins: &config.Plugins{}}, "Prescore", "A")
}

// TestEveryExtensionPoint: the switch names every PluginSet field of
// config.Plugins, each as its own point, so that an extension point a
// later Kubernetes adds fails here rather than panicking in a cycle.
func TestEveryExtensionPoint(t *testing.T) {
	ps := &config.Plugins{}
	v := reflect.ValueOf(ps).Elem()
	for i := range v.NumField() {
		field := v.Type().Field(i)
		if field.Type != reflect.TypeFor[config.PluginSet]() {
			continue
		}
		// Mark this field alone, and ask for it by its name.
		v.Field(i).Set(reflect.ValueOf(config.PluginSet{Enabled: []config.Plugin{{Name: "marked"}}}))
		set, ok := pluginSet(ps, Point(field.Name))
		if !ok || len(set.Enabled) != 1 {
			t.Errorf("point %s: pluginSet = %+v, %t; want the field's set", field.Name, set, ok)
		}
		v.Field(i).Set(reflect.ValueOf(config.PluginSet{}))
	}
}

// TestScoring: the KNS-3 plugins that declared their scoring, in the
// profile's order at Score, with the profile's weights; a plugin the
// profile does not score with, or another profile's, is left out.
func TestScoring(t *testing.T) {
	h := listingHandle{plugins: &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{
		{Name: "NodeResourcesFit", Weight: 1}, {Name: status.NetworkCapacity, Weight: 20}, {Name: status.CustomScorePlugin, Weight: 10}}}}}
	other := listingHandle{plugins: &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{{Name: status.CustomScorePlugin, Weight: 3}}}}}
	capacity := &status.CapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 80}
	DeclareScoring(h, status.ScorePlugin{Name: status.CustomScorePlugin})
	DeclareScoring(h, status.ScorePlugin{Name: status.NetworkCapacity, Capacity: capacity})
	DeclareScoring(h, status.ScorePlugin{Name: "NotScoring"})
	DeclareScoring(nil, status.ScorePlugin{Name: "Nowhere"})
	got, known := Scoring(h)
	want := []status.ScorePlugin{{Name: status.NetworkCapacity, Weight: 20, Capacity: capacity}, {Name: status.CustomScorePlugin, Weight: 10}}
	if !known || !reflect.DeepEqual(got, want) {
		t.Errorf("Scoring = %+v, %t; want %+v", got, known, want)
	}
	if got, known := Scoring(other); !known || len(got) != 0 {
		t.Errorf("Scoring of a profile where nothing declared = %+v, %t; want none, known", got, known)
	}
	if _, known := Scoring(nil); known {
		t.Error("Scoring of a handle that cannot list: known")
	}
}

// unkeyedHandle holds a slice: it cannot key a map, and must not panic.
type unkeyedHandle struct {
	fwk.Handle
	names []string
}

func (h unkeyedHandle) ListPlugins() *config.Plugins { return &config.Plugins{} }

func TestScoringOfAnUnkeyedHandle(t *testing.T) {
	h := unkeyedHandle{names: []string{"x"}}
	DeclareScoring(h, status.ScorePlugin{Name: status.CustomScorePlugin})
	if got, known := Scoring(h); known || got != nil {
		t.Errorf("Scoring = %+v, %t; want unknown", got, known)
	}
}
