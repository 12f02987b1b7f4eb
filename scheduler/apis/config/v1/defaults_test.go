package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func ptrTo[T any](v T) *T { return &v }

func TestSetDefaults_CustomScorePluginArgs(t *testing.T) {
	defaults := &CustomScorePluginArgs{
		SimulatorURL:            "http://127.0.0.1:80",
		Timeout:                 duration(5 * time.Second),
		Retries:                 ptrTo[int32](2),
		RetryDelay:              duration(100 * time.Millisecond),
		MaxBodyBytes:            ptrTo[int64](8 << 20),
		BreakerFailureThreshold: ptrTo[int32](5),
		BreakerCooldown:         duration(time.Second),
		BreakerLatencyBudget:    duration(time.Second),
		RefreshMode:             RefreshPerCycle,
		RefreshInterval:         duration(time.Second),
		MaxSimulationAge:        duration(10 * time.Second),
		Normalization:           NormalizationMinMax,
		DriftMarginMilli:        ptrTo[int64](200),
	}
	everySet := &CustomScorePluginArgs{
		SimulatorURL:            "http://sim.kns-3.svc:8080/api/",
		Timeout:                 duration(250 * time.Millisecond),
		Retries:                 ptrTo[int32](7),
		RetryDelay:              duration(time.Millisecond),
		MaxBodyBytes:            ptrTo[int64](2048),
		BreakerFailureThreshold: ptrTo[int32](1),
		BreakerCooldown:         duration(time.Minute),
		BreakerLatencyBudget:    duration(300 * time.Millisecond),
		RefreshMode:             RefreshBackground,
		RefreshInterval:         duration(2 * time.Second),
		MaxSimulationAge:        duration(30 * time.Second),
		Normalization:           NormalizationAbsolute,
		DriftMarginMilli:        ptrTo[int64](50),
	}
	tests := map[string]struct {
		in, want *CustomScorePluginArgs
	}{
		"empty": {
			in:   &CustomScorePluginArgs{},
			want: defaults,
		},
		"every field set": {
			in:   everySet.DeepCopy(),
			want: everySet,
		},
		"zero values set explicitly are kept": {
			in: &CustomScorePluginArgs{
				Timeout:                 duration(0),
				Retries:                 ptrTo[int32](0),
				RetryDelay:              duration(0),
				MaxBodyBytes:            ptrTo[int64](0),
				BreakerFailureThreshold: ptrTo[int32](0),
				BreakerCooldown:         duration(0),
				BreakerLatencyBudget:    duration(0),
				RefreshInterval:         duration(0),
				MaxSimulationAge:        duration(0),
				DriftMarginMilli:        ptrTo[int64](0),
			},
			want: &CustomScorePluginArgs{
				SimulatorURL:            "http://127.0.0.1:80",
				Timeout:                 duration(0),
				Retries:                 ptrTo[int32](0),
				RetryDelay:              duration(0),
				MaxBodyBytes:            ptrTo[int64](0),
				BreakerFailureThreshold: ptrTo[int32](0),
				BreakerCooldown:         duration(0),
				BreakerLatencyBudget:    duration(0),
				RefreshMode:             RefreshPerCycle,
				RefreshInterval:         duration(0),
				MaxSimulationAge:        duration(0),
				Normalization:           NormalizationMinMax,
				DriftMarginMilli:        ptrTo[int64](0),
			},
		},
		"some fields set": {
			in: &CustomScorePluginArgs{
				SimulatorURL: "https://10.0.0.1",
				Retries:      ptrTo[int32](5),
				RefreshMode:  RefreshBackground,
			},
			want: func() *CustomScorePluginArgs {
				w := defaults.DeepCopy()
				w.SimulatorURL = "https://10.0.0.1"
				w.Retries = ptrTo[int32](5)
				w.RefreshMode = RefreshBackground
				return w
			}(),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			// Through a scheme, as the scheduler defaults args.
			scheme := runtime.NewScheme()
			if err := AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			got := tt.in.DeepCopy()
			scheme.Default(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scheme.Default (-want,+got):\n%s", diff)
			}
			got = tt.in.DeepCopy()
			SetDefaults_CustomScorePluginArgs(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SetDefaults_CustomScorePluginArgs (-want,+got):\n%s", diff)
			}
		})
	}
}
