package networkpeers

import (
	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/peers"
)

// findPeers finds, among the pods on nodes, the peers d declares for pod
// (peers.Tally): the scheduler's snapshot holds the pods it assumed and
// has not bound yet, so the pods of one burst see each other. It returns
// the nodes that host them, most peers first; nil when none does.
func findPeers(nodes []fwk.NodeInfo, pod *v1.Pod, d *peers.Declaration) []peers.Host {
	if d == nil || len(d.Groups) == 0 {
		return nil
	}
	tally := peers.NewTally(pod, d)
	for _, n := range nodes {
		node := n.Node()
		if node == nil {
			continue
		}
		for _, pi := range n.GetPods() {
			tally.Add(node.Name, pi.GetPod())
		}
	}
	return tally.Hosts()
}
