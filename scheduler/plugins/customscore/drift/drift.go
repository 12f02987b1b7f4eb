// Package drift follows a profile's running pods against the newest
// simulation, for the published status: a pod has drifted when its node
// has scored below the best node it could run on now by a margin, in every
// fresh simulation, for longer than a window. It only lists such pods:
// KNS-3 never evicts.
package drift

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

const (
	// maxDriftListed bounds the drifted pods one status document lists.
	maxDriftListed = 100
	// A simulation is fresh while it was received within freshReceived
	// windows and, when it says, sampled within freshSampled: the newest
	// window a simulator serves already ended up to a window ago, so
	// numbers received within two windows may be three old.
	freshReceived = 2
	freshSampled  = 3
)

// Tracker lists the profile's drifted pods. A stale simulation, or one
// without a score for the pod's node, counts for nothing and restarts the
// pod's clock, so old numbers never make drift. It is not safe for
// concurrent use: one goroutine (the publisher's) updates it.
//
// Update runs on every publish tick over every pod of the cluster, so it
// reads each pod object once: an informer never changes an object it has
// handed out (an update brings a new one), so what Update needs of a pod
// is kept by the object's address (views) and read again only for a new
// object.
type Tracker struct {
	profile string
	margin  int64
	pods    corelisters.PodLister
	nodes   corelisters.NodeLister
	now     func() time.Time
	// seen is by pod; a pod no longer running is forgotten.
	seen map[types.UID]*podDrift
	// views is by pod object; an object no longer listed is forgotten.
	views map[*v1.Pod]*podView
	// updates counts the calls of Update: entries hold the last that saw
	// them.
	updates uint64
	// nodeIndex numbers the node names pods ran on, so that a pass reads a
	// pod's node's score from a slice filled once per node, not from the
	// simulation's map once per pod. It only grows, as nodes come.
	nodeIndex map[string]int
	// classes numbers the classes of pods seen (placement.Class), so that
	// a pass looks a pod's class up by number, not by a long string. It
	// only grows: pods of a profile come in few classes.
	classes map[string]int
	// passes counts the passes over the nodes the last Update made, one per
	// class of pods the filters treat alike: its cost is nodes × passes.
	passes int
}

// New returns the tracker of profile's pods, listing those whose node
// falls below the best by margin (thousandths of a score).
func New(profile string, margin int64, pods corelisters.PodLister, nodes corelisters.NodeLister) *Tracker {
	return &Tracker{profile: profile, margin: margin, pods: pods, nodes: nodes, now: time.Now,
		seen: map[types.UID]*podDrift{}, views: map[*v1.Pod]*podView{}, nodeIndex: map[string]int{}, classes: map[string]int{}}
}

type podDrift struct {
	// then is the pod's node's score when first seen with fresh numbers.
	then int64
	// since is when its node fell below the best by the margin; zero
	// while it has not.
	since time.Time
	// update is the last Update that saw the pod running.
	update uint64
}

// podView is what Update reads of one pod object.
type podView struct {
	// ours: a running pod of the profile, not being deleted; the rest is
	// set only then.
	ours bool
	pod  *v1.Pod
	node string
	// nodeIndex numbers node in Tracker.nodeIndex.
	nodeIndex int
	class     int
	// drift is the pod's entry in seen, once it has one.
	drift *podDrift
	// update is the last Update that listed the object.
	update uint64
}

func (d *Tracker) view(pod *v1.Pod) *podView {
	v := &podView{pod: pod}
	if pod.Spec.SchedulerName != d.profile || pod.Spec.NodeName == "" || pod.Status.Phase != v1.PodRunning || pod.DeletionTimestamp != nil {
		return v
	}
	v.ours, v.node, v.class, v.drift = true, pod.Spec.NodeName, d.classOf(pod), d.seen[pod.UID]
	i, ok := d.nodeIndex[v.node]
	if !ok {
		i = len(d.nodeIndex)
		d.nodeIndex[v.node] = i
	}
	v.nodeIndex = i
	return v
}

// Update judges the running pods against sim, the newest simulation (nil
// when there is none), and returns those drifted, longest first, at most
// maxDriftListed, and how many more there are.
func (d *Tracker) Update(sim *status.Simulation) ([]status.DriftedPod, int) {
	now := d.now()
	window := status.DefaultWindow
	if sim != nil {
		window = status.Window(sim.WindowSeconds)
	}
	fresh := sim != nil && now.Sub(sim.Received) <= freshReceived*window &&
		(sim.Timestamp.IsZero() || now.Sub(sim.Timestamp) <= freshSampled*window)
	pods, err := d.pods.List(labels.Everything())
	if err != nil {
		return nil, 0
	}
	nodes, err := d.nodes.List(labels.Everything())
	if err != nil {
		return nil, 0
	}
	d.passes = 0
	d.updates++
	var bestFor []*[2]scored // by class
	// scoreOf is the score of each node in nodeIndex, filled as pods need.
	type nodeScore struct {
		milli      int64
		ok, filled bool
	}
	var scoreOf []nodeScore
	var drifted []status.DriftedPod
	for _, pod := range pods {
		v := d.views[pod]
		if v == nil {
			v = d.view(pod)
			d.views[pod] = v
		}
		v.update = d.updates
		if !v.ours {
			continue
		}
		st := v.drift
		if st != nil {
			st.update = d.updates
		}
		own, ok := int64(0), false
		if fresh {
			for len(scoreOf) <= v.nodeIndex {
				scoreOf = append(scoreOf, nodeScore{})
			}
			ns := &scoreOf[v.nodeIndex]
			if !ns.filled {
				ns.milli, ns.ok = sim.MilliScores[v.node]
				ns.filled = true
			}
			own, ok = ns.milli, ns.ok
		}
		if !ok {
			// Nothing fresh to judge by: the clock restarts.
			if st != nil {
				st.since = time.Time{}
			}
			continue
		}
		if st == nil {
			st = &podDrift{then: own, update: d.updates}
			d.seen[pod.UID], v.drift = st, st
		}
		for len(bestFor) <= v.class {
			bestFor = append(bestFor, nil)
		}
		if bestFor[v.class] == nil {
			top := best2(pod, nodes, sim.MilliScores)
			bestFor[v.class] = &top
			d.passes++
		}
		top := bestFor[v.class]
		alt := top[0]
		if alt.node == v.node {
			alt = top[1]
		}
		if alt.node == "" || !below(own, alt.milli, d.margin) {
			st.since = time.Time{}
			continue
		}
		if st.since.IsZero() {
			st.since = now
		}
		if now.Sub(st.since) > window {
			drifted = append(drifted, status.DriftedPod{
				Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName,
				MilliThen: st.then, MilliNow: own, Best: alt.node, MilliBest: alt.milli, Since: st.since,
			})
		}
	}
	// A pod no longer listed running has no object seen in this pass that
	// refreshed its entry: forgetting its objects forgets it.
	for pod, v := range d.views {
		if v.update == d.updates {
			continue
		}
		delete(d.views, pod)
		if v.drift != nil && v.drift.update != d.updates {
			delete(d.seen, pod.UID)
		}
	}
	slices.SortFunc(drifted, func(a, b status.DriftedPod) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	omitted := max(len(drifted)-maxDriftListed, 0)
	return drifted[:len(drifted)-omitted], omitted
}

// classOf numbers pod's placement.Class.
func (d *Tracker) classOf(pod *v1.Pod) int {
	class := placement.Class(pod)
	n, ok := d.classes[class]
	if !ok {
		n = len(d.classes)
		d.classes[class] = n
	}
	return n
}

// below reports whether own is below alt by at least margin (≥ 0),
// exactly: alt − own may not fit an int64, but fits a uint64 when alt is
// the higher.
func below(own, alt, margin int64) bool {
	return alt > own && uint64(alt)-uint64(own) >= uint64(margin)
}

type scored struct {
	node  string
	milli int64
}

// best2 returns the two best-scored nodes pod could run on now.
func best2(pod *v1.Pod, nodes []*v1.Node, scores map[string]int64) [2]scored {
	var top [2]scored
	for _, n := range nodes {
		s, ok := scores[n.Name]
		if !ok || !placement.Judge(pod, n).Candidate() {
			continue
		}
		switch c := (scored{n.Name, s}); {
		case top[0].node == "" || s > top[0].milli:
			top[1], top[0] = top[0], c
		case top[1].node == "" || s > top[1].milli:
			top[1] = c
		}
	}
	return top
}
