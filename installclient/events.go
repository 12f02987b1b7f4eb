package installclient

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"kns3.dev/kns3/scheduler/apis/status"
)

// ReasonFailedScheduling is the reason of the scheduler's event on a pod
// it could not place.
const ReasonFailedScheduling = "FailedScheduling"

// PageSize bounds each list of events: a busy cluster keeps one placement
// event per bound pod for an hour.
const PageSize = 500

// MaxClockSkew is how far ahead of the reader's clock an event's own time
// may be: the scheduler's clock and the reader's differ a little.
const MaxClockSkew = time.Minute

// ReportedBy reports whether profile's scheduler reported e: it writes
// through events.k8s.io, as reportingController (a core Event's
// reportingComponent); an older writer fills source.component. Anyone who
// may create events can claim either, so the message is still untrusted
// text.
func ReportedBy(e *v1.Event, profile string) bool {
	return e.ReportingController == profile || e.Source.Component == profile
}

// Plausible reports whether e, at now, can be a scheduler's event about a
// pod: its involvedObject names a valid namespace and pod (the API server
// checks neither once eventTime is set), and its time is not in the future
// (a forger's date in 2099 would keep it the newest for ever). Events
// that are not are dropped, whoever claims to report them.
func Plausible(e *v1.Event, now time.Time) bool {
	o := e.InvolvedObject
	return len(validation.IsDNS1123Label(o.Namespace)) == 0 && len(validation.IsDNS1123Subdomain(o.Name)) == 0 &&
		!EventTime(e).After(now.Add(MaxClockSkew))
}

// Placements returns the newest n placement events that the profiles
// reported, in every namespace, newest first, leaving out those not
// Plausible at now. The events are listed page by page, so memory stays
// bounded by n and a page whatever their number.
func Placements(ctx context.Context, client kubernetes.Interface, profiles []string, n int, now time.Time) ([]v1.Event, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []v1.Event
	keep := func() {
		slices.SortStableFunc(out, func(a, b v1.Event) int { return EventTime(&b).Compare(EventTime(&a)) })
		if len(out) > n {
			out = slices.Clip(out[:n])
		}
	}
	for _, profile := range profiles {
		p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Events(metav1.NamespaceAll).List(ctx, opts)
		}))
		p.PageSize = PageSize
		selector := fields.AndSelectors(
			fields.OneTermEqualSelector("reason", status.PlacementEventReason),
			fields.OneTermEqualSelector("reportingComponent", profile),
		).String()
		err := p.EachListItem(ctx, metav1.ListOptions{FieldSelector: selector}, func(obj runtime.Object) error {
			// The API server applied the selector; a server that ignores
			// it must not mix in other events.
			if e, ok := obj.(*v1.Event); ok && e.Reason == status.PlacementEventReason && ReportedBy(e, profile) && Plausible(e, now) {
				out = append(out, *e)
				if len(out) >= 2*n {
					keep()
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing the placement events of profile %s: %w", profile, err)
		}
	}
	keep()
	return out, nil
}

// PodEvents returns, of the events that pod's profile reported about it
// and that are Plausible at now, the message of the newest placement event
// and, for a pod not bound yet, of the newest FailedScheduling event (or
// its PodScheduled condition's message when there is none).
func PodEvents(ctx context.Context, client kubernetes.Interface, pod *v1.Pod, now time.Time) (placement, failed string, err error) {
	list, err := client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(pod.UID)).String(),
	})
	if err != nil {
		return "", "", fmt.Errorf("listing the events of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	events := slices.DeleteFunc(list.Items, func(e v1.Event) bool {
		return e.InvolvedObject.UID != pod.UID || !ReportedBy(&e, pod.Spec.SchedulerName) || !Plausible(&e, now)
	})
	placement = newest(events, status.PlacementEventReason)
	if pod.Spec.NodeName == "" {
		failed = newest(events, ReasonFailedScheduling)
		if failed == "" {
			for _, c := range pod.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
					failed = c.Message
				}
			}
		}
	}
	return placement, failed, nil
}

// newest is the message of the newest event with reason, "" without one.
func newest(events []v1.Event, reason string) string {
	var msg string
	var at time.Time
	for i := range events {
		if e := &events[i]; e.Reason == reason {
			if t := EventTime(e); msg == "" || !t.Before(at) {
				msg, at = e.Message, t
			}
		}
	}
	return msg
}

// EventTime is when an event last happened, whichever API wrote it: an
// events.k8s.io writer (the scheduler) sets eventTime and series, a core
// one lastTimestamp.
func EventTime(e *v1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.EventTime.Time, e.LastTimestamp.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}
