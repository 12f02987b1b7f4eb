package networkcapacity

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// retrier retries the pods Filter rejected as soon as a new measurement may
// have freed a link. A new measurement is no cluster event: without it such
// a pod would wait for an event EventsToRegister names, or for the
// scheduler's periodic retry of unschedulable pods (5 minutes by default),
// however soon the traffic on the link stopped. It hears each new
// simulation the profile's CustomScorePlugin takes
// (network.OnNewSimulation) and asks the scheduling queue to retry the
// pods it names (retryable), each at most once a window (retryGap): an
// answer comes every second in Background mode, and a retry on each would
// bypass the scheduler's backoff. It keeps no pod: it reads them from the
// scheduler's informer, and what Filter said from their condition; it
// remembers only when it last retried each pod still pending.
type retrier struct {
	ctx       context.Context
	handle    fwk.Handle
	activator fwk.PodActivator
	pods      corelisters.PodLister
	// newest is the newest simulation heard; wake says one was.
	newest atomic.Pointer[network.Simulation]
	wake   chan struct{}
	start  sync.Once
	now    func() time.Time
	// retried is when each pending pod was last retried; run's alone.
	retried map[types.UID]time.Time
}

// How soon a pod is retried again: one window of the answer (its
// measurements change no faster), at least minRetryGap, at most
// maxRetryGap, past which the scheduler's own periodic retry of
// unschedulable pods (5 minutes by default) comes first anyway.
const (
	minRetryGap = 5 * time.Second
	maxRetryGap = 5 * time.Minute
)

func retryGap(window time.Duration) time.Duration {
	return min(max(window, minRetryGap), maxRetryGap)
}

// newRetrier returns the retrier of h's profile, nil when h has no
// informers (a test's handle).
func newRetrier(ctx context.Context, h fwk.Handle) *retrier {
	if h == nil || h.SharedInformerFactory() == nil {
		return nil
	}
	return &retrier{ctx: ctx, handle: h, activator: h, pods: h.SharedInformerFactory().Core().V1().Pods().Lister(),
		wake: make(chan struct{}, 1), now: time.Now}
}

// started starts the retrier, once, when Filter first has a link to judge:
// a profile that only ranks never lists pods for it.
func (r *retrier) started() {
	if r == nil {
		return
	}
	r.start.Do(func() {
		stop := network.OnNewSimulation(r.handle, r.heard)
		go func() {
			defer stop()
			r.run()
		}()
	})
}

// heard keeps sim and wakes run; it never blocks the refresh loop. A
// warming-up simulator's answer is not heard: the filter judges nothing by
// it, so it can let in no pod the filter rejected.
func (r *retrier) heard(sim *network.Simulation) {
	if sim.WarmUp != nil {
		return
	}
	r.newest.Store(sim)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *retrier) run() {
	logger := klog.FromContext(r.ctx).WithValues("plugin", Name)
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.wake:
		}
		r.retryNewest(logger)
	}
}

// retryNewest asks the scheduling queue to retry the pods the newest
// simulation heard may let in, but for those it retried within a window.
func (r *retrier) retryNewest(logger klog.Logger) {
	sim := r.newest.Load()
	if sim == nil {
		return
	}
	pods, err := r.pods.List(labels.Everything())
	if err != nil {
		return
	}
	r.forget(pods)
	retry := retryable(pods, sim.Links())
	now, gap, waiting := r.now(), retryGap(sim.Window()), 0
	for key, p := range retry {
		if last, ok := r.retried[p.UID]; ok && now.Sub(last) < gap {
			delete(retry, key)
			waiting++
		}
	}
	if waiting > 0 {
		logger.V(4).Info("Not retrying pods retried within a window", "pods", waiting, "window", gap)
	}
	if len(retry) == 0 {
		return
	}
	logger.V(2).Info("Retrying the pods the filter rejected: a new measurement may have freed a link", "pods", len(retry))
	r.activator.Activate(logger, retry)
	if r.retried == nil {
		r.retried = map[types.UID]time.Time{}
	}
	for _, p := range retry {
		r.retried[p.UID] = now
	}
}

// forget drops the pods no longer pending (placed, deleted, gone) from
// retried, which so holds at most the pending pods.
func (r *retrier) forget(pods []*v1.Pod) {
	if len(r.retried) == 0 {
		return
	}
	pending := make(sets.Set[types.UID], len(r.retried))
	for _, p := range pods {
		if _, ok := r.retried[p.UID]; ok && p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			pending.Insert(p.UID)
		}
	}
	for uid := range r.retried {
		if !pending.Has(uid) {
			delete(r.retried, uid)
		}
	}
}

// retryable returns the pods worth retrying once links are measured: pods
// not placed whose last attempt Filter failed for lack of bandwidth (their
// PodScheduled condition names ErrReasonLinkFull), and whose declared need
// one of the links could now hold, before the pods placed since the
// measurement are counted (Filter counts them when it runs again). A link
// known only as a lower bound passes Filter, so any pod may fit there. The
// pods are keyed as the scheduler keys the pods it activates:
// namespace/name.
func retryable(pods []*v1.Pod, links map[string]network.Link) map[string]*v1.Pod {
	most, lowerBound := 0.0, false
	for _, l := range links {
		lowerBound = lowerBound || l.BandwidthAtLeast
		most = max(most, l.FreeMbps())
	}
	var retry map[string]*v1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || !rejectedForBandwidth(p) {
			continue
		}
		if need, ok := capacity.DeclaredMbps(p); !ok || (!lowerBound && need > most) {
			continue
		}
		if retry == nil {
			retry = map[string]*v1.Pod{}
		}
		retry[p.Namespace+"/"+p.Name] = p
	}
	return retry
}

// rejectedForBandwidth reports whether pod's last scheduling attempt
// failed, among other reasons or alone, for Filter's.
func rejectedForBandwidth(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable && strings.Contains(c.Message, ErrReasonLinkFull)
		}
	}
	return false
}
