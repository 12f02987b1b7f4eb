package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"kns3.dev/kns3/kubectl-kns3/pkg/explain"
	"kns3.dev/kns3/kubectl-kns3/pkg/schedulerpod"
	"kns3.dev/kns3/scheduler/plugins/custombind"
	"kns3.dev/kns3/simulator/api"
)

const explainExample = `  # Why is web-0 on its node (or why is it pending)?
  kubectl kns3 explain web-0 -n shop

  # The same as JSON
  kubectl kns3 explain web-0 -n shop -o json`

func newExplainCommand(o *options) *cobra.Command {
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:   "explain POD",
		Short: "Explain, node by node, why the KNS-3 scheduler put POD where it is",
		Long: `Above a table with one row per node, the pod's placement event (the scores of the cycle
that placed it) or, for a pending pod, the scheduler's last FailedScheduling message. Each row:
KNS-3's filter verdict on the node's current labels and the pod's annotation (and upstream's
unschedulable and taint checks), the simulator's current score for the node, fetched through
the KNS-3 pod, the score NormalizeScore makes of it among the candidates, its rank, and
whether the pod is there. Current scores may differ from those the placement event records.`,
		Example: explainExample,
		Args:    cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) error { return out.validate() },
		RunE: func(cmd *cobra.Command, args []string) error {
			e, warning, err := o.explain(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if warning != "" {
				fmt.Fprintf(o.streams.ErrOut, "Warning: %s\n", warning)
			}
			if done, err := out.print(e.SetKind(), o); done || err != nil {
				return err
			}
			return explain.Print(o.streams.Out, e)
		},
	}
	out.addFlags(cmd)
	return cmd
}

// NotKNS3Error is returned for a pod whose scheduler is not a KNS-3 profile.
type NotKNS3Error struct {
	Pod, SchedulerName string
	Profiles           []string
}

func (e *NotKNS3Error) Error() string {
	return fmt.Sprintf("pod %s is scheduled by %q, which is not a KNS-3 profile (KNS-3 profiles: %s)",
		e.Pod, e.SchedulerName, strings.Join(e.Profiles, ", "))
}

// explain gathers what explain.Build needs. warning is set when the
// answer is partial (simulator down, profiles guessed).
func (o *options) explain(ctx context.Context, name string) (*explain.Explanation, string, error) {
	ns, client, err := o.connect()
	if err != nil {
		return nil, "", err
	}
	pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", fmt.Errorf("pod %q not found in namespace %q", name, ns)
	}
	if err != nil {
		return nil, "", fmt.Errorf("getting pod %s/%s: %w", ns, name, err)
	}
	sched, err := schedulerpod.Find(ctx, client)
	if err != nil {
		return nil, "", err
	}
	var warnings []string
	profiles, err := o.readProfiles(ctx, sched)
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("cannot read the scheduler's profiles (%v); assuming %v with default args", err, names(defaultProfiles)))
		profiles = defaultProfiles
	}
	prof, ok := profiles[pod.Spec.SchedulerName]
	if !ok {
		return nil, "", &NotKNS3Error{Pod: ns + "/" + name, SchedulerName: pod.Spec.SchedulerName, Profiles: names(profiles)}
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("listing nodes: %w", err)
	}
	in := explain.Input{Pod: pod, Nodes: nodes.Items, Absolute: prof.absolute}
	in.PlacementEvent, in.LastFailedScheduling, err = podEvents(ctx, client, pod)
	if err != nil {
		return nil, "", err
	}
	in.Simulation, in.SimulatorError = o.simulate(ctx, sched)
	if in.SimulatorError != "" {
		warnings = append(warnings, in.SimulatorError+"; scores are missing")
	}
	return explain.Build(in), strings.Join(warnings, "\nWarning: "), nil
}

// simulate is the simulator's current answer, or why there is none.
func (o *options) simulate(ctx context.Context, sched *v1.Pod) (*api.SimulationResponse, string) {
	status, sim, err := o.pod.simulate(ctx, sched, o.timeout)
	if err != nil || sim == nil {
		return nil, simulatorDown(sched.Namespace, sched.Name, status, err)
	}
	return sim, ""
}

// podEvents returns the note of the pod's newest placement event and the
// message of its newest FailedScheduling event; for a pending pod without
// one, its PodScheduled condition's message.
func podEvents(ctx context.Context, client kubernetes.Interface, pod *v1.Pod) (placement, failed string, err error) {
	list, err := client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(pod.UID)).String(),
	})
	if err != nil {
		return "", "", fmt.Errorf("listing the events of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	// The field selector already did this; a server that ignores it must
	// not mix in other objects' events.
	events := slices.DeleteFunc(list.Items, func(e v1.Event) bool { return e.InvolvedObject.UID != pod.UID })
	placement = newest(events, custombind.EventReason)
	if pod.Spec.NodeName == "" {
		failed = newest(events, "FailedScheduling")
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
