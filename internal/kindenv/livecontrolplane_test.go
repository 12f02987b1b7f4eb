package kindenv

import (
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"kns3.dev/kns3/installclient"
)

// deploy/live/control-plane is deploy/control-plane's static pod with its
// simulator measuring through the agents: it finds them by cluster DNS
// from the host network, with the window and echo rate deploy/live's
// simulator has, signs its probes with the key install.sh puts beside its
// configuration (a static pod mounts no Secret), takes its share of the
// budget as one of the control-plane nodes' probers, has deploy/live's
// CPU, and its configuration adds NetworkCapacity as deploy/live does.
// Nothing else of the pod changes.
func TestLiveControlPlane(t *testing.T) {
	dir := filepath.Join(deployDir(t), "live", "control-plane")
	checkLiveProfile(t, filepath.Join(deployDir(t), "control-plane", "scheduler-config.yaml"), filepath.Join(dir, "scheduler-config.yaml"))

	objs, err := Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" {
		t.Fatalf("%s renders %d objects, want the one static Pod install.sh takes", dir, len(objs))
	}
	var live, plain v1.Pod
	renderTyped(t, dir, "Pod", "kube-scheduler", &live)
	renderTyped(t, filepath.Join(deployDir(t), "control-plane"), "Pod", "kube-scheduler", &plain)
	if !live.Spec.HostNetwork || live.Spec.DNSPolicy != v1.DNSClusterFirstWithHostNet {
		t.Errorf("hostNetwork %v, dnsPolicy %q: want the host network with cluster DNS (%s)", live.Spec.HostNetwork, live.Spec.DNSPolicy, v1.DNSClusterFirstWithHostNet)
	}

	// The simulator's arguments: deploy/control-plane's, then what
	// deploy/live adds to its Deployment's simulator.
	var d, base appsv1.Deployment
	renderTyped(t, filepath.Join(deployDir(t), "live"), "Deployment", Deployment, &d)
	renderTyped(t, deployDir(t), "Deployment", Deployment, &base)
	added := slices.Clone(simulatorArgs(t, d.Spec.Template.Spec))[len(simulatorArgs(t, base.Spec.Template.Spec)):]
	if len(added) == 0 {
		t.Fatal("deploy/live adds no argument to the simulator")
	}
	// The key is a file of the node's, not the Secret deploy/live mounts;
	// install.sh fills in --probers.
	for i, a := range added {
		if strings.HasPrefix(a, "--probe-key-file=") {
			added[i] = "--probe-key-file=/etc/kubernetes/kns-3/probe-key"
			added = slices.Insert(added, i+1, "--probers=1")
			break
		}
	}
	want := append(slices.Clone(simulatorArgs(t, plain.Spec)), added...)
	if got := simulatorArgs(t, live.Spec); !slices.Equal(got, want) {
		t.Errorf("the simulator's args %v, want %v: deploy/control-plane's and deploy/live's additions", got, want)
	}

	// Apart from those and deploy/live's CPU, the pod is
	// deploy/control-plane's.
	liveCPU := d.Spec.Template.Spec.Containers[1].Resources.Requests.Cpu()
	for i := range live.Spec.Containers {
		if c := &live.Spec.Containers[i]; c.Name == installclient.SimulatorContainer {
			c.Args = simulatorArgs(t, plain.Spec)
			if !c.Resources.Requests.Cpu().Equal(*liveCPU) {
				t.Errorf("the simulator requests %v of CPU, want deploy/live's %v", c.Resources.Requests.Cpu(), liveCPU)
			}
			c.Resources = plain.Spec.Containers[i].Resources
		}
	}
	live.Spec.DNSPolicy = plain.Spec.DNSPolicy
	if !reflect.DeepEqual(live, plain) {
		t.Errorf("deploy/live/control-plane changes more of the static pod than the simulator's args and the DNS policy:\n%+v\nwant\n%+v", live, plain)
	}
}

// deploy/live/control-plane/agents is deploy/live's agents in their
// namespace, exactly, and nothing that holds or grants API credentials.
func TestLiveControlPlaneAgents(t *testing.T) {
	dir := filepath.Join(deployDir(t), "live", "control-plane", "agents")
	objs, err := Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	sort.Strings(kinds)
	if want := []string{"DaemonSet", "Namespace", "NetworkPolicy", "ResourceQuota", "Service"}; !slices.Equal(kinds, want) {
		t.Errorf("%s renders %v, want %v", dir, kinds, want)
	}
	live := filepath.Join(deployDir(t), "live")
	for _, o := range []struct {
		kind, name string
		got, want  any
	}{
		{"DaemonSet", "kns-3-agent", &appsv1.DaemonSet{}, &appsv1.DaemonSet{}},
		{"Service", "kns-3-agent", &v1.Service{}, &v1.Service{}},
		{"NetworkPolicy", "kns-3-agent", &networkingv1.NetworkPolicy{}, &networkingv1.NetworkPolicy{}},
		{"Namespace", AgentNamespace, &v1.Namespace{}, &v1.Namespace{}},
		{"ResourceQuota", "kns-3-node-critical-pods", &v1.ResourceQuota{}, &v1.ResourceQuota{}},
	} {
		renderTyped(t, dir, o.kind, o.name, o.got)
		renderTyped(t, live, o.kind, o.name, o.want)
		if !reflect.DeepEqual(o.got, o.want) {
			t.Errorf("%s %s differs from deploy/live's:\n%+v\nwant\n%+v", o.kind, o.name, o.got, o.want)
		}
	}
}

// simulatorArgs are the simulator container's arguments in spec.
func simulatorArgs(t *testing.T, spec v1.PodSpec) []string {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == installclient.SimulatorContainer {
			return c.Args
		}
	}
	t.Fatalf("no %s container", installclient.SimulatorContainer)
	return nil
}
