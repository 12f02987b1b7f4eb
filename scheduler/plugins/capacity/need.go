// Package capacity is NetworkCapacity's arithmetic: what a pod declares it
// needs (DeclaredMbps, NeedMbps), which pods on a node a measurement does
// not hold yet (Counted), what a link has free and how that ranks (Room,
// RankMilli) and NormalizeScore's proportion (Normalize). The plugin, the
// status CustomScorePlugin publishes and kubectl kns3 explain share it, so
// that what they say of a link is what the plugin ranked it by. It lives
// beside the plugins, imports none, and links nothing of the scheduler.
package capacity

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The annotations with which a pod declares its bandwidth, in bits per
// second, as the CNI bandwidth plugin reads them.
const (
	IngressBandwidthAnnotation = "kubernetes.io/ingress-bandwidth"
	EgressBandwidthAnnotation  = "kubernetes.io/egress-bandwidth"
)

// timeGranularity is how coarse a placement time is: a condition's
// transition time is kept to the second.
const timeGranularity = time.Second

// podStartGrace is how long after its containers became ready a pod's
// traffic may take to start: its clients find it and connect first.
const podStartGrace = 5 * time.Second

// NeedMbps is what pod is counted at on its node's link: its declared
// need (DeclaredMbps), or defaultMbps when it declares none.
func NeedMbps(pod *v1.Pod, defaultMbps int64) float64 {
	if need, ok := DeclaredMbps(pod); ok {
		return need
	}
	return float64(defaultMbps)
}

// DeclaredMbps is the larger of pod's declared ingress and egress
// bandwidth, in Mbit/s; false when it declares neither in a form the CNI
// plugin would take.
func DeclaredMbps(pod *v1.Pod) (float64, bool) {
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

// PlacedAt is when pod was placed on its node: when it was bound (its
// PodScheduled condition turned true), or now for a pod the scheduler
// assumed and has not bound yet.
func PlacedAt(pod *v1.Pod, now time.Time) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return now
}

// StartedAt is when pod's traffic may have started on its node: when its
// containers became ready (its ContainersReady condition turned true, or
// its Ready condition in a status without that one). A pod not ready, bound
// or assumed and not yet bound, is as if placed now: a pod still pulling
// its image, or starting, or whose containers are restarting, is in no
// measurement yet, however long ago it was bound.
func StartedAt(pod *v1.Pod, now time.Time) time.Time {
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

// CountedSince is the time after which a pod that started on a node is
// counted against its link, for numbers averaged over a window from
// windowStart: the window's start less the time a pod's traffic takes to
// start, and less a second, as a transition time is cut to the second (a
// pod started within a second of the bound is counted).
func CountedSince(windowStart time.Time) time.Time {
	return windowStart.Add(-timeGranularity - podStartGrace)
}

// Counted reports whether pod, on a node whose numbers are averaged over
// a window from windowStart, is counted against the link at now: started
// after CountedSince (StartedAt), and not finished (a pod that has
// finished carries no traffic). A pod is counted at its whole need until the window wholly
// holds its traffic, which errs towards spreading.
func Counted(pod *v1.Pod, windowStart, now time.Time) bool {
	return CountedAfter(pod, CountedSince(windowStart), now)
}

// CountedAfter is Counted for a window whose CountedSince is since.
func CountedAfter(pod *v1.Pod, since, now time.Time) bool {
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return false
	}
	return StartedAt(pod, now).After(since)
}
