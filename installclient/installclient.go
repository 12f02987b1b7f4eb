// Package installclient reads a running KNS-3 install through the API
// server: the scheduler pods the install made, the status the scheduler
// publishes (scheduler/apis/status), and the placement events of its
// profiles. It never connects to a pod, so the caller's credentials go to
// the API server alone, and it trusts only what the install made: a pod
// that merely wears KNS-3's label is ignored.
package installclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kns3.dev/kns3/scheduler/apis/status"
)

const (
	// AppLabel names the KNS-3 pod, in the Deployment and in the control
	// plane's static pod; AppName is its value.
	AppLabel = "app.kubernetes.io/name"
	AppName  = "kns-3-scheduler"
	// SchedulerContainer and SimulatorContainer are the pod's containers.
	SchedulerContainer = "kns-3-scheduler"
	SimulatorContainer = "simulator"
	// ServiceAccount is the Deployment's ServiceAccount.
	ServiceAccount = "kns-3-scheduler"
	// mirrorAnnotation marks the API server's copy of a static pod, which
	// only the kubelet of its node creates.
	mirrorAnnotation = "kubernetes.io/config.mirror"
)

// Kind is how KNS-3 is installed.
type Kind string

const (
	// SecondScheduler is deploy/ (or deploy/ha/): a Deployment in
	// kns-3-system beside the cluster's own kube-scheduler.
	SecondScheduler Kind = "second-scheduler"
	// ControlPlane is deploy/control-plane/: a static pod in kube-system
	// on each control-plane node, the cluster's only scheduler.
	ControlPlane Kind = "control-plane"
)

// Namespaces are where each kind of install lives.
var Namespaces = map[Kind]string{SecondScheduler: "kns-3-system", ControlPlane: metav1.NamespaceSystem}

// ErrNotInstalled is returned when neither install is found.
var ErrNotInstalled = errors.New("KNS-3 is not installed: no status ConfigMap " + status.ConfigMapName +
	" and no pod of its install in namespace kns-3-system or kube-system")

// Install is a KNS-3 install as the API server shows it.
type Install struct {
	Kind      Kind
	Namespace string
	// Pods are the scheduler pods the install made, newest first; PodsErr
	// says why they could not be listed (the tool may read the status
	// without being allowed to list kube-system's pods).
	Pods    []Pod
	PodsErr error
	// Ignored names pods of the namespace that wear KNS-3's label but that
	// the install did not make: their word is never taken.
	Ignored []string
	// Profiles are the published status documents, by profile name;
	// StatusErr says why there are none, or why some were left out.
	Profiles  []status.ProfileStatus
	StatusErr error
	// Other is the other kind of install when Find saw both, nil
	// otherwise: a cluster moving from one to the other holds both for a
	// while, and whoever administers kns-3-system can forge one there.
	Other *Install
}

// Pod is one scheduler pod.
type Pod struct {
	Pod *v1.Pod
	// SchedulerReady and SimulatorReady are its containers' readiness: the
	// scheduler keeps scheduling (without network scores) while the
	// simulator is down.
	SchedulerReady, SimulatorReady bool
	Restarts                       int32
	// Publishing: the published status names this pod (or, for a static
	// pod, its node) as its writer: the leader.
	Publishing bool
}

// Profile returns the published status of profile, if any.
func (in *Install) Profile(profile string) (status.ProfileStatus, bool) {
	for _, p := range in.Profiles {
		if p.Profile == profile {
			return p, true
		}
	}
	return status.ProfileStatus{}, false
}

// ProfileNames are the published profiles' names, sorted.
func (in *Install) ProfileNames() []string {
	names := make([]string, 0, len(in.Profiles))
	for _, p := range in.Profiles {
		names = append(names, p.Profile)
	}
	sort.Strings(names)
	return names
}

// Stale reports whether doc is older than its scheduler's heartbeat allows:
// the scheduler has stopped, lost its lease, or cannot write.
func Stale(doc status.ProfileStatus, now time.Time) bool {
	limit := time.Duration(doc.HeartbeatSeconds+3*doc.IntervalSeconds) * time.Second
	return now.Sub(doc.Published) > limit
}

// Find returns the install that runs, naming the other in Other when both
// are found (a cluster moving from one install to the other holds both for
// a while). The control-plane install wins while its status is fresh: only
// cluster admins write kube-system, while whoever administers kns-3-system
// can make a pod that looks made by the install and publish there; and the
// shipped viewer role cannot list kube-system's pods, so liveness alone
// would favour the namespace it can see into. A status stays fresh for a
// heartbeat after its scheduler stopped, so an install whose pods can be
// listed and are none does not count as fresh: after install.sh
// --uninstall, an admin sees the Deployment at once. Otherwise the one
// whose scheduler is up wins, then the one that published last; the
// second-scheduler install when they are alike.
func Find(ctx context.Context, client kubernetes.Interface) (*Install, error) {
	var denied []error
	var best *Install
	now := time.Now()
	for _, kind := range []Kind{SecondScheduler, ControlPlane} {
		in, found := find(ctx, client, kind)
		if found {
			switch {
			case best == nil:
				best = in
			case in.Kind == ControlPlane && in.running(now), in.liveness(now) > best.liveness(now):
				in.Other, best = best, in
			default:
				best.Other = in
			}
		}
		for _, e := range []error{in.StatusErr, in.PodsErr} {
			if apierrors.IsForbidden(e) {
				denied = append(denied, e)
			}
		}
	}
	if best != nil {
		return best, nil
	}
	if len(denied) > 0 {
		// Not seen is not absent: say what could not be read.
		return nil, fmt.Errorf("%w; but the API server refused: %w", ErrNotInstalled, errors.Join(denied...))
	}
	return nil, ErrNotInstalled
}

// liveness ranks installs: a ready scheduler pod counts more than a status
// published lately, which a scheduler just stopped leaves behind.
func (in *Install) liveness(now time.Time) int {
	n := 0
	for _, p := range in.Pods {
		if p.SchedulerReady {
			n = 2
		}
	}
	if in.running(now) {
		n++
	}
	return n
}

// running reports whether the install's status is fresh and its pods, when
// they can be listed, are not gone.
func (in *Install) running(now time.Time) bool {
	gone := in.PodsErr == nil && len(in.Pods) == 0
	return in.fresh(now) && !gone
}

// fresh reports whether one of the install's profiles published lately.
func (in *Install) fresh(now time.Time) bool {
	return slices.ContainsFunc(in.Profiles, func(doc status.ProfileStatus) bool { return !Stale(doc, now) })
}

// find reads the install of kind; found is false when its namespace holds
// neither its status ConfigMap nor a pod it made.
func find(ctx context.Context, client kubernetes.Interface, kind Kind) (in *Install, found bool) {
	ns := Namespaces[kind]
	in = &Install{Kind: kind, Namespace: ns}
	cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, status.ConfigMapName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		in.StatusErr = &textError{fmt.Sprintf("ConfigMap %s/%s does not exist", ns, status.ConfigMapName), err}
	case err != nil:
		in.StatusErr = fmt.Errorf("reading ConfigMap %s/%s: %w", ns, status.ConfigMapName, err)
	default:
		found = true
		in.Profiles, in.StatusErr = profiles(cm)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: AppLabel + "=" + AppName})
	if err != nil {
		in.PodsErr = fmt.Errorf("listing the pods of namespace %s: %w", ns, err)
		return in, found
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if made(kind, p) {
			in.Pods = append(in.Pods, podOf(p, in.Profiles))
		} else {
			in.Ignored = append(in.Ignored, p.Namespace+"/"+p.Name)
		}
	}
	slices.SortStableFunc(in.Pods, func(a, b Pod) int {
		return b.Pod.CreationTimestamp.Compare(a.Pod.CreationTimestamp.Time)
	})
	return in, found || len(in.Pods) > 0
}

// made reports whether the install of kind made p: the Deployment's pods
// run as its ServiceAccount and belong to one of its ReplicaSets; a static
// pod's mirror belongs to its node, which alone can create it.
func made(kind Kind, p *v1.Pod) bool {
	owner := metav1.GetControllerOf(p)
	switch kind {
	case SecondScheduler:
		return p.Spec.ServiceAccountName == ServiceAccount && owner != nil &&
			owner.Kind == "ReplicaSet" && strings.HasPrefix(owner.Name, AppName+"-")
	case ControlPlane:
		if _, mirror := p.Annotations[mirrorAnnotation]; !mirror {
			return false
		}
		for _, o := range p.OwnerReferences {
			if o.Kind == "Node" && o.Name == p.Spec.NodeName {
				return true
			}
		}
	}
	return false
}

func podOf(p *v1.Pod, profiles []status.ProfileStatus) Pod {
	out := Pod{Pod: p}
	for _, c := range p.Status.ContainerStatuses {
		out.Restarts += c.RestartCount
		switch c.Name {
		case SchedulerContainer:
			out.SchedulerReady = c.Ready && p.DeletionTimestamp == nil
		case SimulatorContainer:
			out.SimulatorReady = c.Ready && p.DeletionTimestamp == nil
		}
	}
	for _, doc := range profiles {
		// The publisher names itself by host name: a Deployment pod's name,
		// a static pod's node.
		if doc.Instance != "" && (doc.Instance == p.Name || (p.Spec.HostNetwork && doc.Instance == p.Spec.NodeName)) {
			out.Publishing = true
		}
	}
	return out
}

// textError says text of err, which it wraps: the API server's own
// wording would only repeat it.
type textError struct {
	text string
	err  error
}

func (e *textError) Error() string { return e.text }
func (e *textError) Unwrap() error { return e.err }

// profiles decodes the status documents of the ConfigMap, and says which
// keys hold none.
func profiles(cm *v1.ConfigMap) ([]status.ProfileStatus, error) {
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []status.ProfileStatus
	var bad []string
	for _, k := range keys {
		var doc status.ProfileStatus
		if err := json.Unmarshal([]byte(cm.Data[k]), &doc); err != nil || doc.Kind != status.Kind || doc.APIVersion != status.APIVersion {
			bad = append(bad, k)
			continue
		}
		out = append(out, doc)
	}
	switch {
	case len(bad) > 0:
		return out, fmt.Errorf("ConfigMap %s/%s: keys %s are not %s %s documents", cm.Namespace, cm.Name, strings.Join(bad, ", "), status.APIVersion, status.Kind)
	case len(out) == 0:
		return nil, fmt.Errorf("ConfigMap %s/%s is empty: the scheduler has published nothing yet (is it running, and allowed to patch it?)", cm.Namespace, cm.Name)
	}
	return out, nil
}
