package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/score"
	"kns3.dev/kns3/simulator/api"
)

// liveShape is what the demo shapes the rigorous worker's link to: the
// node the sample scenario ranks first among those the sample may use.
var liveShape = netshape.Shape{RateMbit: 20, Loss: 0.05}

// livePods is how many pods the live part schedules.
const livePods = 3

// showLive is the demo's second part, on deploy/live: the scenario's pins
// give way to the simulator's measurements, one worker's link is shaped
// for real, and new pods avoid it; explain names the measured numbers.
func showLive(ctx context.Context, cl *kindenv.Cluster, w io.Writer) error {
	shaped := cl.Name + "-worker2"
	fmt.Fprintf(w, "\nLive network picture (deploy/live): a probe agent on every node, the simulator measuring each one.\n")
	fmt.Fprintf(w, "Shaping %s's link to %s (tc tbf, nftables drops), and serving the measurements alone (scenario without pins).\n", shaped, liveShape)
	if err := kindenv.SetScenario(ctx, cl.Client, "source: demo-live\nnodes: {}\n"); err != nil {
		return err
	}
	if err := netshape.Apply(ctx, shaped, liveShape); err != nil {
		return err
	}
	at := time.Now()
	sim, err := windowAfter(ctx, cl, at)
	if err != nil {
		return err
	}
	// The scheduler publishes the numbers it scores by; the simulator
	// serves, beside them, how sure each is.
	_, answer, err := kindenv.Simulate(ctx, cl.Config, cl.Client, 10*time.Second)
	if err != nil || answer == nil {
		return fmt.Errorf("reading the simulator's measurements: %v", err)
	}
	printMeasured(w, sim, answer)
	names := make([]string, livePods)
	for i := range names {
		names[i] = fmt.Sprintf("live-%d", i)
		if err := createLivePod(ctx, cl, names[i]); err != nil {
			return err
		}
	}
	for _, n := range names {
		if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, conditions.PodScheduled(cl.Client, kindenv.SampleNamespace, n)); err != nil {
			return fmt.Errorf("pod %s was not bound: %w", n, err)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NEW POD\tNODE")
	for _, n := range names {
		p, err := cl.Client.CoreV1().Pods(kindenv.SampleNamespace).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\n", n, p.Spec.NodeName)
	}
	tw.Flush()
	fmt.Fprintf(w, "(%s's link stays shaped; the cluster is the demo's own.)\n", shaped)
	return explainPod(ctx, cl, names[0], w)
}

// windowAfter waits until the scheduler has published a simulation whose
// window lies wholly after at, so its numbers describe the shaped link.
func windowAfter(ctx context.Context, cl *kindenv.Cluster, at time.Time) (*status.Simulation, error) {
	var sim *status.Simulation
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		in, err := installclient.Find(ctx, cl.Client)
		if err != nil {
			return false, nil
		}
		doc, ok := in.Profile(config.ProfileName)
		if !ok || doc.Simulator.Simulation == nil {
			return false, nil
		}
		s := doc.Simulator.Simulation
		// The probes' 1 s timeout widens what a window's numbers cover.
		start := s.Timestamp.Add(-time.Duration(s.WindowSeconds)*time.Second - time.Second)
		if s.Source == "live+demo-live" && !start.Before(at) {
			sim = s
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no measurements of a window after the shaping: %w", err)
	}
	return sim, nil
}

// printMeasured prints what the scheduler holds: each node's metrics and
// score, with the intervals, samples and ages the simulator serves beside
// them in its latest answer.
func printMeasured(w io.Writer, s *status.Simulation, answer *api.SimulationResponse) {
	fmt.Fprintf(w, "\nMeasured over the %ds window to %s (95 %% intervals; bandwidth from probe trains, \"≥\" where a train\narrived as fast as it was sent, so the link is at least that fast):\n\n", s.WindowSeconds, s.Timestamp.UTC().Format(time.TimeOnly))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tLATENCY\tBANDWIDTH\tLOSS\tSCORE")
	nodes := make([]string, 0, len(s.MilliScores))
	for n := range s.MilliScores {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		var m api.Measurements
		if r, ok := answer.Results[n]; ok && r.Measured != nil {
			m = *r.Measured
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\n", n, estimate(m.LatencyMs, "%.2f", " ms", 1), estimate(m.BandwidthMbps, "%.0f", " Mbit/s", 1),
			estimate(m.PacketLoss, "%.1f", "%", 100), score.Float(s.MilliScores[n]))
	}
	tw.Flush()
}

// estimate prints a measured metric as its value and interval, scaled, or
// "≥ value" for a lower bound, with the number of samples.
func estimate(e *api.Estimate, format, unit string, scale float64) string {
	switch {
	case e == nil:
		return "unknown"
	case e.AtLeast:
		return fmt.Sprintf("≥ "+format+"%s (%d trains)", e.Value*scale, unit, e.Samples)
	case e.High == nil:
		return fmt.Sprintf(format+"%s", e.Value*scale, unit)
	}
	return fmt.Sprintf(format+" ["+format+"–"+format+"]%s", e.Value*scale, e.Low*scale, *e.High*scale, unit)
}

// createLivePod creates an ordinary pod of the sample's kind.
func createLivePod(ctx context.Context, cl *kindenv.Cluster, name string) error {
	nonRoot := true
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kindenv.SampleNamespace, Labels: map[string]string{"app": "live"}},
		Spec: v1.PodSpec{
			SchedulerName:   config.ProfileName,
			SecurityContext: &v1.PodSecurityContext{RunAsNonRoot: &nonRoot},
			Containers: []v1.Container{{
				Name: "app", Image: "kns-3-simulator:" + kns3.Version, ImagePullPolicy: v1.PullNever,
				Args: []string{"--listen=127.0.0.1:8080"},
			}},
		},
	}
	_, err := cl.Client.CoreV1().Pods(kindenv.SampleNamespace).Create(ctx, pod, metav1.CreateOptions{})
	return err
}
