package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"kns3.dev/kns3/installclient"
	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	"kns3.dev/kns3/kubectl-kns3/pkg/explain"
	"kns3.dev/kns3/kubectl-kns3/pkg/safetext"
	"kns3.dev/kns3/scheduler/apis/config"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
)

const explainExample = `  # Why is web-0 on its node (or why is it pending)?
  kubectl kns3 explain web-0 -n shop

  # The same as JSON
  kubectl kns3 explain web-0 -n shop -o json`

// shippedProfile stands in for the published status when there is none:
// the profile deploy/ runs, with its default args.
var shippedProfile = schedstatus.ProfileStatus{Profile: config.ProfileName, Normalization: string(config.NormalizationMinMax)}

func newExplainCommand(o *options) *cobra.Command {
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:   "explain POD",
		Short: "Explain, node by node, why the KNS-3 scheduler put POD where it is",
		Long: `Above a table with one row per node, the pod's placement event (the scores of the cycle
that placed it and the KNS-3 plugin that decided) or, for a pending pod, the scheduler's last
FailedScheduling message. Each row: KNS-3's filter verdict on the node's current labels and the
pod's annotation (and upstream's unschedulable, taint and required node affinity checks), the
node's score in the newest simulation the pod's profile holds and its link (as its scheduler
published them), what reaching the pod's peers costs from it (for a pod that declares peers, in a
profile that scores with NetworkPeers: the pods of its namespace its annotation selects are
listed), the normalized score each KNS-3 plugin of the profile makes of them among the
candidates, their sum at the profile's weights, which ranks the candidates, and whether the pod
is there. The status is read after the placement, so these may differ from what the placement
event records; when the node ranked first is not the pod's, the command says why it may not be.`,
		Example: explainExample,
		Args:    cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) error { return out.validate() },
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := o.explain(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if done, err := out.print(e.SetKind(), o); done || err != nil {
				return err
			}
			return explain.Print(o.streams.Out, e, o.now())
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

// Error escapes the names: the profiles' come from the published status.
func (e *NotKNS3Error) Error() string {
	profiles := make([]string, len(e.Profiles))
	for i, p := range e.Profiles {
		profiles[i] = safetext.Line(p)
	}
	return fmt.Sprintf("pod %s is scheduled by %q, which is not a KNS-3 profile (KNS-3 profiles: %s)",
		safetext.Line(e.Pod), e.SchedulerName, strings.Join(profiles, ", "))
}

// listPeers lists the pods of namespace that any of selectors matches,
// each once, page by page.
func listPeers(ctx context.Context, client kubernetes.Interface, namespace string, selectors []string) ([]v1.Pod, error) {
	var out []v1.Pod
	seen := map[types.UID]bool{}
	for _, selector := range selectors {
		p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods(namespace).List(ctx, opts)
		}))
		p.PageSize = installclient.PageSize
		err := p.EachListItem(ctx, metav1.ListOptions{LabelSelector: selector}, func(obj runtime.Object) error {
			if pod, ok := obj.(*v1.Pod); ok && !seen[pod.UID] {
				seen[pod.UID] = true
				out = append(out, *pod)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing the pods of namespace %s that %q selects: %w", namespace, selector, err)
		}
	}
	return out, nil
}

// explain gathers what explain.Build needs, warning of what is partial
// (no published status, a stale one, the simulator down).
func (o *options) explain(ctx context.Context, name string) (*output.Explanation, error) {
	ns, client, err := o.connect()
	if err != nil {
		return nil, err
	}
	pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("pod %q not found in namespace %q", name, ns)
	}
	if err != nil {
		return nil, fmt.Errorf("getting pod %s/%s: %w", ns, name, err)
	}
	in, err := installclient.Find(ctx, client)
	if err != nil {
		return nil, err
	}
	o.warnOther(in)
	profiles := in.Profiles
	if len(profiles) == 0 {
		o.warn("no KNS-3 status published (%s); assuming profile %s with default args, without scores", in.StatusErr, shippedProfile.Profile)
		profiles = []schedstatus.ProfileStatus{shippedProfile}
	}
	var prof *schedstatus.ProfileStatus
	var names []string
	for i := range profiles {
		names = append(names, profiles[i].Profile)
		if profiles[i].Profile == pod.Spec.SchedulerName {
			prof = &profiles[i]
		}
	}
	if prof == nil {
		return nil, &NotKNS3Error{Pod: ns + "/" + name, SchedulerName: pod.Spec.SchedulerName, Profiles: names}
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	input := explain.Input{Pod: pod, Nodes: nodes.Items, Absolute: prof.Normalization == string(config.NormalizationAbsolute),
		Scoring: prof.Scoring, Now: o.now()}
	input.PlacementEvent, input.LastFailedScheduling, err = installclient.PodEvents(ctx, client, pod, o.now())
	if err != nil {
		return nil, err
	}
	if selectors := explain.PeerSelectors(pod, prof.Scoring); len(selectors) > 0 {
		// Without them NetworkPeers' points are not worked out, and the
		// explanation says why: no reason to fail the rest.
		if input.Peers, err = listPeers(ctx, client, ns, selectors); err != nil {
			input.PeersError = err.Error()
		}
	}
	now := o.now()
	sim := prof.Simulator
	switch {
	case prof.Published.IsZero():
		input.SimulatorError = "no status published"
	case sim.Simulation == nil:
		input.SimulatorError = "the scheduler holds no simulation yet"
		if sim.Down() {
			input.SimulatorError += ": " + sim.LastError
		}
	default:
		input.Simulation = sim.Simulation
	}
	if !prof.Published.IsZero() && installclient.Stale(*prof, now) {
		o.warn("the status of profile %s was published %s ago by %s: its scheduler has stopped publishing; scores may be old",
			prof.Profile, now.Sub(prof.Published).Round(1e9), prof.Instance)
	}
	if sim.Down() {
		o.warn("the simulator of profile %s is down (%s); the scores are from the newest simulation the scheduler holds", prof.Profile, sim.LastError)
	}
	return explain.Build(input), nil
}
