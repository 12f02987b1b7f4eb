package networkcapacity

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	fwk "k8s.io/kube-scheduler/framework"
)

// The annotations with which a pod declares its bandwidth, in bits per
// second, as the CNI bandwidth plugin reads them.
const (
	IngressBandwidthAnnotation = "kubernetes.io/ingress-bandwidth"
	EgressBandwidthAnnotation  = "kubernetes.io/egress-bandwidth"

	// The keys of SignPod's fragments, named as upstream names its own.
	ingressSignerName = "v1.Pod.Annotations[" + IngressBandwidthAnnotation + "]"
	egressSignerName  = "v1.Pod.Annotations[" + EgressBandwidthAnnotation + "]"
)

// timeGranularity is how coarse a placement time is: a condition's
// transition time is kept to the second.
const timeGranularity = time.Second

// podStartGrace is how long after its containers became ready a pod's
// traffic may take to start: its clients find it and connect first.
const podStartGrace = 5 * time.Second

// needMbps is what pod is counted at on its node's link: its declared
// need (declaredMbps), or defaultMbps when it declares none.
func needMbps(pod *v1.Pod, defaultMbps int64) float64 {
	if need, ok := declaredMbps(pod); ok {
		return need
	}
	return float64(defaultMbps)
}

// declaredMbps is the larger of pod's declared ingress and egress
// bandwidth, in Mbit/s; false when it declares neither in a form the CNI
// plugin would take.
func declaredMbps(pod *v1.Pod) (float64, bool) {
	need, declared := 0.0, false
	for _, key := range []string{IngressBandwidthAnnotation, EgressBandwidthAnnotation} {
		s, ok := pod.Annotations[key]
		if !ok {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() <= 0 {
			continue
		}
		need, declared = max(need, q.AsApproximateFloat64()/1e6), true
	}
	return need, declared
}

// startedAt is when pod's traffic may have started on its node: when its
// containers became ready (its ContainersReady condition turned true, or
// its Ready condition in a status without that one). A pod not ready, bound
// or assumed and not yet bound, is as if placed now: a pod still pulling
// its image, or starting, or whose containers are restarting, is in no
// measurement yet, however long ago it was bound.
func startedAt(pod *v1.Pod, now time.Time) time.Time {
	for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
		for _, c := range pod.Status.Conditions {
			if c.Type != t {
				continue
			}
			if c.Status == v1.ConditionTrue && !c.LastTransitionTime.IsZero() {
				return c.LastTransitionTime.Time
			}
			return now
		}
	}
	return now
}

// countPlacedSince sums the need of the pods on node that the numbers
// averaged over a window from windowStart do not wholly hold, and counts
// them: pods not started before the window began, less the time a pod's
// traffic takes to start (startedAt). A pod is counted at its whole need
// until then, even when the window holds part of its traffic, which errs
// towards spreading; a transition time is cut to the second, so a pod
// started within a second of the bound is counted. Pods that have
// finished carry no traffic.
func countPlacedSince(node fwk.NodeInfo, windowStart, now time.Time, defaultMbps int64) (mbps float64, pods int) {
	since := windowStart.Add(-timeGranularity - podStartGrace)
	for _, pi := range node.GetPods() {
		p := pi.GetPod()
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if startedAt(p, now).After(since) {
			mbps += needMbps(p, defaultMbps)
			pods++
		}
	}
	return mbps, pods
}
