package installclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"kns3.dev/kns3/scheduler/apis/status"
)

// deploymentPod is a pod of the Deployment's ReplicaSet, as deploy/ makes it.
func deploymentPod(name string, created time.Time) *v1.Pod {
	ctrl := true
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "kns-3-system", Name: name, Labels: map[string]string{AppLabel: AppName},
			CreationTimestamp: metav1.NewTime(created),
			OwnerReferences:   []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "kns-3-scheduler-587f979d6c", Controller: &ctrl}},
		},
		Spec: v1.PodSpec{ServiceAccountName: ServiceAccount, NodeName: "cp"},
		Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
			{Name: SchedulerContainer, Ready: true}, {Name: SimulatorContainer, Ready: false, RestartCount: 2},
		}},
	}
}

// mirrorPod is a control-plane node's static pod as the API server shows it.
func mirrorPod(node string) *v1.Pod {
	ctrl := true
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "kube-system", Name: "kube-scheduler-" + node, Labels: map[string]string{AppLabel: AppName},
			Annotations:     map[string]string{mirrorAnnotation: "abc"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, Controller: &ctrl}},
		},
		Spec:   v1.PodSpec{NodeName: node, HostNetwork: true},
		Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: SchedulerContainer, Ready: true}, {Name: SimulatorContainer, Ready: true}}},
	}
}

func statusConfigMap(ns string, docs ...status.ProfileStatus) *v1.ConfigMap {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: status.ConfigMapName}, Data: map[string]string{}}
	for _, d := range docs {
		d.APIVersion, d.Kind = status.APIVersion, status.Kind
		b, _ := json.Marshal(d)
		cm.Data[status.Key(d.Profile)] = string(b)
	}
	return cm
}

func TestFind(t *testing.T) {
	now := time.Now()
	real := deploymentPod("kns-3-scheduler-587f979d6c-abcde", now.Add(-time.Hour))
	// Newer, labeled and ready, but not the install's: in the install's
	// namespace without its ServiceAccount, and outside it altogether.
	sneaky := deploymentPod("kns-3-scheduler-587f979d6c-zzzzz", now)
	sneaky.Spec.ServiceAccountName = "default"
	impostor := deploymentPod("impostor", now)
	impostor.Namespace = "default"
	unowned := deploymentPod("kns-3-scheduler-by-hand", now)
	unowned.OwnerReferences = nil
	// A labeled pod in kube-system that no kubelet mirrors.
	fakeStatic := mirrorPod("cp")
	fakeStatic.Name = "kube-scheduler-fake"
	delete(fakeStatic.Annotations, mirrorAnnotation)
	wrongNode := mirrorPod("cp")
	wrongNode.Name = "kube-scheduler-other"
	wrongNode.OwnerReferences[0].Name = "elsewhere"

	doc := status.ProfileStatus{Profile: "kns-3-scheduler", Instance: real.Name, Published: now, IntervalSeconds: 5, HeartbeatSeconds: 60}
	tests := map[string]struct {
		objs        []runtime.Object
		wantKind    Kind
		wantPods    []string
		wantIgnored []string
		publishing  string
		wantErr     error
	}{
		"second scheduler, with impostors": {
			objs:     []runtime.Object{real, sneaky, impostor, unowned, statusConfigMap("kns-3-system", doc)},
			wantKind: SecondScheduler, wantPods: []string{real.Name},
			wantIgnored: []string{"kns-3-system/" + sneaky.Name, "kns-3-system/" + unowned.Name},
			publishing:  real.Name,
		},
		"second scheduler, pods only": {
			objs: []runtime.Object{real}, wantKind: SecondScheduler, wantPods: []string{real.Name},
		},
		"control plane: the mirror pods of its nodes": {
			objs: []runtime.Object{mirrorPod("cp"), mirrorPod("cp2"), fakeStatic, wrongNode,
				statusConfigMap("kube-system", status.ProfileStatus{Profile: "kns-3-scheduler", Instance: "cp2"})},
			wantKind: ControlPlane, wantPods: []string{"kube-scheduler-cp", "kube-scheduler-cp2"},
			wantIgnored: []string{"kube-system/kube-scheduler-fake", "kube-system/kube-scheduler-other"},
			publishing:  "kube-scheduler-cp2",
		},
		"moving to the control plane: its running pod wins over the Deployment's fresh status": {
			objs: []runtime.Object{statusConfigMap("kns-3-system", doc), mirrorPod("cp"),
				statusConfigMap("kube-system", status.ProfileStatus{Profile: "kns-3-scheduler", Instance: "cp", Published: now.Add(-time.Hour)})},
			wantKind: ControlPlane, wantPods: []string{"kube-scheduler-cp"}, publishing: "kube-scheduler-cp",
		},
		"back to the Deployment: the control plane's stale status loses": {
			objs: []runtime.Object{real, statusConfigMap("kns-3-system", doc),
				statusConfigMap("kube-system", status.ProfileStatus{Profile: "kns-3-scheduler", Instance: "cp", Published: now.Add(-time.Hour)})},
			wantKind: SecondScheduler, wantPods: []string{real.Name}, publishing: real.Name,
		},
		"only impostors": {
			objs: []runtime.Object{impostor, fakeStatic}, wantErr: ErrNotInstalled,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			in, err := Find(context.Background(), fake.NewClientset(tt.objs...))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var pods, publishing []string
			for _, p := range in.Pods {
				pods = append(pods, p.Pod.Name)
				if p.Publishing {
					publishing = append(publishing, p.Pod.Name)
				}
			}
			slices.Sort(pods)
			slices.Sort(in.Ignored)
			if in.Kind != tt.wantKind || !slices.Equal(pods, tt.wantPods) || !slices.Equal(in.Ignored, tt.wantIgnored) {
				t.Errorf("found %s pods %v ignored %v; want %s %v %v", in.Kind, pods, in.Ignored, tt.wantKind, tt.wantPods, tt.wantIgnored)
			}
			if want := []string{tt.publishing}; tt.publishing != "" && !slices.Equal(publishing, want) {
				t.Errorf("publishing %v, want %v", publishing, want)
			}
		})
	}
}

// The containers' readiness is told apart: the scheduler schedules while
// its simulator is down.
func TestFindReadiness(t *testing.T) {
	in, err := Find(context.Background(), fake.NewClientset(deploymentPod("kns-3-scheduler-587f979d6c-abcde", time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	p := in.Pods[0]
	if !p.SchedulerReady || p.SimulatorReady || p.Restarts != 2 {
		t.Errorf("scheduler ready %t, simulator ready %t, restarts %d; want true, false, 2", p.SchedulerReady, p.SimulatorReady, p.Restarts)
	}
	if !apierrors.IsNotFound(in.StatusErr) {
		t.Errorf("no status ConfigMap: StatusErr %v, want a NotFound", in.StatusErr)
	}
}

// What cannot be read is said, not taken for absent.
func TestFindForbidden(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1.Resource(a.GetResource().Resource), "", errors.New("RBAC"))
	})
	_, err := Find(context.Background(), client)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("err %v, want ErrNotInstalled naming what was forbidden", err)
	}
	// The status alone is enough: the tool may not list kube-system's pods.
	client = fake.NewClientset(statusConfigMap("kube-system", status.ProfileStatus{Profile: "p"}))
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1.Resource("pods"), "", errors.New("RBAC"))
	})
	in, err := Find(context.Background(), client)
	if err != nil || in.Kind != ControlPlane || !apierrors.IsForbidden(in.PodsErr) || len(in.Profiles) != 1 {
		t.Errorf("Find = %+v, %v; want the control plane's status and a forbidden PodsErr", in, err)
	}
}

// A refusal is told by its reason, not by its wording: an authorizer or a
// proxy may answer 403 Forbidden without the word.
func TestFindRefusedWhateverTheWording(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "access denied by policy"}}
	})
	_, err := Find(context.Background(), client)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "access denied by policy") {
		t.Errorf("err %v, want ErrNotInstalled saying what the API server refused", err)
	}
}

func TestProfilesRejectsOtherDocuments(t *testing.T) {
	cm := statusConfigMap("kns-3-system", status.ProfileStatus{Profile: "good"})
	cm.Data["other.json"] = `{"apiVersion":"v1","kind":"Secret"}`
	cm.Data["junk"] = "not json"
	docs, err := profiles(cm)
	if len(docs) != 1 || docs[0].Profile != "good" || err == nil || !strings.Contains(err.Error(), "junk, other.json") {
		t.Errorf("profiles = %+v, %v", docs, err)
	}
}

func TestStale(t *testing.T) {
	now := time.Now()
	doc := status.ProfileStatus{IntervalSeconds: 5, HeartbeatSeconds: 60, Published: now.Add(-70 * time.Second)}
	if Stale(doc, now) {
		t.Error("70s after a publication with a 60s heartbeat and 5s interval: not stale yet")
	}
	doc.Published = now.Add(-80 * time.Second)
	if !Stale(doc, now) {
		t.Error("80s after: stale")
	}
}

func placementEvent(ns, name, reporter string, at time.Time) *v1.Event {
	return &v1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: ns, Name: name},
		InvolvedObject:      v1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name + "-pod"},
		Reason:              status.PlacementEventReason,
		Message:             "placed " + name,
		ReportingController: reporter,
		EventTime:           metav1.NewMicroTime(at),
	}
}

// Placements takes the profile's own events only, the newest first, over
// every page.
func TestPlacements(t *testing.T) {
	now := time.Now()
	var objs []runtime.Object
	for i := range 12 {
		objs = append(objs, placementEvent(fmt.Sprintf("ns%d", i%3), fmt.Sprintf("e%02d", i), "kns-3-scheduler", now.Add(time.Duration(i)*time.Second)))
	}
	forged := placementEvent("dev", "forged", "someone", now.Add(time.Hour))
	objs = append(objs, forged)
	client := fake.NewClientset(objs...)
	// The fake server ignores paging: serve the list in pages of two.
	pages := 0
	client.PrependReactor("list", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).ListOptions
		if opts.Limit == 0 || opts.Limit > PageSize {
			t.Errorf("list without a page limit: %+v", opts)
		}
		var all v1.EventList
		for _, o := range objs {
			all.Items = append(all.Items, *o.(*v1.Event))
		}
		start := 0
		if opts.Continue != "" {
			fmt.Sscan(opts.Continue, &start)
		}
		end := min(start+2, len(all.Items))
		page := &v1.EventList{Items: all.Items[start:end]}
		if end < len(all.Items) {
			page.Continue = fmt.Sprint(end)
		}
		pages++
		return true, page, nil
	})
	got, err := Placements(context.Background(), client, []string{"kns-3-scheduler"}, 3, now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"e11", "e10", "e09"}) {
		t.Errorf("placements %v, want the 3 newest of the profile's", names)
	}
	if pages != 7 {
		t.Errorf("read %d pages, want all 7", pages)
	}
	if got, err := Placements(context.Background(), client, []string{"kns-3-scheduler"}, 0, now); err != nil || len(got) != 0 {
		t.Errorf("n=0: %v, %v", got, err)
	}
}

func TestPodEvents(t *testing.T) {
	now := time.Now()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1"}, Spec: v1.PodSpec{SchedulerName: "kns-3-scheduler"}}
	ev := func(name, reason, reporter, msg string, at time.Time) *v1.Event {
		return &v1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "ns", Name: name},
			InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web", UID: "u1"},
			Reason:         reason, Message: msg, ReportingController: reporter, EventTime: metav1.NewMicroTime(at),
		}
	}
	client := fake.NewClientset(
		ev("p1", status.PlacementEventReason, "kns-3-scheduler", "old placement", now.Add(-time.Minute)),
		ev("p2", status.PlacementEventReason, "kns-3-scheduler", "new placement", now),
		ev("p3", status.PlacementEventReason, "forger", "forged placement", now.Add(time.Hour)),
		ev("f1", ReasonFailedScheduling, "kns-3-scheduler", "0/3 nodes: old", now.Add(-time.Minute)),
		ev("f2", ReasonFailedScheduling, "kns-3-scheduler", "0/3 nodes: new", now),
	)
	placement, failed, err := PodEvents(context.Background(), client, pod, now)
	if err != nil || placement != "new placement" || failed != "0/3 nodes: new" {
		t.Errorf("PodEvents = %q, %q, %v", placement, failed, err)
	}
	pod.Spec.NodeName = "a"
	if _, failed, _ := PodEvents(context.Background(), client, pod, now); failed != "" {
		t.Errorf("a bound pod's FailedScheduling %q, want none", failed)
	}
}

// An event that names no valid pod, or whose time is in the future, is
// dropped whoever claims to report it.
func TestImplausibleEventsDropped(t *testing.T) {
	now := time.Now()
	good := placementEvent("ns", "good", "kns-3-scheduler", now.Add(-time.Minute))
	skewed := placementEvent("ns", "skewed", "kns-3-scheduler", now.Add(MaxClockSkew/2))
	future := placementEvent("ns", "future", "kns-3-scheduler", now.Add(time.Hour))
	laterSeries := placementEvent("ns", "series", "kns-3-scheduler", now.Add(-time.Hour))
	laterSeries.Series = &v1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(now.Add(24 * time.Hour))}
	badName := placementEvent("ns", "badname", "kns-3-scheduler", now)
	badName.InvolvedObject.Name = "\x1b]52;c;QUJD\x07"
	badNamespace := placementEvent("ns", "badns", "kns-3-scheduler", now)
	badNamespace.InvolvedObject.Namespace = "Dev"
	client := fake.NewClientset(good, skewed, future, laterSeries, badName, badNamespace)
	got, err := Placements(context.Background(), client, []string{"kns-3-scheduler"}, 10, now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"skewed", "good"}) {
		t.Errorf("placements %v, want [skewed good]: within the clock skew, and valid names", names)
	}

	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "good-pod", UID: "u1"}, Spec: v1.PodSpec{SchedulerName: "kns-3-scheduler", NodeName: "a"}}
	for _, e := range []*v1.Event{good, future} {
		e.InvolvedObject.UID = pod.UID
		e.InvolvedObject.Name = pod.Name
	}
	client = fake.NewClientset(good, future)
	if placement, _, err := PodEvents(context.Background(), client, pod, now); err != nil || placement != "placed good" {
		t.Errorf("PodEvents = %q, %v; want the real placement, not the future-dated one", placement, err)
	}
}

// viewerOnly refuses what the shipped kns-3-viewer role does not grant: in
// kube-system it may read the status ConfigMap, not list pods.
func viewerOnly(client *fake.Clientset) *fake.Clientset {
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == "kube-system" {
			return true, nil, apierrors.NewForbidden(v1.Resource("pods"), "", errors.New("RBAC: kns-3-viewer"))
		}
		return false, nil, nil
	})
	return client
}

// Whoever administers kns-3-system can make a pod that looks made by the
// install and publish a fresh status there; kube-system only cluster
// admins write. A control-plane install with a fresh status is chosen,
// under the viewer's rights too, and the other install is named.
func TestFindPrefersAFreshControlPlane(t *testing.T) {
	now := time.Now()
	forgedPod := deploymentPod("kns-3-scheduler-587f979d6c-abcde", now)
	forged := status.ProfileStatus{Profile: "kns-3-scheduler", Instance: forgedPod.Name, RefreshMode: "forged", Published: now, IntervalSeconds: 5, HeartbeatSeconds: 60}
	real := status.ProfileStatus{Profile: "kns-3-scheduler", Instance: "cp", RefreshMode: "PerCycle", Published: now, IntervalSeconds: 5, HeartbeatSeconds: 60}
	for _, viewer := range []bool{false, true} {
		client := fake.NewClientset(forgedPod, statusConfigMap("kns-3-system", forged), mirrorPod("cp"), statusConfigMap("kube-system", real))
		if viewer {
			client = viewerOnly(client)
		}
		in, err := Find(context.Background(), client)
		if err != nil {
			t.Fatal(err)
		}
		if in.Kind != ControlPlane || len(in.Profiles) != 1 || in.Profiles[0].RefreshMode != "PerCycle" {
			t.Errorf("viewer %t: found the %s install (%+v), want the control plane's", viewer, in.Kind, in.Profiles)
		}
	}
}

// TestFindUnderTheViewerRole holds a migration between the installs to
// what a user with only the shipped kns-3-viewer role sees (kube-system's
// pods unlisted), beside what an admin sees; the install not chosen is
// always named.
func TestFindUnderTheViewerRole(t *testing.T) {
	now := time.Now()
	deployment := deploymentPod("kns-3-scheduler-587f979d6c-abcde", now.Add(-time.Hour))
	doc := func(instance string, published time.Time) status.ProfileStatus {
		return status.ProfileStatus{Profile: "kns-3-scheduler", Instance: instance, Published: published, IntervalSeconds: 5, HeartbeatSeconds: 60}
	}
	for _, tc := range []struct {
		name              string
		objs              []runtime.Object
		wantAdmin, wantUI Kind
	}{
		{
			// The control plane's scheduler has not published yet: only an
			// admin sees its pod; the viewer is told of it.
			name: "moving to the control plane, not published yet",
			objs: []runtime.Object{statusConfigMap("kns-3-system", doc(deployment.Name, now)), mirrorPod("cp"),
				statusConfigMap("kube-system", doc("cp", now.Add(-time.Hour)))},
			wantAdmin: ControlPlane, wantUI: SecondScheduler,
		},
		{
			name: "moving to the control plane, published",
			objs: []runtime.Object{deployment, statusConfigMap("kns-3-system", doc(deployment.Name, now)), mirrorPod("cp"),
				statusConfigMap("kube-system", doc("cp", now))},
			wantAdmin: ControlPlane, wantUI: ControlPlane,
		},
		{
			name: "back to the Deployment",
			objs: []runtime.Object{deployment, statusConfigMap("kns-3-system", doc(deployment.Name, now)),
				statusConfigMap("kube-system", doc("cp", now.Add(-time.Hour)))},
			wantAdmin: SecondScheduler, wantUI: SecondScheduler,
		},
		{
			// install.sh --uninstall has just run: the control plane's
			// status is still within its heartbeat, its pod gone. An admin
			// sees that; the viewer, who cannot list kube-system's pods,
			// trusts the status until it goes stale.
			name: "back to the Deployment, the control plane's status not yet stale",
			objs: []runtime.Object{deployment, statusConfigMap("kns-3-system", doc(deployment.Name, now.Add(-30*time.Second))),
				statusConfigMap("kube-system", doc("cp", now.Add(-10*time.Second)))},
			wantAdmin: SecondScheduler, wantUI: ControlPlane,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, viewer := range []bool{false, true} {
				client := fake.NewClientset(tc.objs...)
				want := tc.wantAdmin
				if viewer {
					client, want = viewerOnly(client), tc.wantUI
				}
				in, err := Find(context.Background(), client)
				if err != nil {
					t.Fatal(err)
				}
				if in.Kind != want {
					t.Errorf("viewer %t: found the %s install, want %s", viewer, in.Kind, want)
				}
				if in.Other == nil || in.Other.Kind == in.Kind {
					t.Errorf("viewer %t: the other install is not named (%+v)", viewer, in.Other)
				}
			}
		})
	}
}
