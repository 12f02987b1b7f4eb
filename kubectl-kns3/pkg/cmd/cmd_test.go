package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/kubectl-kns3/pkg/explain"
	"kns3.dev/kns3/kubectl-kns3/pkg/schedulerpod"
	"kns3.dev/kns3/kubectl-kns3/pkg/status"
	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/scheduler/plugins/customfilter"
	"kns3.dev/kns3/simulator/api"
)

const configzBody = `{"componentconfig":{"profiles":[
 {"schedulerName":"default-scheduler","plugins":{"filter":{"enabled":[{"name":"NodeName"}]}}},
 {"schedulerName":"kns-3-scheduler","plugins":{"filter":{"enabled":[{"name":"CustomFilterPlugin"}]},"score":{"enabled":[{"name":"CustomScorePlugin","weight":10}]}},
  "pluginConfig":[{"name":"CustomScorePlugin","args":{"normalization":"MinMax"}}]}]}}`

const metricsBody = `# TYPE kns3_simulator_breaker_state gauge
kns3_simulator_breaker_state{profile="kns-3-scheduler"} 1
# TYPE kns3_simulator_fallbacks_total counter
kns3_simulator_fallbacks_total{profile="kns-3-scheduler",reason="breaker_open"} 7
kns3_simulator_fallbacks_total{profile="kns-3-scheduler",reason="simulator_failed"} 3
# TYPE kns3_simulator_scored_cycles_total counter
kns3_simulator_scored_cycles_total{profile="kns-3-scheduler"} 12
`

// fakePod answers for the KNS-3 pod without a port-forward.
type fakePod struct {
	sim        *api.SimulationResponse
	simStatus  int
	simErr     error
	configz    string
	configzErr error
}

func (f fakePod) simulate(context.Context, *v1.Pod, time.Duration) (int, *api.SimulationResponse, error) {
	return f.simStatus, f.sim, f.simErr
}

func (f fakePod) schedulerGet(_ context.Context, _ *v1.Pod, path string) ([]byte, error) {
	switch path {
	case "/configz":
		return []byte(f.configz), f.configzErr
	case "/metrics":
		return []byte(metricsBody), nil
	}
	return nil, errors.New("no " + path)
}

func healthy() fakePod {
	return fakePod{simStatus: 200, configz: configzBody, sim: &api.SimulationResponse{
		Source: "test", WindowSeconds: 30, Timestamp: time.Unix(1_800_000_000, 0),
		Results: map[string]api.NodeResult{"a": {Score: 0.9}, "b": {Score: 0.4}, "off": {Score: 1}},
	}}
}

func schedulerPodObj() *v1.Pod {
	p := st.MakePod().Namespace("kns-3-system").Name("kns-3-scheduler-x").Label(schedulerpod.AppLabel, schedulerpod.AppName).Obj()
	p.Status.Phase = v1.PodRunning
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	return p
}

func event(pod *v1.Pod, name, reason, msg string, at time.Time) *v1.Event {
	return &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: pod.Namespace, Name: name},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Reason:         reason, Message: msg, EventTime: metav1.NewMicroTime(at),
	}
}

func cluster(objs ...runtime.Object) []runtime.Object {
	disabled := st.MakeNode().Name("off").Label(customfilter.LabelScheduler, customfilter.ValueDisabled).Obj()
	return append([]runtime.Object{st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj(), disabled}, objs...)
}

// run runs `kubectl kns3 args...` against a fake API server.
func run(t *testing.T, pod fakePod, objs []runtime.Object, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	client := fake.NewClientset(objs...)
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: streams}
	o.connect = func() (string, kubernetes.Interface, error) {
		o.pod = pod
		ns := "default"
		if *o.config.Namespace != "" {
			ns = *o.config.Namespace
		}
		return ns, client, nil
	}
	cmd := newCommand(o)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestExplain(t *testing.T) {
	now := time.Now()
	placed := st.MakePod().Namespace("ns").Name("web").UID("u1").SchedulerName("kns-3-scheduler").Node("a").Obj()
	pending := st.MakePod().Namespace("ns").Name("ledger").UID("u2").SchedulerName("kns-3-scheduler").Obj()
	other := st.MakePod().Namespace("ns").Name("other").UID("u3").SchedulerName("default-scheduler").Node("b").Obj()
	objs := cluster(schedulerPodObj(), placed, pending, other,
		event(placed, "e1", custombind.EventReason, "older placement", now.Add(-time.Minute)),
		event(placed, "e2", custombind.EventReason, "Network-aware: a has simulator score 0.900", now),
		event(pending, "e3", "FailedScheduling", "0/3 nodes are available: old", now.Add(-time.Minute)),
		event(pending, "e4", "FailedScheduling", "0/3 nodes are available: new", now),
	)
	for _, tc := range []struct {
		name      string
		pod       fakePod
		objs      []runtime.Object
		args      []string
		wantErr   string
		wantOut   []string
		wantWarn  string
		checkJSON func(t *testing.T, e *explain.Explanation)
	}{
		{
			name: "placed pod: rows, chosen node, the newest placement event",
			pod:  healthy(), objs: objs, args: []string{"explain", "web", "-n", "ns"},
			wantOut: []string{"Pod ns/web (scheduler kns-3-scheduler) is on a.", "Placement event: Network-aware: a has simulator score 0.900",
				"off", customfilter.ErrReasonDisabled},
		},
		{
			name: "JSON output",
			pod:  healthy(), objs: objs, args: []string{"explain", "web", "-n", "ns", "-o", "json"},
			checkJSON: func(t *testing.T, e *explain.Explanation) {
				if e.Kind != "PlacementExplanation" || e.Node != "a" || len(e.Nodes) != 3 || e.Nodes[0].Node != "a" || !e.Nodes[0].Chosen ||
					*e.Nodes[0].NormalizedScore != 100 || *e.Nodes[1].NormalizedScore != 0 || e.Nodes[2].Filter != explain.Reject {
					t.Errorf("explanation %+v", e)
				}
			},
		},
		{
			name: "pending pod: the newest FailedScheduling message",
			pod:  healthy(), objs: objs, args: []string{"explain", "ledger", "-n", "ns"},
			wantOut: []string{"is pending.", "Last FailedScheduling: 0/3 nodes are available: new"},
		},
		{
			name: "pod of another scheduler", pod: healthy(), objs: objs, args: []string{"explain", "other", "-n", "ns"},
			wantErr: `pod ns/other is scheduled by "default-scheduler", which is not a KNS-3 profile (KNS-3 profiles: kns-3-scheduler)`,
		},
		{
			name: "no such pod", pod: healthy(), objs: objs, args: []string{"explain", "nope", "-n", "ns"},
			wantErr: `pod "nope" not found in namespace "ns"`,
		},
		{
			name: "scheduler not installed", pod: healthy(), objs: cluster(placed), args: []string{"explain", "web", "-n", "ns"},
			wantErr: schedulerpod.ErrNotInstalled.Error(),
		},
		{
			name: "simulator down: a warning, verdicts without scores",
			pod:  fakePod{configz: configzBody, simErr: timeoutError{}}, objs: objs, args: []string{"explain", "web", "-n", "ns"},
			wantOut:  []string{"Simulation now: none (the simulator in pod kns-3-system/kns-3-scheduler-x does not answer (timed out))"},
			wantWarn: "Warning: the simulator in pod kns-3-system/kns-3-scheduler-x does not answer (timed out); scores are missing",
		},
		{
			name: "simulator answers 500",
			pod:  fakePod{configz: configzBody, simStatus: 500}, objs: objs, args: []string{"explain", "web", "-n", "ns"},
			wantWarn: "answered HTTP 500",
		},
		{
			name: "profiles unreadable: the shipped profile is assumed",
			pod:  fakePod{configzErr: errors.New("403 Forbidden"), simStatus: 200, sim: healthy().sim}, objs: objs, args: []string{"explain", "web", "-n", "ns"},
			wantOut:  []string{"is on a."},
			wantWarn: "cannot read the scheduler's profiles (403 Forbidden); assuming [kns-3-scheduler]",
		},
		{
			name: "bad output format fails before any request", pod: healthy(), objs: nil, args: []string{"explain", "web", "-o", "wide"},
			wantErr: `--output "wide": want one of json, yaml, kyaml`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(t, tc.pod, tc.objs, tc.args...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(errOut, tc.wantWarn) || (tc.wantWarn == "" && errOut != "") {
				t.Errorf("stderr %q, want %q", errOut, tc.wantWarn)
			}
			if tc.checkJSON != nil {
				var e explain.Explanation
				if err := json.Unmarshal([]byte(out), &e); err != nil {
					t.Fatalf("%v:\n%s", err, out)
				}
				tc.checkJSON(t, &e)
			}
		})
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

var _ net.Error = timeoutError{}

func TestStatus(t *testing.T) {
	now := time.Now()
	a := st.MakePod().Namespace("ns").Name("a-pod").UID("u1").Obj()
	b := st.MakePod().Namespace("other").Name("b-pod").UID("u2").Obj()
	objs := cluster(schedulerPodObj(),
		event(a, "e1", custombind.EventReason, "first", now.Add(-2*time.Minute)),
		event(b, "e2", custombind.EventReason, "second", now.Add(-time.Minute)),
		event(b, "e3", "Scheduled", "not a placement", now),
	)
	out, _, err := run(t, healthy(), objs, "status", "-o", "json", "--last", "1")
	if err != nil {
		t.Fatal(err)
	}
	var s status.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(s.Pods) != 1 || !s.Pods[0].Ready || s.Pods[0].Name != "kns-3-scheduler-x" {
		t.Errorf("pods %+v", s.Pods)
	}
	if len(s.Profiles) != 1 || s.Profiles[0].Breaker != "open" || s.Profiles[0].FallbacksTotal != 10 || s.Profiles[0].ScoredCycles != 12 {
		t.Errorf("profiles %+v", s.Profiles)
	}
	if s.Simulator == nil || s.Simulator.Source != "test" || s.Simulator.Nodes != 3 || s.Simulator.WindowSeconds != 30 {
		t.Errorf("simulator %+v", s.Simulator)
	}
	if len(s.Placements) != 1 || s.Placements[0].Message != "second" || s.Placements[0].Namespace != "other" {
		t.Errorf("placements %+v, want only the newest placement event", s.Placements)
	}

	out, _, err = run(t, fakePod{simErr: errors.New("connection refused")}, objs, "status")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kns-3-system/kns-3-scheduler-x", "kns-3-scheduler   open", "breaker_open=7,simulator_failed=3",
		"Simulator: down: the simulator in pod kns-3-system/kns-3-scheduler-x cannot be reached: connection refused", "other/b-pod"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	if _, _, err := run(t, healthy(), cluster(), "status"); !errors.Is(err, schedulerpod.ErrNotInstalled) {
		t.Errorf("without a KNS-3 pod: %v, want %v", err, schedulerpod.ErrNotInstalled)
	}
}

func TestParseProfiles(t *testing.T) {
	got, err := parseProfiles([]byte(configzBody))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["kns-3-scheduler"].absolute {
		t.Errorf("profiles %+v, want kns-3-scheduler with MinMax", got)
	}
	abs, err := parseProfiles([]byte(strings.Replace(configzBody, `"MinMax"`, `"Absolute"`, 1)))
	if err != nil || !abs["kns-3-scheduler"].absolute {
		t.Errorf("Absolute: %+v, %v", abs, err)
	}
	for _, bad := range []string{"not json", `{"componentconfig":{}}`} {
		if _, err := parseProfiles([]byte(bad)); err == nil {
			t.Errorf("parseProfiles(%q) accepted", bad)
		}
	}
}
