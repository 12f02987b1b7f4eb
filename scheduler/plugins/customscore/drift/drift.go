// Package drift follows a profile's running pods against the newest
// simulation, for the published status: a pod has drifted when its node
// has scored below the best node it could run on now by a margin, in every
// fresh simulation, for longer than a window. It only lists such pods:
// KNS-3 never evicts.
package drift

import (
	"cmp"
	"crypto/sha256"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

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
	// maxPasses bounds the passes over the nodes one Update makes, one per
	// class of pods: at 5,000 nodes, 64 passes judge 320,000 pairs.
	maxPasses = 64
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
	// classes are the classes of the pods the last Update judged
	// (placement.Class), by the class's hash: a class names the pod's QoS
	// annotation and tolerations, which its owner writes, each up to
	// 256 KiB, and any number of them. A class no pod of the last Update
	// had is dropped, and its number reused (free).
	classes map[classKey]*class
	free    []int
	// classesSeen counts the classes ever seen: a class's seq.
	classesSeen uint64
	// passes counts the passes over the nodes the last Update made, one per
	// class of pods the filters treat alike: its cost is nodes × passes.
	passes int
	// capped says the last Update had more classes than maxPasses.
	capped bool
	logger klog.Logger
}

// classKey is a placement.Class's SHA-256: a collision a pod's owner could
// craft would judge another owner's pods by the wrong class.
type classKey [sha256.Size]byte

// class is one class of pods the filters treat alike.
type class struct {
	// n numbers it, for a pass's bestFor.
	n int
	// seq orders classes by when first seen: the oldest are judged first
	// when there are more than maxPasses.
	seq uint64
	// update is the last Update that had a pod of it; judged says that
	// Update judges its pods.
	update uint64
	judged bool
}

// New returns the tracker of profile's pods, listing those whose node
// falls below the best by margin (thousandths of a score).
func New(profile string, margin int64, pods corelisters.PodLister, nodes corelisters.NodeLister) *Tracker {
	return &Tracker{profile: profile, margin: margin, pods: pods, nodes: nodes, now: time.Now,
		seen: map[types.UID]*podDrift{}, views: map[*v1.Pod]*podView{}, nodeIndex: map[string]int{}, classes: map[classKey]*class{},
		logger: klog.Background().WithValues("profile", profile)}
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
	class     *class
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
// maxDriftListed, and how many more there are. It judges the pods of at
// most maxPasses classes, the longest known first (judgeClasses).
func (d *Tracker) Update(sim *status.Simulation) ([]status.DriftedPod, int) {
	p := d.newPass(sim)
	pods, err := d.pods.List(labels.Everything())
	if err != nil {
		return nil, 0
	}
	if p.nodes, err = d.nodes.List(labels.Everything()); err != nil {
		return nil, 0
	}
	d.passes = 0
	d.updates++
	views := make([]*podView, len(pods))
	for i, pod := range pods {
		views[i] = d.listed(pod)
	}
	d.judgeClasses()
	var drifted []status.DriftedPod
	for i, pod := range pods {
		if dp, ok := p.judge(pod, views[i]); ok {
			drifted = append(drifted, dp)
		}
	}
	d.forget()
	d.dropClasses()
	return list(drifted)
}

// listed is pod's view, read once per object, marked as listed by this
// Update, and its class as had by it.
func (d *Tracker) listed(pod *v1.Pod) *podView {
	v := d.views[pod]
	if v == nil {
		v = d.view(pod)
		d.views[pod] = v
	}
	v.update = d.updates
	if v.ours {
		v.class.update = d.updates
	}
	return v
}

// judgeClasses chooses the classes whose pods this Update judges: all of
// them, or, past maxPasses, the longest known. A pod's owner can make a
// class for each pod (a QoS annotation, tolerations); the passes stay
// bounded, and classes made later do not displace the ones the profile's
// workloads have had.
func (d *Tracker) judgeClasses() {
	var had []*class
	for _, c := range d.classes {
		if c.update == d.updates {
			had = append(had, c)
		}
	}
	capped := len(had) > maxPasses
	if capped {
		slices.SortFunc(had, func(a, b *class) int { return cmp.Compare(a.seq, b.seq) })
	}
	for i, c := range had {
		c.judged = i < maxPasses
	}
	if capped != d.capped {
		if capped {
			d.logger.Info("Too many classes of pods to judge drift for all: the pods of the newest classes are not judged",
				"classes", len(had), "judged", maxPasses)
		} else {
			d.logger.Info("Drift judged for every class of pods again", "classes", len(had))
		}
	}
	d.capped = capped
}

// pass is one Update's judging: the simulation it judges by, whether that
// is fresh, and what it has read of it so far.
type pass struct {
	d      *Tracker
	sim    *status.Simulation
	now    time.Time
	window time.Duration
	fresh  bool
	nodes  []*v1.Node
	// scoreOf is the score of each node in nodeIndex, filled as pods need.
	scoreOf []nodeScore
	// bestFor are the two best nodes by class, found as pods need.
	bestFor []*[2]scored
}

type nodeScore struct {
	milli      int64
	ok, filled bool
}

func (d *Tracker) newPass(sim *status.Simulation) *pass {
	p := &pass{d: d, sim: sim, now: d.now(), window: status.DefaultWindow}
	if sim != nil {
		p.window = status.Window(sim.WindowSeconds)
	}
	p.fresh = sim != nil && p.now.Sub(sim.Received) <= freshReceived*p.window &&
		(sim.Timestamp.IsZero() || p.now.Sub(sim.Timestamp) <= freshSampled*p.window)
	return p
}

// judge follows the drift of pod, whose view is v, and returns it when the
// pod has drifted for longer than a window.
func (p *pass) judge(pod *v1.Pod, v *podView) (status.DriftedPod, bool) {
	d := p.d
	if !v.ours {
		return status.DriftedPod{}, false
	}
	st := v.drift
	if st != nil {
		st.update = d.updates
	}
	own, ok := p.score(v)
	if !ok || !v.class.judged {
		// Nothing fresh to judge by, or no pass for its class: the clock
		// restarts.
		if st != nil {
			st.since = time.Time{}
		}
		return status.DriftedPod{}, false
	}
	if st == nil {
		st = &podDrift{then: own, update: d.updates}
		d.seen[pod.UID], v.drift = st, st
	}
	alt := p.alternative(pod, v)
	if alt.node == "" || !below(own, alt.milli, d.margin) {
		st.since = time.Time{}
		return status.DriftedPod{}, false
	}
	if st.since.IsZero() {
		st.since = p.now
	}
	if p.now.Sub(st.since) <= p.window {
		return status.DriftedPod{}, false
	}
	return status.DriftedPod{
		Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName,
		MilliThen: st.then, MilliNow: own, Best: alt.node, MilliBest: alt.milli, Since: st.since,
	}, true
}

// score is the fresh simulation's score of v's node; false when the
// simulation is not fresh or does not score the node.
func (p *pass) score(v *podView) (int64, bool) {
	if !p.fresh {
		return 0, false
	}
	for len(p.scoreOf) <= v.nodeIndex {
		p.scoreOf = append(p.scoreOf, nodeScore{})
	}
	ns := &p.scoreOf[v.nodeIndex]
	if !ns.filled {
		ns.milli, ns.ok = p.sim.MilliScores[v.node]
		ns.filled = true
	}
	return ns.milli, ns.ok
}

// alternative is the best-scored node pod could run on now other than its
// own, found once per class of pods.
func (p *pass) alternative(pod *v1.Pod, v *podView) scored {
	for len(p.bestFor) <= v.class.n {
		p.bestFor = append(p.bestFor, nil)
	}
	if p.bestFor[v.class.n] == nil {
		top := best2(pod, p.nodes, p.sim.MilliScores)
		p.bestFor[v.class.n] = &top
		p.d.passes++
	}
	top := p.bestFor[v.class.n]
	if top[0].node == v.node {
		return top[1]
	}
	return top[0]
}

// forget drops the pods no longer listed running: no object seen in this
// pass refreshed their entry, so forgetting their objects forgets them.
func (d *Tracker) forget() {
	for pod, v := range d.views {
		if v.update == d.updates {
			continue
		}
		delete(d.views, pod)
		if v.drift != nil && v.drift.update != d.updates {
			delete(d.seen, pod.UID)
		}
	}
}

// list orders the drifted pods longest first and keeps at most
// maxDriftListed, returning how many more there are.
func list(drifted []status.DriftedPod) ([]status.DriftedPod, int) {
	slices.SortFunc(drifted, func(a, b status.DriftedPod) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	omitted := max(len(drifted)-maxDriftListed, 0)
	return drifted[:len(drifted)-omitted], omitted
}

// classOf is pod's class (placement.Class), new when no pod of the last
// Update had it.
func (d *Tracker) classOf(pod *v1.Pod) *class {
	key := classKey(sha256.Sum256([]byte(placement.Class(pod))))
	c, ok := d.classes[key]
	if !ok {
		d.classesSeen++
		c = &class{n: len(d.classes), seq: d.classesSeen}
		if last := len(d.free) - 1; last >= 0 {
			c.n, d.free = d.free[last], d.free[:last]
		}
		d.classes[key] = c
	}
	return c
}

// dropClasses drops the classes no pod of this Update had. Their pods'
// views are forgotten (forget), so no view holds a number dropped.
func (d *Tracker) dropClasses() {
	for key, c := range d.classes {
		if c.update != d.updates {
			delete(d.classes, key)
			d.free = append(d.free, c.n)
		}
	}
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
