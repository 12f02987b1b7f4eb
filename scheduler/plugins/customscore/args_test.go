package customscore

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
)

// testArgs decodes args written as in a profile's pluginConfig (YAML or
// JSON) with the scheduler's codec, which defaults them and converts them to
// the internal args New receives. It does not validate them: New does.
func testArgs(tb testing.TB, args string) *apiconfig.CustomScorePluginArgs {
	tb.Helper()
	doc := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: CustomScorePluginArgs\n" + args
	if fields, ok := strings.CutPrefix(strings.TrimSpace(args), "{"); ok {
		doc = `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"CustomScorePluginArgs"`
		if strings.TrimSpace(fields) != "}" {
			doc += ","
		}
		doc += fields
	}
	obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(doc), nil, nil)
	if err != nil {
		tb.Fatalf("decoding args %q: %v", args, err)
	}
	a, ok := obj.(*apiconfig.CustomScorePluginArgs)
	if !ok {
		tb.Fatalf("decoding args %q: got %T", args, obj)
	}
	return a
}

// defaults are the internal args of an empty pluginConfig entry, as the
// KNS-3 specification and the breaker's defaults make them.
func defaults() *apiconfig.CustomScorePluginArgs {
	d := func(v time.Duration) metav1.Duration { return metav1.Duration{Duration: v} }
	return &apiconfig.CustomScorePluginArgs{
		SimulatorURL: "http://127.0.0.1:80", Timeout: d(5 * time.Second), Retries: 2, RetryDelay: d(100 * time.Millisecond),
		MaxBodyBytes: 8 << 20, BreakerFailureThreshold: 5, BreakerCooldown: d(time.Second), BreakerLatencyBudget: d(time.Second),
		RefreshMode: apiconfig.RefreshPerCycle, RefreshInterval: d(time.Second), MaxSimulationAge: d(10 * time.Second),
		Normalization:    apiconfig.NormalizationMinMax,
		DriftMarginMilli: 200,
	}
}

func TestGetArgsDefaults(t *testing.T) {
	for name, obj := range map[string]func(t *testing.T) runtime.Object{
		"nil args":       func(*testing.T) runtime.Object { return nil },
		"typed nil args": func(*testing.T) runtime.Object { return (*apiconfig.CustomScorePluginArgs)(nil) },
		"empty object":   func(t *testing.T) runtime.Object { return testArgs(t, "{}") },
		"empty YAML":     func(t *testing.T) runtime.Object { return testArgs(t, "") },
	} {
		t.Run(name, func(t *testing.T) {
			got, err := getArgs(obj(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(defaults(), got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// Args built in code rather than decoded are used as given and left as they
// were.
func TestGetArgsTyped(t *testing.T) {
	in := defaults()
	in.SimulatorURL, in.Retries, in.Normalization = "http://x", 1, apiconfig.NormalizationAbsolute
	before := in.DeepCopy()
	got, err := getArgs(in)
	if err != nil {
		t.Fatal(err)
	}
	if got != in {
		t.Error("getArgs did not return the args it was given")
	}
	if diff := cmp.Diff(before, in); diff != "" {
		t.Errorf("getArgs changed its args (-before,+after):\n%s", diff)
	}
}

func TestGetArgsRejectsOtherTypes(t *testing.T) {
	tests := map[string]struct {
		obj     runtime.Object
		gotType string
	}{
		"undecoded args": {&runtime.Unknown{Raw: []byte("simulatorURL: http://x"), ContentType: runtime.ContentTypeYAML}, "*runtime.Unknown"},
		"another type":   {&metav1.Status{}, "*v1.Status"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := getArgs(tt.obj)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range []string{Name, "want *config.CustomScorePluginArgs", "got " + tt.gotType} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// The validation rules themselves are tested in scheduler/apis/config
// (validation, and scheme with the scheduler's decoder): here, that New
// applies them and names the plugin and the field.
func TestGetArgsErrorsNameTheField(t *testing.T) {
	tests := map[string]struct {
		args string
		want []string
	}{
		"ftp URL":            {`simulatorURL: ftp://127.0.0.1`, []string{"args.simulatorURL", "scheme must be http or https"}},
		"negative timeout":   {`timeout: -1s`, []string{"args.timeout", "greater than 0"}},
		"too many retries":   {`retries: 100`, []string{"args.retries"}},
		"unknown mode":       {`refreshMode: Sometimes`, []string{"args.refreshMode", `"PerCycle"`, `"Background"`}},
		"age under interval": {"refreshMode: Background\nrefreshInterval: 5s\nmaxSimulationAge: 2s", []string{"args.maxSimulationAge", "at least refreshInterval"}},
		"cycle over budget":  {"retries: 10\ntimeout: 5s", []string{"args.retries", "over the 30s a cycle may hold"}},
		"two errors at once": {"timeout: -1s\nretries: -1", []string{"args.timeout", "args.retries"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := getArgs(testArgs(t, tt.args))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range append(tt.want, "invalid "+Name+" args") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
