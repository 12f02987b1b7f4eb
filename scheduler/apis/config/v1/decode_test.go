package v1

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestUnmarshalJSON(t *testing.T) {
	tests := map[string]struct {
		json string
		want *CustomScorePluginArgs
		// wantErr are substrings of the error; wantField is the path a
		// *field.Error must name, if any; wantStrict says the error is a
		// strict decoding error.
		wantErr    []string
		wantField  string
		wantStrict bool
	}{
		"empty":  {json: `{}`, want: &CustomScorePluginArgs{}},
		"null":   {json: `null`, want: &CustomScorePluginArgs{}},
		"fields": {json: `{"simulatorURL":"https://10.0.0.1","retries":5,"timeout":"250ms","refreshMode":"Background"}`, want: &CustomScorePluginArgs{SimulatorURL: "https://10.0.0.1", Retries: ptrTo[int32](5), Timeout: duration(250 * time.Millisecond), RefreshMode: RefreshBackground}},
		"type meta": {
			json: `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"CustomScorePluginArgs","retries":0}`,
			want: func() *CustomScorePluginArgs {
				a := &CustomScorePluginArgs{Retries: ptrTo[int32](0)}
				a.APIVersion, a.Kind = "kubescheduler.config.k8s.io/v1", "CustomScorePluginArgs"
				return a
			}(),
		},
		"unknown field":   {json: `{"simulatorAddress":"http://x"}`, wantErr: []string{`unknown field "simulatorAddress"`}, wantStrict: true},
		"field name case": {json: `{"simulatorUrl":"http://x"}`, wantErr: []string{`unknown field "simulatorUrl"`}, wantStrict: true},
		"duplicate field": {json: `{"retries":1,"retries":2}`, wantErr: []string{`duplicate field "retries"`}, wantStrict: true},
		"bad duration":    {json: `{"retries":1,"timeout":"five"}`, wantErr: []string{"args.timeout", `"five"`, "invalid duration"}, wantField: "args.timeout"},
		"wrong type":      {json: `{"retries":"x"}`, wantErr: []string{"args.retries", "int32"}, wantField: "args.retries"},
		"wrong mode type": {json: `{"refreshMode":5}`, wantErr: []string{"args.refreshMode"}, wantField: "args.refreshMode"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := &CustomScorePluginArgs{}
			err := got.UnmarshalJSON([]byte(tt.json))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want,+got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error, got %+v", got)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if fe, ok := err.(*field.Error); (tt.wantField != "") != ok || ok && fe.Field != tt.wantField {
				t.Errorf("error %#v: want a field error for %q", err, tt.wantField)
			}
			if runtime.IsStrictDecodingError(err) != tt.wantStrict {
				t.Errorf("error %q: strict decoding error = %v, want %v", err, !tt.wantStrict, tt.wantStrict)
			}
		})
	}
}
