//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins/networkpeers"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/test/perf"
	"kns3.dev/kns3/test/perf/value"
)

// valuePairShape is what the path between the two workers the server may
// take is shaped to, each way; every other path is left as it is.
var valuePairShape = netshape.PairShape{RateMbit: 20, Loss: 0.05}

// The CPU requests, in millicores: each client's, and the server's in the
// room case. In the full case the server asks for nearly all its node's
// free CPU (fullServerCPU).
const (
	peersClientCPU = 100
	peersServerCPU = 100
)

// noPeersProfile is the live install's profile without NetworkPeers,
// run beside it.
const noPeersProfile = "kns-3-nopeers"

// peersTier labels the benchmark's server and clients; the clients'
// peers selector and pod affinity select the server by it.
const (
	peersTier       = "tier"
	peersTierServer = "server"
)

// runNoPeersProfile adds the live install's profile without NetworkPeers,
// as noPeersProfile, beside it in the scheduler's configuration, and
// waits for the scheduler to run it.
func (r *peersRun) runNoPeersProfile(ctx context.Context) {
	r.t.Helper()
	live, err := os.ReadFile(filepath.Join(kindCluster.Inputs.Root, "deploy", "live", "scheduler-config.yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	both, err := withNoPeersProfile(live)
	if err != nil {
		r.t.Fatalf("deploy/live/scheduler-config.yaml: %v", err)
	}
	r.runSchedulerConfig(ctx, "kns-3-scheduler-config-value-peers", string(both))
}

// withNoPeersProfile is configuration with its kns-3-scheduler profile
// run a second time, as noPeersProfile, without NetworkPeers, as the
// performance benchmark derives it (perf.WithoutPlugin).
func withNoPeersProfile(configuration []byte) ([]byte, error) {
	without, err := perf.WithoutPlugin(configuration, networkpeers.Name)
	if err != nil {
		return nil, err
	}
	var cfg, withoutCfg map[string]any
	if err := yaml.Unmarshal(configuration, &cfg); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(without, &withoutCfg); err != nil {
		return nil, err
	}
	profiles, _ := withoutCfg["profiles"].([]any)
	for _, p := range profiles {
		if p, ok := p.(map[string]any); ok && p["schedulerName"] == config.ProfileName {
			p["schedulerName"] = noPeersProfile
			all, _ := cfg["profiles"].([]any)
			cfg["profiles"] = append(all, p)
			return yaml.Marshal(cfg)
		}
	}
	return nil, fmt.Errorf("no %s profile", config.ProfileName)
}

// shapePair shapes the path between the two workers the server may take,
// both ways alike: each caps what it sends to the other and drops a share
// of what arrives from it, so that the path is as bad whichever of the
// two the server takes.
func (r *peersRun) shapePair(ctx context.Context) {
	r.t.Helper()
	for _, ends := range [][2]string{{r.plain, r.rigorous}, {r.rigorous, r.plain}} {
		node, peer := ends[0], ends[1]
		shape := valuePairShape
		shape.Peer, shape.PeerPods = r.nodeAddrs(ctx, peer)
		r.t.Cleanup(func() {
			if err := netshape.Clear(context.Background(), node); err != nil {
				r.t.Error(err)
			}
		})
		if err := netshape.ApplyPairs(ctx, node, []netshape.PairShape{shape}); err != nil {
			r.t.Fatal(err)
		}
	}
}

// awaitPairsApart waits, within limit, until the simulator serves, in a
// window and a pair window wholly after the last placement's traffic, the
// shaped pair lossy and each worker's pair with the control plane without
// loss, past its warm-up: every placement is made on the same picture of
// the network. It returns that answer.
func (r *peersRun) awaitPairsApart(limit time.Duration) api.SimulationResponse {
	r.t.Helper()
	since := r.since
	resp := r.awaitLive("the shaped pair lossy and the control plane's pairs clean, measured after the last placement", func(resp api.SimulationResponse) bool {
		if resp.WarmUp != nil || !windowAfter(resp, since) || !pairWindowAfter(resp, since) {
			return false
		}
		if bad := pairOf(resp, r.rigorous, r.plain); bad == nil || bad.PacketLoss == nil || bad.PacketLoss.Value < 0.02 {
			return false
		}
		for _, w := range []string{r.rigorous, r.plain} {
			if good := pairOf(resp, r.controlPlaneNode, w); good == nil || good.PacketLoss == nil || good.PacketLoss.Value >= 0.01 {
				return false
			}
		}
		return true
	}, limit)
	r.t.Logf("pairs apart %s after the last placement's traffic", time.Since(since).Round(time.Second))
	return resp
}

// usableNodes holds a pod to the nodes KNS-3 may use, whichever scheduler
// places it: the default scheduler would also use the worker an operator
// took out of KNS-3 (scheduler=disabled), and every placement is to
// choose among the same nodes.
func usableNodes() *v1.NodeAffinity {
	return &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
			Key: placement.LabelScheduler, Operator: v1.NodeSelectorOpNotIn, Values: []string{placement.ValueDisabled}}}}}}}
}

// placeServer has scheduler place workload's server, asking cpu
// millicores, labelled with its placement's label, and returns it once it
// runs. As a server runs, it does not tolerate the control plane's taint:
// the two shaped workers are the nodes it may take.
func (r *peersRun) placeServer(ctx context.Context, workload, scheduler, label string, cpu int64) *v1.Pod {
	r.t.Helper()
	pod := netbenchPod("netbench-server", scheduler, []string{"server", fmt.Sprintf("--listen=:%d", netbenchPort)})
	if workload == value.WorkloadRedis {
		pod = redisPod()
		pod.Spec.SchedulerName = scheduler
	}
	pod.Labels[peersTier], pod.Labels["placement"] = peersTierServer, label
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: usableNodes()}
	pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI)}
	return r.startServer(ctx, pod)
}

// peersClient makes pod a client of the placement's server: labelled with
// the placement's label, asking peersClientCPU, free to go to any node
// KNS-3 may use, the control plane's taint tolerated (as the peers check's
// clients); with pl.affinity preferring the server's node by upstream's
// pod affinity, with pl.peers declaring the server as its peer, its
// traffic what it asks for.
func peersClient(pod *v1.Pod, pl peersPlacement, label string) {
	pod.Labels[peersTier], pod.Labels["placement"] = "client", label
	pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(peersClientCPU, resource.DecimalSI)}
	pod.Spec.Tolerations = []v1.Toleration{controlPlaneToleration}
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: usableNodes()}
	if pl.affinity {
		pod.Spec.Affinity.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: v1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{peersTier: peersTierServer}},
				TopologyKey:   v1.LabelHostname,
			},
		}}}
	}
	if pl.peers {
		pod.Annotations[networkpeers.PeersAnnotation] = peersTier + "=" + peersTierServer
		pod.Annotations[networkpeers.PeerTrafficAnnotation] = fmt.Sprintf("%gM", clientMbps)
	}
}

// freeCPU is node's allocatable CPU less what the pods on it request, in
// millicores, as the scheduler counts it.
func (r *peersRun) freeCPU(ctx context.Context, node string) int64 {
	r.t.Helper()
	n, err := r.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	pods, err := r.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		r.t.Fatal(err)
	}
	free := n.Status.Allocatable.Cpu().MilliValue()
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		free -= requests.Cpu().MilliValue()
	}
	return free
}

// fullServerCPU is the full case's server's CPU request: whichever worker
// it takes is left with half a client's CPU, no room for one. The two
// workers run the same DaemonSets and, CoreDNS moved off, nothing else, so
// their free CPU is alike; the room left is measured after the server
// runs, and checked (checkPeersPlacement).
func (r *peersRun) fullServerCPU(ctx context.Context) int64 {
	r.t.Helper()
	free := min(r.freeCPU(ctx, r.rigorous), r.freeCPU(ctx, r.plain))
	cpu := free - peersClientCPU/2
	if cpu < peersServerCPU {
		r.t.Fatalf("the workers have %d m CPU free, too little for a server that fills either", free)
	}
	return cpu
}

// checkControlPlaneRoom checks that the control plane can take every
// client: in the full case a placement that keeps the clients off the
// slow path needs a node with room for them beside the server's.
func (r *peersRun) checkControlPlaneRoom(ctx context.Context) {
	r.t.Helper()
	for _, node := range []string{r.controlPlaneNode, r.rigorous, r.plain} {
		r.t.Logf("%s: %d m CPU free for the benchmark's pods", node, r.freeCPU(ctx, node))
	}
	if free := r.freeCPU(ctx, r.controlPlaneNode); free < peersValueClients*peersClientCPU {
		r.t.Fatalf("the control plane has %d m CPU free, want %d for %d clients: in the full case no placement could keep them off the slow path",
			free, peersValueClients*peersClientCPU, peersValueClients)
	}
}
