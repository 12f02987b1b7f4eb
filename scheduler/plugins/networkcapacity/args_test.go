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
		want    int64
		wantErr string
	}{
		{name: "nil takes the defaults", args: nil, want: 10},
		{name: "set", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 25}, want: 25},
		{name: "zero counts undeclared pods as nothing", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 0}, want: 0},
		{name: "negative", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: -1}, wantErr: "args.defaultPodMbps"},
		{name: "too large", args: &apiconfig.NetworkCapacityArgs{DefaultPodMbps: 1_000_000}, wantErr: "args.defaultPodMbps"},
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
			if got := p.(*NetworkCapacity).args.DefaultPodMbps; got != tc.want {
				t.Errorf("defaultPodMbps %d, want %d", got, tc.want)
			}
		})
	}
}
