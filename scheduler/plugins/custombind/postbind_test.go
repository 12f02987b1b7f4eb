package custombind

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	fwk "k8s.io/kube-scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

func TestPostBindLogsAtVerbosityOne(t *testing.T) {
	pod := st.MakePod().Namespace("ns").Name("web-0").Obj()
	for _, tc := range []struct {
		verbosity int
		want      string
	}{
		{0, ""},
		{1, `"KNS-3 bound pod to node" pod="ns/web-0" node="worker-node-2"`},
	} {
		var buf bytes.Buffer
		cfg := textlogger.NewConfig(textlogger.Verbosity(tc.verbosity), textlogger.Output(&buf))
		ctx := klog.NewContext(context.Background(), textlogger.NewLogger(cfg))
		pl, err := New(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		pl.(fwk.PostBindPlugin).PostBind(ctx, nil, pod, "worker-node-2")
		got := buf.String()
		if tc.want == "" && got != "" {
			t.Errorf("v=%d: logged %q, want nothing", tc.verbosity, got)
		}
		if tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("v=%d: logged %q, want it to contain %q", tc.verbosity, got, tc.want)
		}
		if n := strings.Count(got, "\n"); tc.want != "" && n != 1 {
			t.Errorf("v=%d: %d lines logged, want exactly 1", tc.verbosity, n)
		}
	}
}
