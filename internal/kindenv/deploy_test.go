package kindenv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	schedulerv1 "k8s.io/kube-scheduler/config/v1"
	_ "k8s.io/kubernetes/pkg/features" // registers Kubernetes' gates with the default gate
	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/installclient"
	configv1 "kns3.dev/kns3/scheduler/apis/config/v1"
	"kns3.dev/kns3/scheduler/apis/status"
)

// deployDir is deploy/ seen from this package's directory, where go test
// and Bazel (with //deploy:manifests as data) both run the test.
func deployDir(*testing.T) string {
	return filepath.Join("..", "..", "deploy")
}

func TestRenderDeploy(t *testing.T) {
	objs, err := Render(deployDir(t))
	if err != nil {
		t.Fatal(err)
	}
	find := func(kind, ns, name string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind && o.GetNamespace() == ns && (o.GetName() == name || name == "") {
				return o
			}
		}
		t.Errorf("no %s %s/%s in deploy/", kind, ns, name)
		return nil
	}
	// The client CA lives in kube-system: the binding must stay there.
	find("RoleBinding", "kube-system", "kns-3-scheduler:extension-apiserver-authentication-reader")
	find("ClusterRoleBinding", "", "kns-3-scheduler:kube-scheduler")
	find("ClusterRoleBinding", "", "kns-3-scheduler:volume-scheduler")
	find("ServiceAccount", Namespace, "kns-3-scheduler")
	// The tests and users edit the scenario in place: no hash suffix.
	find("ConfigMap", Namespace, ScenarioConfigMap)

	d := find("Deployment", Namespace, Deployment)
	if d == nil {
		return
	}
	// kustomize's maps hold plain ints, which the deep-copying helpers reject.
	field, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "template", "spec", "containers")
	containers, _ := field.([]any)
	var names []string
	for _, c := range containers {
		c := c.(map[string]any)
		names = append(names, c["name"].(string))
		if c["name"] == installclient.SchedulerContainer {
			var args []string
			rawArgs, _ := c["args"].([]any)
			for _, a := range rawArgs {
				args = append(args, a.(string))
			}
			for _, want := range []string{
				"--config=/etc/kubernetes/scheduler-config.yaml",
				"--v=1",
			} {
				if !slices.Contains(args, want) {
					t.Errorf("scheduler args %v lack %s", args, want)
				}
			}
		}
	}
	if !slices.Equal(names, []string{installclient.SchedulerContainer, installclient.SimulatorContainer}) {
		t.Errorf("containers = %v, want [%s %s] in one pod", names, installclient.SchedulerContainer, installclient.SimulatorContainer)
	}
	// Objects must come before what uses them.
	order := map[string]int{}
	for i, o := range objs {
		if _, seen := order[o.GetKind()]; !seen {
			order[o.GetKind()] = i
		}
	}
	if order["ConfigMap"] > order["Deployment"] || order["ServiceAccount"] > order["Deployment"] {
		t.Errorf("apply order %v puts the Deployment before its ConfigMaps or ServiceAccount", order)
	}
}

func TestRenderSample(t *testing.T) {
	objs, err := Render(filepath.Join(deployDir(t), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	pods := int64(0)
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		scheduler, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "template", "spec", "schedulerName")
		if scheduler != "kns-3-scheduler" {
			t.Errorf("sample %s uses scheduler %q", o.GetName(), scheduler)
		}
		n, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas")
		switch n := n.(type) {
		case int:
			pods += int64(n)
		case int64:
			pods += n
		}
	}
	if pods != SamplePods {
		t.Errorf("deploy/sample has %d pods, the demo waits for %d", pods, SamplePods)
	}
}

// renderTyped renders dir and converts the one object of kind and name
// into out.
func renderTyped(t *testing.T, dir, kind, name string, out any) {
	t.Helper()
	objs, err := Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasPrefix(o.GetName(), name) {
			if err := runtimeFromUnstructured(o.Object, out); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s renders no %s %s", dir, kind, name)
}

// The second-scheduler install must start where no node is labeled
// control-plane (GKE, EKS, AKS): at most a preference for such nodes.
// It runs at a priority that workloads do not preempt, admitted outside
// kube-system by its quota.
func TestDeployRunsOnManagedClusters(t *testing.T) {
	for _, dir := range []string{deployDir(t), filepath.Join(deployDir(t), "ha"), filepath.Join(deployDir(t), "live")} {
		var d appsv1.Deployment
		renderTyped(t, dir, "Deployment", Deployment, &d)
		spec := d.Spec.Template.Spec
		if len(spec.NodeSelector) > 0 {
			t.Errorf("%s: nodeSelector %v: the pod stays Pending on clusters without such nodes", dir, spec.NodeSelector)
		}
		if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			t.Errorf("%s: required node affinity %v", dir, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
		}
		if spec.PriorityClassName != "system-cluster-critical" {
			t.Errorf("%s: priorityClassName %q, want system-cluster-critical", dir, spec.PriorityClassName)
		}
		var quota v1.ResourceQuota
		renderTyped(t, dir, "ResourceQuota", "kns-3-critical-pods", &quota)
		scoped := false
		for _, e := range quota.Spec.ScopeSelector.MatchExpressions {
			scoped = scoped || (e.ScopeName == v1.ResourceQuotaScopePriorityClass && slices.Contains(e.Values, spec.PriorityClassName))
		}
		if !scoped || quota.Namespace != Namespace {
			t.Errorf("%s: no quota for priority class %s in %s: %+v", dir, spec.PriorityClassName, Namespace, quota)
		}
		if replicas := *d.Spec.Replicas; quota.Spec.Hard.Pods().Value() < int64(replicas)+1 {
			t.Errorf("%s: the quota admits %s pods, fewer than %d replicas and one surge", dir, quota.Spec.Hard.Pods(), replicas)
		}
	}
}

// Only the scheduler container holds an API token: a compromised simulator
// must not act with the scheduler's rights.
func TestOnlyTheSchedulerHoldsAToken(t *testing.T) {
	var d appsv1.Deployment
	renderTyped(t, deployDir(t), "Deployment", Deployment, &d)
	spec := d.Spec.Template.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Fatal("automountServiceAccountToken is not false: every container gets the token")
	}
	tokenVolumes := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				tokenVolumes[v.Name] = true
			}
		}
	}
	for _, c := range spec.Containers {
		mounted := false
		for _, m := range c.VolumeMounts {
			if tokenVolumes[m.Name] {
				mounted = true
				if m.MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" {
					t.Errorf("%s mounts the token at %s, not where client-go looks", c.Name, m.MountPath)
				}
			}
		}
		if want := c.Name == installclient.SchedulerContainer; mounted != want {
			t.Errorf("container %s mounts a token: %t, want %t", c.Name, mounted, want)
		}
	}
}

// NetworkPeers reads AppGroups, and the installs let the scheduler's
// identity read them, in every namespace, and do nothing else with them.
func TestAppGroupsReadOnly(t *testing.T) {
	for _, tt := range []struct {
		dir     string
		subject rbacv1.Subject
	}{
		{deployDir(t), rbacv1.Subject{Kind: "ServiceAccount", Name: Deployment, Namespace: Namespace}},
		{filepath.Join(deployDir(t), "control-plane", "status"), rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: "system:kube-scheduler"}},
	} {
		var role rbacv1.ClusterRole
		renderTyped(t, tt.dir, "ClusterRole", "kns-3-scheduler:appgroups", &role)
		want := []rbacv1.PolicyRule{{APIGroups: []string{"appgroup.diktyo.x-k8s.io"}, Resources: []string{"appgroups"}, Verbs: []string{"get", "list", "watch"}}}
		if !reflect.DeepEqual(role.Rules, want) {
			t.Errorf("%s: ClusterRole %s rules %+v, want %+v", tt.dir, role.Name, role.Rules, want)
		}
		var binding rbacv1.ClusterRoleBinding
		renderTyped(t, tt.dir, "ClusterRoleBinding", "kns-3-scheduler:appgroups", &binding)
		if !reflect.DeepEqual(binding.Subjects, []rbacv1.Subject{tt.subject}) || binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != role.Name {
			t.Errorf("%s: binding %+v to %+v, want %+v to %s", tt.dir, binding.Subjects, binding.RoleRef, tt.subject, role.Name)
		}
	}
}

// The scheduler publishes its status into its namespace's ConfigMap, which
// the install makes and lets it patch, and nothing else.
func TestStatusConfigMapAndRights(t *testing.T) {
	for _, tt := range []struct {
		dir, namespace string
		subject        rbacv1.Subject
	}{
		{deployDir(t), Namespace, rbacv1.Subject{Kind: "ServiceAccount", Name: Deployment, Namespace: Namespace}},
		{filepath.Join(deployDir(t), "control-plane", "status"), "kube-system", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: "system:kube-scheduler"}},
	} {
		var cm v1.ConfigMap
		renderTyped(t, tt.dir, "ConfigMap", status.ConfigMapName, &cm)
		if cm.Namespace != tt.namespace {
			t.Errorf("%s: status ConfigMap in %q, want %q", tt.dir, cm.Namespace, tt.namespace)
		}
		var role rbacv1.Role
		renderTyped(t, tt.dir, "Role", "kns-3-scheduler:status", &role)
		want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{status.ConfigMapName}, Verbs: []string{"get", "patch"}}}
		if !reflect.DeepEqual(role.Rules, want) || role.Namespace != tt.namespace {
			t.Errorf("%s: role %s/%s rules %+v, want %+v", tt.dir, role.Namespace, role.Name, role.Rules, want)
		}
		var binding rbacv1.RoleBinding
		renderTyped(t, tt.dir, "RoleBinding", "kns-3-scheduler:status", &binding)
		if !reflect.DeepEqual(binding.Subjects, []rbacv1.Subject{tt.subject}) || binding.RoleRef.Name != role.Name {
			t.Errorf("%s: binding %+v, want %+v to %s", tt.dir, binding.Subjects, tt.subject, role.Name)
		}
	}
	var d appsv1.Deployment
	renderTyped(t, deployDir(t), "Deployment", Deployment, &d)
	var pod v1.Pod
	objs, err := Render(filepath.Join(deployDir(t), "control-plane"))
	if err != nil {
		t.Fatal(err)
	}
	if err := runtimeFromUnstructured(objs[0].Object, &pod); err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]v1.PodSpec{"deployment": d.Spec.Template.Spec, "static pod": pod.Spec} {
		found := false
		for _, c := range spec.Containers {
			for _, e := range c.Env {
				if e.Name == status.NamespaceEnv && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
					found = c.Name == installclient.SchedulerContainer
				}
			}
		}
		if !found {
			t.Errorf("%s: the scheduler container is not told its namespace (%s)", name, status.NamespaceEnv)
		}
	}
}

// deploy/ha runs two replicas that elect a leader on KNS-3's own lease,
// which they may take and no other.
func TestHADeploy(t *testing.T) {
	dir := filepath.Join(deployDir(t), "ha")
	var d appsv1.Deployment
	renderTyped(t, dir, "Deployment", Deployment, &d)
	if *d.Spec.Replicas != 2 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("replicas %d, strategy %s; want 2, RollingUpdate", *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	var cm v1.ConfigMap
	renderTyped(t, dir, "ConfigMap", "kns-3-scheduler-config", &cm)
	var cfg struct {
		LeaderElection struct {
			LeaderElect       bool   `json:"leaderElect"`
			ResourceName      string `json:"resourceName"`
			ResourceNamespace string `json:"resourceNamespace"`
		} `json:"leaderElection"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["scheduler-config.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	le := cfg.LeaderElection
	if !le.LeaderElect || le.ResourceNamespace != Namespace || le.ResourceName != Deployment {
		t.Errorf("leader election %+v, want on, lease %s/%s", le, Namespace, Deployment)
	}
	if d.Spec.Template.Spec.Volumes[0].ConfigMap.Name != cm.Name {
		t.Errorf("the pod mounts %s, not the HA configuration %s", d.Spec.Template.Spec.Volumes[0].ConfigMap.Name, cm.Name)
	}
	var role rbacv1.Role
	renderTyped(t, dir, "Role", "kns-3-scheduler:leader-election", &role)
	for _, r := range role.Rules {
		if slices.Contains(r.Verbs, "update") && !slices.Equal(r.ResourceNames, []string{le.ResourceName}) {
			t.Errorf("leader election role updates leases %v, want only %s", r.ResourceNames, le.ResourceName)
		}
	}
	// The specification's profile, unchanged.
	var spec v1.ConfigMap
	renderTyped(t, deployDir(t), "ConfigMap", "kns-3-scheduler-config", &spec)
	strip := func(s string) string { _, profiles, _ := strings.Cut(s, "profiles:"); return profiles }
	if strip(spec.Data["scheduler-config.yaml"]) != strip(cm.Data["scheduler-config.yaml"]) {
		t.Error("deploy/ha's profiles differ from the specification's configuration")
	}
}

// deploy/live is deploy/ with a probe agent on every node that the
// simulator finds by DNS: the agents live in a namespace of their own,
// tolerate every taint, hold no token, need no privilege, see nothing of
// their node but its /sys and its routing table, read-only, and sign
// their answers with the probe key the simulator holds too; the simulator
// names their headless Service and has the CPU to keep up.
func TestLiveDeploy(t *testing.T) {
	dir := filepath.Join(deployDir(t), "live")
	checkLiveProfile(t, filepath.Join(deployDir(t), "scheduler-config.yaml"), filepath.Join(dir, "scheduler-config.yaml"))
	var ds appsv1.DaemonSet
	renderTyped(t, dir, "DaemonSet", "kns-3-agent", &ds)
	if ds.Namespace != AgentNamespace {
		t.Errorf("agents in %q, want their own namespace %q", ds.Namespace, AgentNamespace)
	}
	pod := ds.Spec.Template.Spec
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken || pod.HostNetwork {
		t.Errorf("agent: automountServiceAccountToken %v, hostNetwork %v; want false, false", pod.AutomountServiceAccountToken, pod.HostNetwork)
	}
	if len(pod.Tolerations) != 1 || pod.Tolerations[0].Operator != v1.TolerationOpExists || pod.Tolerations[0].Key != "" {
		t.Errorf("agent tolerations %v, want every taint tolerated", pod.Tolerations)
	}
	// The node's /sys and routing table, read-only, for its link's byte
	// counters; the probe key; no other volume.
	agent := pod.Containers[0]
	mounts := map[string]v1.VolumeMount{}
	for _, m := range agent.VolumeMounts {
		mounts[m.Name] = m
	}
	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		m, mounted := mounts[v.Name]
		switch {
		case v.HostPath != nil:
			hostPaths[v.HostPath.Path] = m.MountPath
			if !mounted || !m.ReadOnly {
				t.Errorf("agent host path %s mounted %+v, want read-only", v.HostPath.Path, m)
			}
		case v.Secret != nil && v.Secret.SecretName == ProbeKeySecret:
			if !mounted || !slices.Contains(agent.Args, "--probe-key-file="+m.MountPath+"/key") {
				t.Errorf("agent mounts the probe key at %+v, args %v: want --probe-key-file there", m, agent.Args)
			}
		default:
			t.Errorf("agent volume %+v: want host paths and the probe key only", v)
		}
	}
	if want := map[string]string{"/sys": "/host/sys", "/proc/1/net/route": "/host/proc/net/route"}; !reflect.DeepEqual(hostPaths, want) {
		t.Errorf("agent host paths %v, want %v", hostPaths, want)
	}
	if m := mounts["node-sys"]; m.RecursiveReadOnly == nil || *m.RecursiveReadOnly != v1.RecursiveReadOnlyIfPossible {
		t.Errorf("the node's /sys mounted %+v: want read-only all the way down where the runtime can", m)
	}
	// The agents find each other as the simulator finds them.
	for _, arg := range []string{"--node-sysfs=/host/sys", "--node-routes=/host/proc/net/route", "--node-link=auto", "--peers=dns:kns-3-agent.kns-3-agents.svc:10271"} {
		if !slices.Contains(agent.Args, arg) {
			t.Errorf("agent args %v lack %s", agent.Args, arg)
		}
	}
	if sc := agent.SecurityContext; sc == nil || sc.Privileged != nil && *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("agent security context %+v, want unprivileged", sc)
	}
	var svc v1.Service
	renderTyped(t, dir, "Service", "kns-3-agent", &svc)
	if svc.Spec.ClusterIP != v1.ClusterIPNone || svc.Spec.Selector["app.kubernetes.io/name"] != ds.Spec.Selector.MatchLabels["app.kubernetes.io/name"] ||
		svc.Namespace != ds.Namespace {
		t.Errorf("agent Service: clusterIP %q, selector %v, namespace %q; want headless, selecting the DaemonSet's pods, beside them", svc.Spec.ClusterIP, svc.Spec.Selector, svc.Namespace)
	}
	var d appsv1.Deployment
	renderTyped(t, dir, "Deployment", Deployment, &d)
	// No cluster domain: the pod's search list adds the cluster's own.
	want := fmt.Sprintf("--agents=dns:%s.%s.svc:%d", svc.Name, svc.Namespace, svc.Spec.Ports[0].Port)
	var simulator *v1.Container
	for i, c := range d.Spec.Template.Spec.Containers {
		if c.Name == installclient.SimulatorContainer {
			simulator = &d.Spec.Template.Spec.Containers[i]
		}
	}
	if simulator == nil || !slices.Contains(simulator.Args, want) {
		t.Fatalf("the simulator container's args lack %s", want)
	}
	keyMounted := false
	for _, m := range simulator.VolumeMounts {
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == ProbeKeySecret {
				keyMounted = slices.Contains(simulator.Args, "--probe-key-file="+m.MountPath+"/key")
			}
		}
	}
	if !keyMounted {
		t.Errorf("the simulator does not read the probe key from the Secret %s: mounts %+v, args %v", ProbeKeySecret, simulator.VolumeMounts, simulator.Args)
	}
	// The prober reads and signs every probe: at the base's 20m a busy
	// node held it back.
	if cpu := simulator.Resources.Requests.Cpu(); cpu.MilliValue() < 100 {
		t.Errorf("the live simulator requests %s of CPU, want at least 100m", cpu)
	}
	if pod.PriorityClassName != "system-node-critical" {
		t.Errorf("agent priority class %q, want system-node-critical", pod.PriorityClassName)
	}
	var quota v1.ResourceQuota
	renderTyped(t, dir, "ResourceQuota", "kns-3-node-critical-pods", &quota)
	if sel := quota.Spec.ScopeSelector; sel == nil || len(sel.MatchExpressions) != 1 || !slices.Contains(sel.MatchExpressions[0].Values, pod.PriorityClassName) ||
		quota.Namespace != ds.Namespace {
		t.Errorf("no quota scoped to the agents' priority class %s in %s: %+v", pod.PriorityClassName, ds.Namespace, quota)
	}
}

// TestPodSecurityLevels renders every install and checks the Pod Security
// level each namespace it makes enforces: kns-3-system, where the
// scheduler and its credentials are, restricted in every install; only
// the agents' namespace privileged, and nothing in it but the agents.
func TestPodSecurityLevels(t *testing.T) {
	for _, dir := range []string{
		deployDir(t), filepath.Join(deployDir(t), "ha"), filepath.Join(deployDir(t), "live"),
		filepath.Join(deployDir(t), "live", "control-plane", "agents"),
	} {
		objs, err := Render(dir)
		if err != nil {
			t.Fatal(err)
		}
		levels := map[string]string{}
		for _, o := range objs {
			if o.GetKind() == "Namespace" {
				levels[o.GetName()] = o.GetLabels()["pod-security.kubernetes.io/enforce"]
			}
		}
		if dir != filepath.Join(deployDir(t), "live", "control-plane", "agents") && levels[Namespace] != "restricted" {
			t.Errorf("%s: %s enforces %q, want restricted", dir, Namespace, levels[Namespace])
		}
		for ns, level := range levels {
			if level == "" {
				t.Errorf("%s: namespace %s enforces no Pod Security level", dir, ns)
			}
			if level != "restricted" && ns != AgentNamespace {
				t.Errorf("%s: namespace %s enforces %q: only the agents' namespace may be above restricted", dir, ns, level)
			}
		}
		for _, o := range objs {
			if level, ok := levels[o.GetNamespace()]; ok && level != "restricted" && !podLess(o.GetKind()) &&
				!(o.GetKind() == "DaemonSet" && o.GetName() == "kns-3-agent") {
				t.Errorf("%s: %s %s/%s runs pods in %s, which enforces %q", dir, o.GetKind(), o.GetNamespace(), o.GetName(), o.GetNamespace(), level)
			}
		}
	}
	// The one-scheduler install's static pod runs in kube-system, as
	// kubeadm's kube-scheduler does; its agents are above.
}

// podLess says objects of kind make no pods.
func podLess(kind string) bool {
	return !slices.Contains([]string{"Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob"}, kind)
}

// TestLiveAgentPolicy renders deploy/live's NetworkPolicy and asks it who
// may reach an agent: the scheduler's pods in kns-3-system and the other
// agents on the probe and train ports, and nobody else. Kind's pod network here does not enforce policies, so the policy
// is checked as written.
func TestLiveAgentPolicy(t *testing.T) {
	dir := filepath.Join(deployDir(t), "live")
	var np networkingv1.NetworkPolicy
	renderTyped(t, dir, "NetworkPolicy", "kns-3-agent", &np)
	var ds appsv1.DaemonSet
	renderTyped(t, dir, "DaemonSet", "kns-3-agent", &ds)
	var d appsv1.Deployment
	renderTyped(t, dir, "Deployment", Deployment, &d)
	ports := ds.Spec.Template.Spec.Containers[0].Ports
	if len(ports) != 2 || ports[1].ContainerPort != ports[0].ContainerPort+1 {
		t.Fatalf("agent ports %v: want the probe port and the train port after it", ports)
	}
	agentPort, trainPort := ports[0], ports[1]
	if np.Namespace != ds.Namespace {
		t.Fatalf("the policy is in %q, the agents in %q", np.Namespace, ds.Namespace)
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(ds.Spec.Template.Labels)) || sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the policy selects %v: want the agents' pods (%v) and not the scheduler's", sel, ds.Spec.Template.Labels)
	}
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("policy types %v, want Ingress", np.Spec.PolicyTypes)
	}
	if np.Namespace != AgentNamespace || d.Namespace != Namespace {
		t.Fatalf("policy in %q, scheduler in %q: want %q and %q", np.Namespace, d.Namespace, AgentNamespace, Namespace)
	}
	sample := map[string]string{"app": "sample"}
	for _, tc := range []struct {
		name     string
		ns       string
		labels   map[string]string
		protocol v1.Protocol
		port     int32
		want     bool
	}{
		{"the scheduler's pod, probe port", d.Namespace, d.Spec.Template.Labels, agentPort.Protocol, agentPort.ContainerPort, true},
		{"the scheduler's pod, train port", d.Namespace, d.Spec.Template.Labels, trainPort.Protocol, trainPort.ContainerPort, true},
		{"the scheduler's pod, another port", d.Namespace, d.Spec.Template.Labels, agentPort.Protocol, trainPort.ContainerPort + 1, false},
		{"a workload pod, train port", "default", sample, trainPort.Protocol, trainPort.ContainerPort, false},
		{"the scheduler's pod, TCP", d.Namespace, d.Spec.Template.Labels, v1.ProtocolTCP, agentPort.ContainerPort, false},
		{"a workload pod", "default", sample, agentPort.Protocol, agentPort.ContainerPort, false},
		{"a pod labelled as the scheduler in another namespace", "default", d.Spec.Template.Labels, agentPort.Protocol, agentPort.ContainerPort, false},
		{"a pod labelled as the scheduler beside the agents", ds.Namespace, d.Spec.Template.Labels, agentPort.Protocol, agentPort.ContainerPort, false},
		{"another agent", ds.Namespace, ds.Spec.Template.Labels, agentPort.Protocol, agentPort.ContainerPort, true},
		{"another agent, train port", ds.Namespace, ds.Spec.Template.Labels, trainPort.Protocol, trainPort.ContainerPort, true},
		{"a pod labelled as an agent in another namespace", "default", ds.Spec.Template.Labels, agentPort.Protocol, agentPort.ContainerPort, false},
		{"another agent, another port", ds.Namespace, ds.Spec.Template.Labels, agentPort.Protocol, trainPort.ContainerPort + 1, false},
	} {
		if got := admits(t, np, tc.ns, tc.labels, tc.protocol, tc.port); got != tc.want {
			t.Errorf("%s: admitted %v, want %v", tc.name, got, tc.want)
		}
	}
}

// admits says whether np lets a pod in namespace ns with labels reach the
// pods it selects on protocol and port. A namespace is matched by its
// kubernetes.io/metadata.name label, the one every namespace has; an IP
// block admits nothing here.
func admits(t *testing.T, np networkingv1.NetworkPolicy, ns string, podLabels map[string]string, protocol v1.Protocol, port int32) bool {
	t.Helper()
	for _, rule := range np.Spec.Ingress {
		portOK := len(rule.Ports) == 0
		for _, p := range rule.Ports {
			proto := v1.ProtocolTCP
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			portOK = portOK || (proto == protocol && (p.Port == nil || p.Port.IntValue() == int(port)))
		}
		if !portOK {
			continue
		}
		for _, peer := range rule.From {
			if peer.IPBlock != nil {
				continue
			}
			if peer.NamespaceSelector == nil && ns != np.Namespace {
				continue
			}
			if peer.NamespaceSelector != nil {
				sel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
				if err != nil {
					t.Fatal(err)
				}
				if !sel.Matches(labels.Set{"kubernetes.io/metadata.name": ns}) {
					continue
				}
			}
			podSel := peer.PodSelector
			if podSel == nil {
				podSel = &metav1.LabelSelector{}
			}
			sel, err := metav1.LabelSelectorAsSelector(podSel)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Matches(labels.Set(podLabels)) {
				return true
			}
		}
	}
	return false
}

// schedulerPods renders every install's scheduler pod: the Deployment of
// deploy/, deploy/ha and deploy/live, and the static pod of
// deploy/control-plane and deploy/live/control-plane.
func schedulerPods(t *testing.T) map[string]v1.PodSpec {
	t.Helper()
	pods := map[string]v1.PodSpec{}
	for _, dir := range []string{deployDir(t), filepath.Join(deployDir(t), "ha"), filepath.Join(deployDir(t), "live")} {
		var d appsv1.Deployment
		renderTyped(t, dir, "Deployment", Deployment, &d)
		pods[dir] = d.Spec.Template.Spec
	}
	for _, dir := range []string{filepath.Join(deployDir(t), "control-plane"), filepath.Join(deployDir(t), "live", "control-plane")} {
		var pod v1.Pod
		renderTyped(t, dir, "Pod", "kube-scheduler", &pod)
		pods[dir] = pod.Spec
	}
	return pods
}

// No install turns on an alpha feature gate: the pods of every profile it
// runs, KNS-3's and any other, get upstream's defaults.
func TestNoAlphaFeatureGates(t *testing.T) {
	specs := feature.DefaultMutableFeatureGate.GetAll()
	for dir, spec := range schedulerPods(t) {
		for _, c := range spec.Containers {
			for _, a := range c.Args {
				gates, ok := strings.CutPrefix(a, "--feature-gates=")
				if !ok {
					continue
				}
				for _, g := range strings.Split(gates, ",") {
					name, value, _ := strings.Cut(g, "=")
					if value == "true" && specs[featuregate.Feature(name)].PreRelease == featuregate.Alpha {
						t.Errorf("%s: container %s turns on the alpha feature gate %s", dir, c.Name, name)
					}
				}
			}
		}
	}
}

// The simulator's readiness is /readyz, which says whether /simulate can
// answer (a hung simulator is not ready); its liveness stays /healthz,
// which only says the process serves, so a hang never restarts it.
func TestSimulatorProbes(t *testing.T) {
	for dir, spec := range schedulerPods(t) {
		for _, c := range spec.Containers {
			if c.Name != installclient.SimulatorContainer {
				continue
			}
			probeURL := func(p *v1.Probe) string {
				if p == nil || p.Exec == nil {
					return ""
				}
				for _, a := range p.Exec.Command {
					if u, ok := strings.CutPrefix(a, "--probe="); ok {
						return u
					}
				}
				return ""
			}
			if u := probeURL(c.ReadinessProbe); !strings.HasSuffix(u, "/readyz") {
				t.Errorf("%s: the simulator's readiness probe asks %q, want its /readyz", dir, u)
			}
			if u := probeURL(c.LivenessProbe); !strings.HasSuffix(u, "/healthz") {
				t.Errorf("%s: the simulator's liveness probe asks %q, want its /healthz", dir, u)
			}
		}
	}
}

// checkLiveProfile checks that a live configuration is the one it is
// made from with NetworkCapacity and NetworkPeers added to the
// kns-3-scheduler profile: after CustomScorePlugin at preScore, at score,
// and configured, NetworkPeers with CustomScorePlugin's simulator;
// nothing else differs.
func checkLiveProfile(t *testing.T, fromPath, livePath string) {
	t.Helper()
	var fromCfg, liveCfg schedulerv1.KubeSchedulerConfiguration
	for path, cfg := range map[string]*schedulerv1.KubeSchedulerConfiguration{fromPath: &fromCfg, livePath: &liveCfg} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(data, cfg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	i := slices.IndexFunc(liveCfg.Profiles, func(p schedulerv1.KubeSchedulerProfile) bool {
		return p.SchedulerName != nil && *p.SchedulerName == "kns-3-scheduler"
	})
	if i < 0 || liveCfg.Profiles[i].Plugins == nil {
		t.Fatalf("%s: no kns-3-scheduler profile with plugins", livePath)
	}
	p := &liveCfg.Profiles[i]
	const capacity, peers = "NetworkCapacity", "NetworkPeers"
	added := []string{capacity, peers}
	names := func(ps []schedulerv1.Plugin) []string {
		var out []string
		for _, pl := range ps {
			out = append(out, pl.Name)
		}
		return out
	}
	if got := names(p.Plugins.PreScore.Enabled); !slices.Equal(got, []string{"CustomScorePlugin", capacity, peers}) {
		t.Errorf("%s: preScore %v, want CustomScorePlugin then %s and %s, which read its simulation", livePath, got, capacity, peers)
	}
	for _, name := range added {
		if !slices.Contains(names(p.Plugins.Score.Enabled), name) {
			t.Errorf("%s does not score with %s", livePath, name)
		}
		if n := slices.IndexFunc(p.PluginConfig, func(c schedulerv1.PluginConfig) bool { return c.Name == name }); n < 0 {
			t.Errorf("%s: pluginConfig %v has no %s", livePath, p.PluginConfig, name)
		}
	}
	if score, peer := simulatorURL(t, p.PluginConfig, "CustomScorePlugin"), simulatorURL(t, p.PluginConfig, peers); score != peer {
		t.Errorf("%s: %s tells the simulator at %q which pairs matter, but CustomScorePlugin asks %q", livePath, peers, peer, score)
	}
	without := func(ps []schedulerv1.Plugin) []schedulerv1.Plugin {
		return slices.DeleteFunc(slices.Clone(ps), func(pl schedulerv1.Plugin) bool { return slices.Contains(added, pl.Name) })
	}
	p.Plugins.PreScore.Enabled = without(p.Plugins.PreScore.Enabled)
	p.Plugins.Score.Enabled = without(p.Plugins.Score.Enabled)
	p.PluginConfig = slices.DeleteFunc(p.PluginConfig, func(c schedulerv1.PluginConfig) bool { return slices.Contains(added, c.Name) })
	if len(p.PluginConfig) == 0 {
		p.PluginConfig = nil
	}
	if !reflect.DeepEqual(fromCfg, liveCfg) {
		t.Errorf("%s is not %s with %s added:\n%+v\nwant\n%+v", livePath, fromPath, strings.Join(added, " and "), liveCfg, fromCfg)
	}
}

// simulatorURL is the simulatorURL arg plugin's pluginConfig sets, or the
// one both plugins default to.
func simulatorURL(t *testing.T, configs []schedulerv1.PluginConfig, plugin string) string {
	t.Helper()
	for _, c := range configs {
		if c.Name != plugin {
			continue
		}
		var args struct {
			SimulatorURL string `json:"simulatorURL"`
		}
		if err := json.Unmarshal(c.Args.Raw, &args); err != nil {
			t.Fatalf("%s args: %v", plugin, err)
		}
		if args.SimulatorURL != "" {
			return args.SimulatorURL
		}
	}
	return configv1.DefaultSimulatorURL
}
