//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"sigs.k8s.io/e2e-framework/klient/wait"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/conditions"
	output "kns3.dev/kns3/kubectl-kns3/pkg/apis/output/v1alpha1"
	kns3cmd "kns3.dev/kns3/kubectl-kns3/pkg/cmd"
	schedstatus "kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/test/pods"
)

// placementEvent waits for the pod's placement event and returns its note.
func (c *cluster) placementEvent(name string) string {
	c.t.Helper()
	ctx := context.Background()
	if err := wait.For(conditions.PlacementRecorded(c.client, c.ns, name), wait.WithContext(ctx),
		wait.WithInterval(200*time.Millisecond), wait.WithTimeout(30*time.Second), wait.WithImmediate()); err != nil {
		c.t.Fatalf("pod %s/%s has no placement event: %v", c.ns, name, err)
	}
	events, err := conditions.PlacementEvents(ctx, c.client, c.ns, name)
	if err != nil {
		c.t.Fatal(err)
	}
	if len(events) != 1 {
		c.t.Errorf("pod %s/%s has %d placement events, want one", c.ns, name, len(events))
	}
	return events[len(events)-1].Message
}

// kubectlKNS3 runs `kubectl kns3 args...` in this process against the kind
// cluster's kubeconfig, and returns its standard output.
func kubectlKNS3(cfg *envconf.Config, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := kns3cmd.NewCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append(args, "--kubeconfig", cfg.KubeconfigFile()))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		return out.String(), err
	}
	if errOut.Len() > 0 {
		return out.String(), fmt.Errorf("stderr: %s", errOut.String())
	}
	return out.String(), nil
}

// explainJSON is `kubectl kns3 explain POD -n NS -o json`, decoded.
func (c *cluster) explainJSON(cfg *envconf.Config, name string) *output.Explanation {
	c.t.Helper()
	out, err := kubectlKNS3(cfg, "explain", name, "-n", c.ns, "-o", "json")
	if err != nil {
		c.t.Fatalf("kubectl kns3 explain %s: %v\n%s", name, err, out)
	}
	var e output.Explanation
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		c.t.Fatalf("kubectl kns3 explain %s -o json: %v\n%s", name, err, out)
	}
	return &e
}

// normalizedBy is plugin's normalized score in r, -1 without one.
func normalizedBy(r output.Row, plugin string) int64 {
	for _, s := range r.Scores {
		if s.Plugin == plugin {
			return s.Normalized
		}
	}
	return -1
}

func rowOf(e *output.Explanation, node string) output.Row {
	for _, r := range e.Nodes {
		if r.Node == node {
			return r
		}
	}
	return output.Row{}
}

func TestPlacementExplained(t *testing.T) {
	f := inNamespace(features.New("placement events and kubectl kns3"), "kns3-e2e-explain").
		Assess("a network-aware placement has an event naming the score, the rank and the best alternative",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				c.setScenario("explain-plain-first", scores(c.disabled, 1.0, c.rigorous, 0.3, c.plain, 0.8), false)
				c.createPod(st.MakePod().Name("placed"))
				if node := c.scheduled("placed"); node != c.plain {
					t.Fatalf("placed landed on %s, want %s, ranked first among the feasible nodes", node, c.plain)
				}
				// The control plane is tainted and the disabled node filtered:
				// two feasible nodes.
				// The shipped profile scores with CustomScorePlugin alone, at
				// weight 10: MinMax gives the best of two nodes 100, the other 0.
				want := fmt.Sprintf("Network-aware: %s has simulator score 0.800, rank 1 of 2 feasible nodes; best alternative %s (0.300); "+
					"decided by CustomScorePlugin: 1000 points ahead of runner-up %s; points here and on %s (weight × normalized score): CustomScorePlugin 1000 and 0",
					c.plain, c.rigorous, c.rigorous, c.rigorous)
				if got := c.placementEvent("placed"); got != want {
					t.Errorf("placement event %q, want %q", got, want)
				}
				return ctx
			}).
		Assess("explain: a rigorous pod, with the filter's verdict on every node",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				c.setScenario("explain-rigorous", scores(c.disabled, 1.0, c.rigorous, 0.3, c.plain, 0.8), false)
				c.createPod(pods.Rigorous(st.MakePod().Name("rigorous")))
				if node := c.scheduled("rigorous"); node != c.rigorous {
					t.Fatalf("rigorous landed on %s, want %s", node, c.rigorous)
				}
				event := c.placementEvent("rigorous")
				// kubectl kns3 reads the scores as the scheduler published them.
				c.awaitHeld("explain-rigorous")
				e := c.explainJSON(cfg, "rigorous")
				if e.Node != c.rigorous || e.PlacementEvent != event || e.Simulation == nil || e.Simulation.Source != "explain-rigorous" {
					t.Errorf("explanation: node %q, event %q (recorded %q), simulation %+v", e.Node, e.PlacementEvent, event, e.Simulation)
				}
				if r := rowOf(e, c.rigorous); r.Filter != output.Pass || !r.Chosen || r.SimulatorScore == nil || *r.SimulatorScore != 0.3 ||
					normalizedBy(r, schedstatus.CustomScorePlugin) != 100 || r.Points == nil || *r.Points != 1000 || r.Rank != 1 {
					t.Errorf("rigorous node row %+v: want pass, chosen, score 0.3, normalized 100 (the only candidate), 1000 points at weight 10, rank 1", r)
				}
				if r := rowOf(e, c.plain); r.Filter != output.Reject || r.FilterReason != placement.ErrReasonNotRigorous || r.Scores != nil || r.Points != nil {
					t.Errorf("plain node row %+v: want rejected with %q, not scored", r, placement.ErrReasonNotRigorous)
				}
				if e.ScoringAssumed || len(e.Scoring) != 1 || e.Scoring[0] != (output.ScoringPlugin{Name: schedstatus.CustomScorePlugin, Weight: 10}) {
					t.Errorf("scoring %+v (assumed %t): want CustomScorePlugin at weight 10, as the scheduler published it", e.Scoring, e.ScoringAssumed)
				}
				if r := rowOf(e, c.disabled); r.Filter != output.Reject || r.FilterReason != placement.ErrReasonDisabled {
					t.Errorf("disabled node row %+v: want rejected with %q", r, placement.ErrReasonDisabled)
				}
				if len(e.Nodes) != 4 {
					t.Errorf("%d rows, want one per node (4)", len(e.Nodes))
				}
				return ctx
			}).
		Assess("explain: a pending pod shows the scheduler's last FailedScheduling message",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				c.createPod(st.MakePod().Name("pending").NodeSelector(map[string]string{"kns3-e2e/nowhere": "true"}))
				msg := c.unschedulable("pending")
				e := c.explainJSON(cfg, "pending")
				if e.Node != "" || e.LastFailedScheduling != msg || e.PlacementEvent != "" {
					t.Errorf("explanation: node %q, last FailedScheduling %q (want %q), placement %q", e.Node, e.LastFailedScheduling, msg, e.PlacementEvent)
				}
				out, err := kubectlKNS3(cfg, "explain", "pending", "-n", c.ns)
				if err != nil || !strings.Contains(out, "is pending.") || !strings.Contains(out, "Last FailedScheduling: "+msg) {
					t.Errorf("kubectl kns3 explain pending: %v\n%s", err, out)
				}
				t.Logf("kubectl kns3 explain pending:\n%s", out)
				return ctx
			}).
		Assess("explain: a pod of another scheduler is refused by name",
			func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
				c := clusterFrom(ctx, t)
				c.createPodFor(st.MakePod().Name("other"), "default-scheduler", "")
				c.scheduled("other")
				_, err := kubectlKNS3(cfg, "explain", "other", "-n", c.ns)
				var notKNS3 *kns3cmd.NotKNS3Error
				if !errors.As(err, &notKNS3) || notKNS3.SchedulerName != "default-scheduler" {
					t.Errorf("kubectl kns3 explain other: %v, want a NotKNS3Error for default-scheduler", err)
				}
				if _, err := kubectlKNS3(cfg, "explain", "no-such-pod", "-n", c.ns); err == nil || !strings.Contains(err.Error(), `pod "no-such-pod" not found`) {
					t.Errorf("kubectl kns3 explain no-such-pod: %v", err)
				}
				// A ready pod wearing KNS-3's label, made by a user, not by the
				// install: the tool must neither list it nor ask it anything.
				c.createPodFor(st.MakePod().Name("impostor").Label(installclient.AppLabel, installclient.AppName), "default-scheduler", "")
				c.scheduled("impostor")
				out, err := kubectlKNS3(cfg, "status")
				if err != nil || !strings.Contains(out, "kns-3-scheduler") || !strings.Contains(out, "LAST PLACEMENTS") {
					t.Errorf("kubectl kns3 status: %v\n%s", err, out)
				}
				if strings.Contains(out, "impostor") {
					t.Errorf("kubectl kns3 status lists the impostor pod:\n%s", out)
				}
				t.Logf("kubectl kns3 status:\n%s", out)
				return ctx
			}).
		Feature()
	testenv.Test(t, f)
}
