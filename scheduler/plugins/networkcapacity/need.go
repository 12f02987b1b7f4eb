package networkcapacity

import (
	"time"

	fwk "k8s.io/kube-scheduler/framework"

	"kns3.dev/kns3/scheduler/plugins/capacity"
)

// The annotations with which a pod declares its bandwidth, in bits per
// second, as the CNI bandwidth plugin reads them (capacity's).
const (
	IngressBandwidthAnnotation = capacity.IngressBandwidthAnnotation
	EgressBandwidthAnnotation  = capacity.EgressBandwidthAnnotation
	// The keys of SignPod's fragments, named as upstream names its own.
	ingressSignerName = "v1.Pod.Annotations[" + IngressBandwidthAnnotation + "]"
	egressSignerName  = "v1.Pod.Annotations[" + EgressBandwidthAnnotation + "]"
)

// countPlacedSince sums the need of the pods on node that the numbers
// averaged over a window from windowStart do not wholly hold
// (capacity.Counted), and counts them.
func countPlacedSince(node fwk.NodeInfo, windowStart, now time.Time, defaultMbps int64) (mbps float64, pods int) {
	for _, pi := range node.GetPods() {
		if p := pi.GetPod(); capacity.Counted(p, windowStart, now) {
			mbps += capacity.NeedMbps(p, defaultMbps)
			pods++
		}
	}
	return mbps, pods
}
