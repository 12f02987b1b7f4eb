package profile

import (
	"reflect"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
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
