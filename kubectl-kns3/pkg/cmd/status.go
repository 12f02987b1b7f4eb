package cmd

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"kns3.dev/kns3/kubectl-kns3/pkg/schedulerpod"
	"kns3.dev/kns3/kubectl-kns3/pkg/status"
	"kns3.dev/kns3/scheduler/plugins/custombind"
)

func newStatusCommand(o *options) *cobra.Command {
	out := newOutputFlags()
	last := 5
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the KNS-3 scheduler pod, its simulator breaker and fallbacks, the simulator, and the last placements",
		Long: `The KNS-3 pods and their readiness; for each KNS-3 profile, the simulator circuit breaker's
state and the scheduling cycles scored with and without the simulator since the scheduler
started (from its /metrics); the simulator's source, timestamp and window; the newest
placement events in every namespace.`,
		Example: "  kubectl kns3 status\n  kubectl kns3 status -o yaml --last 20",
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error { return out.validate() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := o.status(cmd.Context(), last)
			if err != nil {
				return err
			}
			if done, err := out.print(s.SetKind(), o); done || err != nil {
				return err
			}
			return status.Print(o.streams.Out, s, time.Now())
		},
	}
	cmd.Flags().IntVar(&last, "last", last, "how many placement events to show")
	out.addFlags(cmd)
	return cmd
}

func (o *options) status(ctx context.Context, last int) (*status.Status, error) {
	_, client, err := o.connect()
	if err != nil {
		return nil, err
	}
	pods, err := schedulerpod.Pods(ctx, client)
	if err != nil {
		return nil, err
	}
	s := &status.Status{}
	var ready *v1.Pod
	for i := range pods {
		r := schedulerpod.Ready(&pods[i])
		if r && ready == nil {
			ready = &pods[i]
		}
		s.Pods = append(s.Pods, status.PodOf(&pods[i], r))
	}
	if ready == nil {
		s.MetricsError = "no ready KNS-3 pod"
		s.SimulatorError = s.MetricsError
	} else {
		mctx, cancel := context.WithTimeout(ctx, o.timeout)
		body, err := o.pod.schedulerGet(mctx, ready, "/metrics")
		cancel()
		if err == nil {
			s.Profiles, err = status.ParseMetrics(bytes.NewReader(body))
		}
		if err != nil {
			s.MetricsError = err.Error()
		}
		if sim, down := o.simulate(ctx, ready); sim == nil {
			s.SimulatorError = down
		} else {
			s.Simulator = &status.Simulator{Source: sim.Source, Timestamp: sim.Timestamp, WindowSeconds: sim.WindowSeconds, Nodes: len(sim.Results)}
		}
	}
	events, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", custombind.EventReason).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing placement events: %w", err)
	}
	placements := slices.DeleteFunc(events.Items, func(e v1.Event) bool { return e.Reason != custombind.EventReason })
	s.Placements = status.Placements(placements, last)
	return s, nil
}

// newest is the message of the newest event with reason, "" without one.
func newest(events []v1.Event, reason string) string {
	var msg string
	var at time.Time
	for i := range events {
		if e := &events[i]; e.Reason == reason {
			if t := status.EventTime(e); msg == "" || !t.Before(at) {
				msg, at = e.Message, t
			}
		}
	}
	return msg
}
