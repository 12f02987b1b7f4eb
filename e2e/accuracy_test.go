//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"

	kns3 "kns3.dev/kns3"
	"kns3.dev/kns3/internal/kindenv"
	"kns3.dev/kns3/internal/netshape"
	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/test/perf/accuracy"
)

var accuracyOut = flag.String("kns3.accuracy-out", "", "run the probe accuracy benchmark (make bench) and write its results here, as JSON")

// The accuracy benchmark's shapes of the plain worker's link, and how many
// windows each is read for.
var accuracyShapes = []netshape.Shape{{}, {RateMbit: 5}, {RateMbit: 20}, {RateMbit: 100}, {Loss: 0.02}, {Loss: 0.05}}

const accuracyWindows = 10

// deployLiveWindow and deployLiveEchoes are deploy/live's --window and
// --echoes-per-node: the benchmark measures the shipped configuration.
const (
	deployLiveWindow = 15 * time.Second
	deployLiveEchoes = 100
)

// TestProbeAccuracy is a benchmark, run by make bench: on deploy/live as
// shipped, it shapes the plain worker's link in each of accuracyShapes and
// records what the simulator serves for it over ten windows that lie
// wholly after the shaping, for docs/probe-accuracy.md.
func TestProbeAccuracy(t *testing.T) {
	if *accuracyOut == "" {
		t.Skip("the probe accuracy benchmark runs with -kns3.accuracy-out (make bench)")
	}
	f := inNamespace(features.New("probe accuracy"), "kns3-e2e-accuracy").
		WithSetup("apply deploy/live", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			if err := kindenv.Apply(ctx, kindCluster.Config, filepath.Join(kindCluster.Inputs.Root, "deploy", "live")); err != nil {
				t.Fatal(err)
			}
			if _, err := kindenv.WaitForScheduler(ctx, kindCluster.Client, 3*time.Minute); err != nil {
				t.Fatal(err)
			}
			return ctx
		}).
		Assess("each shape, ten windows", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			c := clusterFrom(ctx, t)
			c.serveMeasurementsAlone("accuracy")
			report := accuracy.Report{Version: kns3.Version, Date: time.Now().UTC(), WindowSeconds: int(deployLiveWindow / time.Second), EchoesPerNode: deployLiveEchoes}
			t.Cleanup(func() {
				if err := netshape.Clear(context.Background(), c.plain); err != nil {
					t.Error(err)
				}
			})
			for _, shape := range accuracyShapes {
				if err := netshape.Apply(ctx, c.plain, shape); err != nil {
					t.Fatal(err)
				}
				row := accuracy.Row{RateMbit: shape.RateMbit, Loss: shape.Loss}
				last := time.Now()
				for len(row.Windows) < accuracyWindows {
					r := c.awaitLive("a window wholly after "+last.Format(time.TimeOnly), func(r api.SimulationResponse) bool {
						return !r.Timestamp.Add(-deployLiveWindow - probeTimeout).Before(last)
					}, 2*deployLiveWindow+10*time.Second)
					last = r.Timestamp
					n := r.Results[c.plain]
					served := accuracy.Served{Timestamp: r.Timestamp, Score: n.Score}
					if n.Measured != nil {
						served.Measured = *n.Measured
					}
					row.Windows = append(row.Windows, served)
				}
				bw := row.Summarise(func(m api.Measurements) *api.Estimate { return m.BandwidthMbps })
				loss := row.Summarise(func(m api.Measurements) *api.Estimate { return m.PacketLoss })
				t.Logf("%s: bandwidth median %.1f (%.1f to %.1f, %d of %d lower bounds), loss median %.4f (%.4f to %.4f)",
					shape, bw.Median, bw.Min, bw.Max, bw.AtLeast, bw.Windows, loss.Median, loss.Min, loss.Max)
				report.Rows = append(report.Rows, row)
			}
			data, err := json.MarshalIndent(report, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(*accuracyOut, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return ctx
		}).
		WithTeardown("back to deploy/", func(ctx context.Context, t *testing.T, cfg *envconf.Config) context.Context {
			removeLive(ctx, t)
			return ctx
		}).
		Feature()
	testenv.Test(t, f)
}
