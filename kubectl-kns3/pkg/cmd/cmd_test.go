package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"kns3.dev/kns3/installclient"
	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// now is the tests' clock.
var now = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// schedulerPod is the Deployment's pod, as deploy/ makes it.
func schedulerPod() *v1.Pod {
	ctrl := true
	p := st.MakePod().Namespace("kns-3-system").Name("kns-3-scheduler-587f979d6c-x").Label(installclient.AppLabel, installclient.AppName).Node("cp").Obj()
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "kns-3-scheduler-587f979d6c", Controller: &ctrl}}
	p.Spec.ServiceAccountName = installclient.ServiceAccount
	p.Status.Phase = v1.PodRunning
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: installclient.SchedulerContainer, Ready: true}, {Name: installclient.SimulatorContainer, Ready: true}}
	return p
}

// published is the kns-3-scheduler profile's status: a simulation that
// scores a, b and the disabled node; change edits it.
func published(change func(*schedstatus.ProfileStatus)) *v1.ConfigMap {
	doc := schedstatus.ProfileStatus{
		APIVersion: schedstatus.APIVersion, Kind: schedstatus.Kind,
		Profile: "kns-3-scheduler", Instance: "kns-3-scheduler-587f979d6c-x", Published: now.Add(-2 * time.Second),
		IntervalSeconds: 5, HeartbeatSeconds: 60, RefreshMode: "PerCycle", Normalization: "MinMax", Breaker: "open",
		ScoredCycles: 12, Fallbacks: map[string]int64{"breaker_open": 7, "simulator_failed": 3},
		Simulator: schedstatus.Simulator{
			LastSuccess: now.Add(-3 * time.Second),
			Simulation: &schedstatus.Simulation{Received: now.Add(-3 * time.Second), Source: "test", WindowSeconds: 30,
				Timestamp: now.Add(-30 * time.Second), MilliScores: map[string]int64{"a": 900, "b": 400, "off": 1000}},
		},
	}
	if change != nil {
		change(&doc)
	}
	b, _ := json.Marshal(doc)
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kns-3-system", Name: schedstatus.ConfigMapName},
		Data:       map[string]string{schedstatus.Key(doc.Profile): string(b)},
	}
}

func event(pod *v1.Pod, name, reason, reporter, msg string, at time.Time) *v1.Event {
	return &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: pod.Namespace, Name: name},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Reason:         reason, Message: msg, EventTime: metav1.NewMicroTime(at),
		ReportingController: reporter,
	}
}

func cluster(objs ...runtime.Object) []runtime.Object {
	disabled := st.MakeNode().Name("off").Label(placement.LabelScheduler, placement.ValueDisabled).Obj()
	return append([]runtime.Object{st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj(), disabled}, objs...)
}

// run runs `kubectl kns3 args...` against a fake API server, and checks
// the tool only ever reads through it: nothing is created, nothing reaches
// into a pod.
func run(t *testing.T, objs []runtime.Object, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runAgainst(t, fake.NewClientset(objs...), args...)
}

// runAgainst is run against client.
func runAgainst(t *testing.T, client *fake.Clientset, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: streams, now: func() time.Time { return now }}
	o.connect = func() (string, kubernetes.Interface, error) {
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
	for _, a := range client.Actions() {
		if (a.GetVerb() != "get" && a.GetVerb() != "list") || a.GetSubresource() != "" {
			t.Errorf("the tool sent %s %s/%s: it may only read", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
	}
	return out.String(), errOut.String(), err
}

func TestExplain(t *testing.T) {
	placed := st.MakePod().Namespace("ns").Name("web").UID("u1").SchedulerName("kns-3-scheduler").Node("a").Obj()
	pending := st.MakePod().Namespace("ns").Name("ledger").UID("u2").SchedulerName("kns-3-scheduler").Obj()
	other := st.MakePod().Namespace("ns").Name("other").UID("u3").SchedulerName("default-scheduler").Node("b").Obj()
	base := []runtime.Object{schedulerPod(), placed, pending, other,
		event(placed, "e1", schedstatus.PlacementEventReason, "kns-3-scheduler", "older placement", now.Add(-time.Minute)),
		event(placed, "e2", schedstatus.PlacementEventReason, "kns-3-scheduler", "Network-aware: a has simulator score 0.900", now),
		event(placed, "e3", schedstatus.PlacementEventReason, "forger", "Network-aware: forged", now.Add(time.Minute)),
		event(pending, "e4", installclient.ReasonFailedScheduling, "kns-3-scheduler", "0/3 nodes are available: old", now.Add(-time.Minute)),
		event(pending, "e5", installclient.ReasonFailedScheduling, "kns-3-scheduler", "0/3 nodes are available: new", now),
	}
	objs := cluster(append(base, published(nil))...)
	for _, tc := range []struct {
		name      string
		objs      []runtime.Object
		args      []string
		wantErr   string
		wantOut   []string
		wantWarn  string
		checkJSON func(t *testing.T, e *output.Explanation)
	}{
		{
			name: "placed pod: rows, chosen node, the profile's newest placement event",
			objs: objs, args: []string{"explain", "web", "-n", "ns"},
			wantOut: []string{"Pod ns/web (scheduler kns-3-scheduler) is on a.", "Placement event: Network-aware: a has simulator score 0.900",
				"Simulation: received by the scheduler 3s ago; source \"test\", sampled 2026-11-30T09:59:30Z over a 30s window; normalization MinMax.",
				"off", placement.ErrReasonDisabled},
		},
		{
			name: "JSON output",
			objs: objs, args: []string{"explain", "web", "-n", "ns", "-o", "json"},
			checkJSON: func(t *testing.T, e *output.Explanation) {
				if e.Kind != "PlacementExplanation" || e.Node != "a" || len(e.Nodes) != 3 || e.Nodes[0].Node != "a" || !e.Nodes[0].Chosen ||
					*e.Nodes[0].SimulatorScore != 0.9 || *e.Nodes[0].Points != 1000 || *e.Nodes[1].Points != 0 || e.Nodes[2].Filter != output.Reject {
					t.Errorf("explanation %+v", e)
				}
				// The scheduler published no scoring: CustomScorePlugin alone,
				// and who decided worked out here.
				if !e.ScoringAssumed || e.DecidedBy != schedstatus.CustomScorePlugin || e.DecidedFrom != output.DecidedFromStatus || e.RunnerUp != "b" {
					t.Errorf("scoring assumed %t, decided by %q from %q against %q", e.ScoringAssumed, e.DecidedBy, e.DecidedFrom, e.RunnerUp)
				}
			},
		},
		{
			name: "the live profile: ranked by both plugins' points, the event naming who decided",
			objs: cluster(schedulerPod(), placed,
				event(placed, "e2", schedstatus.PlacementEventReason, "kns-3-scheduler",
					"Network-aware: a has simulator score 0.400, rank 2 of 2 feasible nodes; best alternative b (0.900); decided by NetworkCapacity: 200 points ahead of runner-up b", now),
				published(func(d *schedstatus.ProfileStatus) {
					d.Scoring = []schedstatus.ScorePlugin{{Name: schedstatus.CustomScorePlugin, Weight: 10},
						{Name: schedstatus.NetworkCapacity, Weight: 20, Capacity: &schedstatus.CapacityArgs{DefaultPodMbps: 10, TargetUtilizationPercent: 80}}}
					bw := 100.0
					d.Simulator.Simulation.MilliScores = map[string]int64{"a": 400, "b": 900}
					d.Simulator.Simulation.Metrics = map[string]schedstatus.NodeMetrics{
						"a": {BandwidthMbps: &bw, Capacity: &schedstatus.LinkCapacity{RankedBandwidthMbps: 100, FreeMbps: 100}},
						"b": {BandwidthMbps: &bw, Capacity: &schedstatus.LinkCapacity{RankedBandwidthMbps: 100, CountedMbps: 60, CountedPods: 3, FreeMbps: 40}},
					}
				})),
			args: []string{"explain", "web", "-n", "ns", "-o", "json"},
			checkJSON: func(t *testing.T, e *output.Explanation) {
				// a: 80 free below the target, + a tenth of 20: 82, the most.
				// b: 40 free, 20 below: 22 → 27. By the simulator, b 100, a 0.
				if e.ScoringAssumed || len(e.Scoring) != 2 || e.DecidedBy != schedstatus.NetworkCapacity || e.DecidedFrom != output.DecidedFromEvent ||
					e.Nodes[0].Node != "a" || *e.Nodes[0].Points != 2000 || *e.Nodes[1].Points != 10*100+20*27 || e.Nodes[0].Rank != 1 || len(e.Caveats) != 0 {
					data, _ := json.Marshal(e)
					t.Errorf("explanation %s", data)
				}
			},
		},
		{
			name: "pending pod: the newest FailedScheduling message",
			objs: objs, args: []string{"explain", "ledger", "-n", "ns"},
			wantOut: []string{"is pending.", "Last FailedScheduling: 0/3 nodes are available: new"},
		},
		{
			name: "pod of another scheduler", objs: objs, args: []string{"explain", "other", "-n", "ns"},
			wantErr: `pod ns/other is scheduled by "default-scheduler", which is not a KNS-3 profile (KNS-3 profiles: kns-3-scheduler)`,
		},
		{
			name: "no such pod", objs: objs, args: []string{"explain", "nope", "-n", "ns"},
			wantErr: `pod "nope" not found in namespace "ns"`,
		},
		{
			name: "scheduler not installed", objs: cluster(placed), args: []string{"explain", "web", "-n", "ns"},
			wantErr: installclient.ErrNotInstalled.Error(),
		},
		{
			name: "simulator down: a warning, the scores of the newest simulation",
			objs: cluster(append(base, published(func(d *schedstatus.ProfileStatus) {
				d.Simulator.LastFailure, d.Simulator.LastError = now.Add(-time.Second), "GET http://127.0.0.1:80/simulate: connection refused"
			}))...), args: []string{"explain", "web", "-n", "ns"},
			wantOut:  []string{"0.900"},
			wantWarn: "Warning: the simulator of profile kns-3-scheduler is down (GET http://127.0.0.1:80/simulate: connection refused)",
		},
		{
			name: "no simulation yet: verdicts without scores",
			objs: cluster(append(base, published(func(d *schedstatus.ProfileStatus) {
				d.Simulator = schedstatus.Simulator{LastFailure: now, LastError: "timeout"}
			}))...), args: []string{"explain", "web", "-n", "ns"},
			wantOut:  []string{"Simulation: none (the scheduler holds no simulation yet: timeout)", placement.ErrReasonDisabled},
			wantWarn: "is down (timeout)",
		},
		{
			name: "status not published: the shipped profile is assumed",
			objs: cluster(base...), args: []string{"explain", "web", "-n", "ns"},
			wantOut:  []string{"is on a.", "Simulation: none (no status published)"},
			wantWarn: "no KNS-3 status published (ConfigMap kns-3-system/kns-3-status does not exist); assuming profile kns-3-scheduler",
		},
		{
			name: "stale status", objs: cluster(append(base, published(func(d *schedstatus.ProfileStatus) { d.Published = now.Add(-time.Hour) }))...),
			args: []string{"explain", "web", "-n", "ns"}, wantOut: []string{"is on a."},
			wantWarn: "was published 1h0m0s ago by kns-3-scheduler-587f979d6c-x: its scheduler has stopped publishing",
		},
		{
			name: "bad output format fails before any request", objs: nil, args: []string{"explain", "web", "-o", "wide"},
			wantErr: `--output "wide": want one of json, yaml, kyaml`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(t, tc.objs, tc.args...)
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
			if strings.Contains(out, "forged") {
				t.Errorf("output shows an event another reporter wrote:\n%s", out)
			}
			if !strings.Contains(errOut, tc.wantWarn) || (tc.wantWarn == "" && errOut != "") {
				t.Errorf("stderr %q, want %q", errOut, tc.wantWarn)
			}
			if tc.checkJSON != nil {
				var e output.Explanation
				if err := json.Unmarshal([]byte(out), &e); err != nil {
					t.Fatalf("%v:\n%s", err, out)
				}
				tc.checkJSON(t, &e)
			}
		})
	}
}

// TestExplainPeers: for a pod that declares peers, in a profile that
// scores with NetworkPeers, explain lists the pods of its namespace that
// its selectors match, and only those, and works out what reaching them
// costs from each candidate; refused the list, it says NetworkPeers is
// not worked out, and why, and explains the rest.
func TestExplainPeers(t *testing.T) {
	client := st.MakePod().Namespace("ns").Name("client").UID("c").SchedulerName("kns-3-scheduler").Node("a").
		Annotation("kns-3-scheduler/peers", "app=server").Obj()
	server := st.MakePod().Namespace("ns").Name("server").UID("s").Label("app", "server").Node("b").Obj()
	bystander := st.MakePod().Namespace("ns").Name("bystander").UID("x").Label("app", "web").Node("b").Obj()
	elsewhere := st.MakePod().Namespace("other").Name("server").UID("o").Label("app", "server").Node("a").Obj()
	status := published(func(d *schedstatus.ProfileStatus) {
		d.Scoring = []schedstatus.ScorePlugin{{Name: schedstatus.CustomScorePlugin, Weight: 10}, {Name: schedstatus.NetworkPeers, Weight: 20}}
		d.Simulator.Simulation.Pairs = &schedstatus.Pairs{Coordinates: map[string]schedstatus.Coordinate{
			"a": {Vec: []float64{0, 0}}, "b": {Vec: []float64{0.002, 0}}}}
	})
	objs := cluster(schedulerPod(), client, server, bystander, elsewhere, status)

	fc := fake.NewClientset(objs...)
	out, _, err := runAgainst(t, fc, "explain", "client", "-n", "ns", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var e output.Explanation
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	// b hosts the server: cost 0, 100 points; a 2 ms away: 1.
	if e.Peers == nil || len(e.Peers.Hosts) != 1 || e.Peers.Hosts[0] != (output.PeerHost{Node: "b", Pods: 1}) || len(e.Unrecomputed) != 0 {
		data, _ := json.Marshal(e)
		t.Fatalf("explanation %s: want the server on b as the pod's only peer", data)
	}
	for _, r := range e.Nodes {
		want := map[string]float64{"a": 2, "b": 0}
		if ms, ok := want[r.Node]; ok && (r.PeersCost == nil || !r.PeersCost.Known || r.PeersCost.Ms != ms) {
			t.Errorf("%s: peers cost %+v, want %g ms", r.Node, r.PeersCost, ms)
		}
	}
	listed := 0
	for _, a := range fc.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == "pods" && a.GetNamespace() == "ns" {
			listed++
			if sel := a.(k8stesting.ListAction).GetListRestrictions().Labels.String(); sel != "app=server" {
				t.Errorf("pods listed with selector %q, want the pod's peers annotation's", sel)
			}
		}
	}
	if listed != 1 {
		t.Errorf("pods of the pod's namespace listed %d times, want once", listed)
	}

	forbidden := fake.NewClientset(objs...)
	forbidden.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != "ns" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(v1.Resource("pods"), "", errors.New("no list here"))
	})
	out, _, err = runAgainst(t, forbidden, "explain", "client", "-n", "ns")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Not worked out: NetworkPeers: the pod's peers could not be listed: listing the pods of namespace ns that \"app=server\" selects: pods is forbidden") {
		t.Errorf("output does not say NetworkPeers is not worked out, and why:\n%s", out)
	}
}

func TestStatus(t *testing.T) {
	a := st.MakePod().Namespace("ns").Name("a-pod").UID("u1").Obj()
	b := st.MakePod().Namespace("other").Name("b-pod").UID("u2").Obj()
	impostor := schedulerPod()
	impostor.Namespace, impostor.Name = "default", "impostor"
	sneaky := schedulerPod()
	sneaky.Name, sneaky.Spec.ServiceAccountName = "kns-3-scheduler-587f979d6c-y", "default"
	objs := cluster(schedulerPod(), impostor, sneaky, published(nil),
		event(a, "e1", schedstatus.PlacementEventReason, "kns-3-scheduler", "first", now.Add(-2*time.Minute)),
		event(b, "e2", schedstatus.PlacementEventReason, "kns-3-scheduler", "second", now.Add(-time.Minute)),
		event(b, "e3", schedstatus.PlacementEventReason, "forger", "\x1b[2Jforged", now),
		event(b, "e4", "Scheduled", "kns-3-scheduler", "not a placement", now),
	)
	out, errOut, err := run(t, objs, "status", "-o", "json", "--last", "1")
	if err != nil {
		t.Fatal(err)
	}
	var s output.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(s.Pods) != 1 || !s.Pods[0].SchedulerReady || !s.Pods[0].Publishing || s.Pods[0].Name != "kns-3-scheduler-587f979d6c-x" {
		t.Errorf("pods %+v, want only the install's", s.Pods)
	}
	if !strings.Contains(errOut, "ignoring pod kns-3-system/kns-3-scheduler-587f979d6c-y") || strings.Contains(errOut, "impostor") {
		t.Errorf("stderr %q: want the unowned pod of the install's namespace named, no other", errOut)
	}
	if len(s.Profiles) != 1 || s.Profiles[0].Breaker != "open" || s.Profiles[0].FallbacksTotal != 10 || s.Profiles[0].ScoredCycles != 12 {
		t.Errorf("profiles %+v", s.Profiles)
	}
	if sim := s.Profiles[0].Simulator; sim.Source != "test" || sim.Nodes != 3 || sim.WindowSeconds != 30 || sim.Down {
		t.Errorf("simulator %+v", sim)
	}
	if len(s.Placements) != 1 || s.Placements[0].Message != "second" || s.Placements[0].Namespace != "other" {
		t.Errorf("placements %+v, want only the newest of the profile's placement events", s.Placements)
	}

	out, _, err = run(t, objs, "status")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kns-3-system/kns-3-scheduler-587f979d6c-x", "kns-3-scheduler   PerCycle   open", "breaker_open=7,simulator_failed=3",
		"Simulator (kns-3-scheduler): answered 3s ago", "other/b-pod"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "forged") || strings.Contains(out, "impostor") {
		t.Errorf("output shows what the install did not write:\n%s", out)
	}

	if _, _, err := run(t, cluster(impostor), "status"); !errors.Is(err, installclient.ErrNotInstalled) {
		t.Errorf("with only an impostor: %v, want %v", err, installclient.ErrNotInstalled)
	}
	for _, last := range []string{"-1", "1001"} {
		if _, _, err := run(t, objs, "status", "--last", last); err == nil || !strings.Contains(err.Error(), "--last "+last+": want") {
			t.Errorf("--last %s: %v, want it refused", last, err)
		}
	}
	if out, _, err := run(t, objs, "status", "--last", "0"); err != nil || !strings.Contains(out, "Last placements: none") {
		t.Errorf("--last 0: %v\n%s", err, out)
	}
}

// A forged placement event may claim the profile as its reporter (anyone
// who may create events can). One whose pod or namespace is no valid
// name, or whose time is in the future, is never shown, never hides the
// real placements, and nothing of it reaches the terminal raw.
func TestStatusDropsForgedPlacements(t *testing.T) {
	b := st.MakePod().Namespace("other").Name("b-pod").UID("u2").Obj()
	escaping := st.MakePod().Namespace("dev").Name("\x1b]52;c;QUJD\x07\x1b[2J").UID("u9").Obj()
	badNamespace := st.MakePod().Namespace("dev\x1b[2J").Name("web").UID("u8").Obj()
	objs := cluster(schedulerPod(), published(nil),
		event(b, "e2", schedstatus.PlacementEventReason, "kns-3-scheduler", "second", now.Add(-time.Minute)),
		event(escaping, "f1", schedstatus.PlacementEventReason, "kns-3-scheduler", "forged escapes", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)),
		event(escaping, "f2", schedstatus.PlacementEventReason, "kns-3-scheduler", "forged name", now.Add(-time.Second)),
		event(badNamespace, "f3", schedstatus.PlacementEventReason, "kns-3-scheduler", "forged namespace", now.Add(-time.Second)),
		event(b, "f4", schedstatus.PlacementEventReason, "kns-3-scheduler", "forged future", now.Add(time.Hour)),
	)
	out, _, err := run(t, objs, "status", "--last", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "other/b-pod") || !strings.Contains(out, "second") {
		t.Errorf("output lacks the newest real placement:\n%s", out)
	}
	if strings.Contains(out, "forged") {
		t.Errorf("output shows a forged placement:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("output holds a control character:\n%q", out)
	}
}

// Every field of the published document is escaped before it is printed:
// its writers are more privileged than event writers, not trusted.
func TestStatusEscapesTheDocument(t *testing.T) {
	objs := cluster(schedulerPod(), published(func(d *schedstatus.ProfileStatus) {
		d.RefreshMode, d.Breaker = "Per\x1b[2JCycle", "open\x07"
		d.Fallbacks["x\x1b]0;t\x07"] = 1
	}))
	out, _, err := run(t, objs, "status")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("output holds a control character:\n%q", out)
	}
}

// The profile names an explain error lists come from the document too.
func TestNotKNS3ErrorEscapesProfiles(t *testing.T) {
	other := st.MakePod().Namespace("ns").Name("other").UID("u3").SchedulerName("default-scheduler").Node("b").Obj()
	objs := cluster(schedulerPod(), other, published(func(d *schedstatus.ProfileStatus) { d.Profile = "evil\x1b[2J\x07" }))
	_, _, err := run(t, objs, "explain", "other", "-n", "ns")
	var notKNS3 *NotKNS3Error
	if !errors.As(err, &notKNS3) {
		t.Fatalf("err %v, want a NotKNS3Error", err)
	}
	if strings.ContainsAny(err.Error(), "\x1b\x07") {
		t.Errorf("error holds a control character: %q", err.Error())
	}
}

// With both installs in the cluster, the one not shown is named.
func TestStatusNamesTheOtherInstall(t *testing.T) {
	// Find judges freshness by the real clock.
	cp := published(func(d *schedstatus.ProfileStatus) { d.Published = time.Now() })
	cp.Namespace = "kube-system"
	// The control plane's static pod, as its mirror shows it: without it,
	// an admin sees the control-plane install gone, whatever its status.
	ctrl := true
	mirror := st.MakePod().Namespace("kube-system").Name("kube-scheduler-cp").Label(installclient.AppLabel, installclient.AppName).Node("cp").Obj()
	mirror.Annotations = map[string]string{"kubernetes.io/config.mirror": "abc"}
	mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "cp", Controller: &ctrl}}
	_, errOut, err := run(t, cluster(schedulerPod(), published(nil), cp, mirror), "status")
	if err != nil {
		t.Fatal(err)
	}
	if want := "also found the second-scheduler install in namespace kns-3-system; showing the control-plane install in namespace kube-system"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}
