package customscore

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"
)

func unknown(yamlArgs string) runtime.Object {
	return &runtime.Unknown{Raw: []byte(yamlArgs), ContentType: runtime.ContentTypeYAML}
}

func TestNewConfigDefaults(t *testing.T) {
	want := config{
		simulateURL:      "http://127.0.0.1:80/simulate",
		timeout:          5 * time.Second,
		retries:          2,
		retryDelay:       100 * time.Millisecond,
		maxBodyBytes:     8 << 20,
		breakerThreshold: 5,
		breakerCooldown:  time.Second,
		mode:             RefreshPerCycle,
		refreshInterval:  time.Second,
		maxAge:           10 * time.Second,
	}
	for name, obj := range map[string]runtime.Object{
		"nil args":      nil,
		"empty unknown": &runtime.Unknown{},
		"empty object":  unknown("{}"),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := newConfig(obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNewConfigOverrides(t *testing.T) {
	got, err := newConfig(unknown(`
simulatorURL: http://sim.kns-3.svc:8080/api/
timeout: 250ms
retries: 0
retryDelay: 0s
maxBodyBytes: 2048
breakerFailureThreshold: 1
breakerCooldown: 1m
refreshMode: Background
refreshInterval: 2s
maxSimulationAge: 30s
`))
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		simulateURL:      "http://sim.kns-3.svc:8080/api/simulate",
		timeout:          250 * time.Millisecond,
		retries:          0,
		retryDelay:       0,
		maxBodyBytes:     2048,
		breakerThreshold: 1,
		breakerCooldown:  time.Minute,
		mode:             RefreshBackground,
		refreshInterval:  2 * time.Second,
		maxAge:           30 * time.Second,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{})); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}

func TestNewConfigJSONArgs(t *testing.T) {
	got, err := newConfig(&runtime.Unknown{Raw: []byte(`{"simulatorURL":"https://10.0.0.1","retries":5}`), ContentType: runtime.ContentTypeJSON})
	if err != nil {
		t.Fatal(err)
	}
	if got.simulateURL != "https://10.0.0.1/simulate" || got.retries != 5 {
		t.Errorf("got %+v", got)
	}
}

func TestNewConfigErrorsNameTheField(t *testing.T) {
	tests := map[string]struct {
		args string
		want []string
	}{
		"bad URL":             {`simulatorURL: "http://[::1"`, []string{"args.simulatorURL"}},
		"URL without scheme":  {`simulatorURL: 127.0.0.1:80`, []string{"args.simulatorURL"}},
		"ftp URL":             {`simulatorURL: ftp://127.0.0.1`, []string{"args.simulatorURL", "scheme must be http or https"}},
		"URL without host":    {`simulatorURL: "http://"`, []string{"args.simulatorURL", "host"}},
		"URL with query":      {`simulatorURL: "http://a/?x=1"`, []string{"args.simulatorURL", "query"}},
		"negative timeout":    {`timeout: -1s`, []string{"args.timeout", "greater than 0"}},
		"zero timeout":        {`timeout: 0s`, []string{"args.timeout"}},
		"huge timeout":        {`timeout: 10m`, []string{"args.timeout"}},
		"negative retries":    {`retries: -1`, []string{"args.retries"}},
		"too many retries":    {`retries: 100`, []string{"args.retries"}},
		"negative delay":      {`retryDelay: -5ms`, []string{"args.retryDelay"}},
		"tiny body limit":     {`maxBodyBytes: 10`, []string{"args.maxBodyBytes"}},
		"zero threshold":      {`breakerFailureThreshold: 0`, []string{"args.breakerFailureThreshold"}},
		"zero cooldown":       {`breakerCooldown: 0s`, []string{"args.breakerCooldown"}},
		"unknown mode":        {`refreshMode: Sometimes`, []string{"args.refreshMode", `"PerCycle"`, `"Background"`}},
		"mode case":           {`refreshMode: background`, []string{"args.refreshMode"}},
		"zero interval":       {`refreshInterval: 0s`, []string{"args.refreshInterval"}},
		"age under interval":  {"refreshInterval: 5s\nmaxSimulationAge: 2s", []string{"args.maxSimulationAge", "at least refreshInterval"}},
		"misspelt field":      {`simulatorAddress: http://x`, []string{`unknown field "simulatorAddress"`}},
		"duration not parsed": {`timeout: five`, []string{"args.timeout", "invalid duration"}},
		"field name case":     {`simulatorUrl: http://x`, []string{`unknown field "simulatorUrl"`}},
		"duplicate field":     {"retries: 1\nretries: 2", []string{"retries"}},
		"two errors at once":  {"timeout: -1s\nretries: -1", []string{"args.timeout", "args.retries"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := newConfig(unknown(tt.args))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), Name) {
				t.Errorf("error %q does not name the plugin", err)
			}
		})
	}
}

func TestDecodeArgsTyped(t *testing.T) {
	r := int32(7)
	in := &CustomScorePluginArgs{SimulatorURL: "http://x", Retries: &r}
	got, err := decodeArgs(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	*got.Retries = 1
	if *in.Retries != 7 {
		t.Error("decodeArgs must copy typed args, not alias them")
	}
}
