package networkcapacity

import (
	"context"
	"strings"
	"testing"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
)

func TestArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    *apiconfig.NetworkCapacityArgs
		want    apiconfig.NetworkCapacityArgs
		wantErr string
	}{
		{name: "nil takes the defaults", args: nil, want: apiconfig.NetworkCapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 80}},
		{name: "set", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 25, TargetUtilizationPercent: 60}, want: apiconfig.NetworkCapacityArgs{DefaultPodMbps: 25, TargetUtilizationPercent: 60}},
		{name: "zero counts undeclared pods as nothing", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 0, TargetUtilizationPercent: 80}, want: apiconfig.NetworkCapacityArgs{TargetUtilizationPercent: 80}},
		{name: "a target of the whole link", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 100}, want: apiconfig.NetworkCapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 100}},
		{name: "negative", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: -1, TargetUtilizationPercent: 80}, wantErr: "args.defaultPodMbps"},
		{name: "too large", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 1_000_000, TargetUtilizationPercent: 80}, wantErr: "args.defaultPodMbps"},
		{name: "no target", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 10}, wantErr: "args.targetUtilizationPercent"},
		{name: "a target above the link", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 101}, wantErr: "args.targetUtilizationPercent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p any
			var err error
			if tc.args == nil {
				p, err = New(context.Background(), nil, nil)
			} else {
				p, err = New(context.Background(), tc.args, nil)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New: error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := *p.(*NetworkCapacity).args; got != tc.want {
				t.Errorf("args %+v, want %+v", got, tc.want)
			}
		})
	}
}
