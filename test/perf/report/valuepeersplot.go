package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"kns3.dev/kns3/test/perf/value"
)

// plotValuePeers draws each placement's median p99 and throughput for
// every workload and case, as bars side by side; it reports whether the
// PNG was written (not without gnuplot).
func plotValuePeers(reports []value.PeersReport, dir, png string) (bool, error) {
	if _, err := exec.LookPath("gnuplot"); err != nil {
		fmt.Fprintln(os.Stderr, "report: gnuplot not installed, no peers value plot")
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	dat := filepath.Join(dir, valuePeersPage+".dat")
	if err := os.WriteFile(dat, []byte(valuePeersPlotData(reports)), 0o644); err != nil {
		return false, err
	}
	bars := func(first int) string {
		var out []string
		for i, name := range value.PeersPlacements {
			using := fmt.Sprintf("%d", first+i)
			if i == 0 {
				using += ":xtic(1)"
			}
			out = append(out, fmt.Sprintf("'%s' using %s title '%s'", dat, using, name))
		}
		return strings.Join(out, ", \\\n     ")
	}
	n := len(value.PeersPlacements)
	script := fmt.Sprintf(`set terminal pngcairo size 1200,500 font ',10'
set output '%s'
set multiplot layout 1,2
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key below height 1.5
set grid ytics
set logscale y
set title 'Small-call p99 (ms, lower is better; median over trials)'
plot %s
unset logscale y
set yrange [0:*]
set title 'Throughput (Mbit/s, higher is better; median over trials)'
plot %s
unset multiplot
`, png, bars(2), bars(2+n))
	gp := filepath.Join(dir, valuePeersPage+".gp")
	if err := os.WriteFile(gp, []byte(script), 0o644); err != nil {
		return false, err
	}
	if out, err := exec.Command("gnuplot", gp).CombinedOutput(); err != nil {
		return false, fmt.Errorf("gnuplot: %w\n%s", err, out)
	}
	return true, nil
}

// valuePeersPlotData is one row per workload and case: its label, then
// every placement's median p99 (NaN for 0, which a log scale has no place
// for), then every placement's median throughput.
func valuePeersPlotData(reports []value.PeersReport) string {
	var rows strings.Builder
	for _, r := range reports {
		for _, c := range r.Cases {
			fmt.Fprintf(&rows, "%q", fmt.Sprintf("%s, %s", r.Workload, c.Name))
			for _, s := range c.Summary {
				if s.MedianP99Ms > 0 {
					fmt.Fprintf(&rows, " %g", s.MedianP99Ms)
				} else {
					rows.WriteString(" NaN")
				}
			}
			for _, s := range c.Summary {
				fmt.Fprintf(&rows, " %g", s.MedianMbps)
			}
			rows.WriteString("\n")
		}
	}
	return rows.String()
}
