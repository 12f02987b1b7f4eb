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

var defaultConfig = config{
	simulateURL:      "http://127.0.0.1:80/simulate",
	shownURL:         "http://127.0.0.1:80/simulate",
	timeout:          5 * time.Second,
	retries:          2,
	retryDelay:       100 * time.Millisecond,
	maxBodyBytes:     8 << 20,
	breakerThreshold: 5,
	breakerCooldown:  time.Second,
	latencyBudget:    time.Second,
	mode:             RefreshPerCycle,
	refreshInterval:  time.Second,
	maxAge:           10 * time.Second,
	normalization:    apiconfig.NormalizationMinMax,
}

func TestNewConfigDefaults(t *testing.T) {
	for name, obj := range map[string]func(t *testing.T) runtime.Object{
		"nil args":       func(*testing.T) runtime.Object { return nil },
		"typed nil args": func(*testing.T) runtime.Object { return (*apiconfig.CustomScorePluginArgs)(nil) },
		"empty object":   func(t *testing.T) runtime.Object { return testArgs(t, "{}") },
		"empty YAML":     func(t *testing.T) runtime.Object { return testArgs(t, "") },
	} {
		t.Run(name, func(t *testing.T) {
			got, err := newConfig(obj(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(defaultConfig, got, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNewConfigOverrides(t *testing.T) {
	got, err := newConfig(testArgs(t, `
simulatorURL: http://reader:secret@sim.kns-3.svc:8080/api/
timeout: 250ms
retries: 0
retryDelay: 0s
maxBodyBytes: 2048
breakerFailureThreshold: 1
breakerCooldown: 1m
breakerLatencyBudget: 200ms
refreshMode: Background
refreshInterval: 2s
maxSimulationAge: 30s
normalization: Absolute
`))
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		simulateURL:      "http://reader:secret@sim.kns-3.svc:8080/api/simulate",
		shownURL:         "http://reader:xxxxx@sim.kns-3.svc:8080/api/simulate",
		timeout:          250 * time.Millisecond,
		retries:          0,
		retryDelay:       0,
		maxBodyBytes:     2048,
		breakerThreshold: 1,
		breakerCooldown:  time.Minute,
		latencyBudget:    200 * time.Millisecond,
		mode:             RefreshBackground,
		refreshInterval:  2 * time.Second,
		maxAge:           30 * time.Second,
		normalization:    apiconfig.NormalizationAbsolute,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{})); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}

func TestNewConfigJSONArgs(t *testing.T) {
	got, err := newConfig(testArgs(t, `{"simulatorURL":"https://10.0.0.1","retries":5,"timeout":"2s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.simulateURL != "https://10.0.0.1/simulate" || got.retries != 5 {
		t.Errorf("got %+v", got)
	}
}

// Args built in code rather than decoded are used as given and left as they
// were.
func TestNewConfigTypedArgs(t *testing.T) {
	in := &apiconfig.CustomScorePluginArgs{
		SimulatorURL:            "http://x",
		Timeout:                 metav1.Duration{Duration: time.Second},
		Retries:                 7,
		RetryDelay:              metav1.Duration{Duration: time.Millisecond},
		MaxBodyBytes:            4096,
		BreakerFailureThreshold: 3,
		BreakerCooldown:         metav1.Duration{Duration: 2 * time.Second},
		BreakerLatencyBudget:    metav1.Duration{Duration: 3 * time.Second},
		RefreshMode:             RefreshPerCycle,
		RefreshInterval:         metav1.Duration{Duration: time.Second},
		MaxSimulationAge:        metav1.Duration{Duration: time.Second},
		Normalization:           apiconfig.NormalizationAbsolute,
	}
	before := in.DeepCopy()
	got, err := newConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		simulateURL:      "http://x/simulate",
		shownURL:         "http://x/simulate",
		timeout:          time.Second,
		retries:          7,
		retryDelay:       time.Millisecond,
		maxBodyBytes:     4096,
		breakerThreshold: 3,
		breakerCooldown:  2 * time.Second,
		latencyBudget:    3 * time.Second,
		mode:             RefreshPerCycle,
		refreshInterval:  time.Second,
		maxAge:           time.Second,
		normalization:    apiconfig.NormalizationAbsolute,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{})); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(before, in); diff != "" {
		t.Errorf("newConfig changed its args (-before,+after):\n%s", diff)
	}
}

func TestNewConfigRejectsOtherTypes(t *testing.T) {
	tests := map[string]struct {
		obj     runtime.Object
		gotType string
	}{
		"undecoded args": {&runtime.Unknown{Raw: []byte("simulatorURL: http://x"), ContentType: runtime.ContentTypeYAML}, "*runtime.Unknown"},
		"another type":   {&metav1.Status{}, "*v1.Status"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := newConfig(tt.obj)
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
func TestNewConfigErrorsNameTheField(t *testing.T) {
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
			_, err := newConfig(testArgs(t, tt.args))
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
