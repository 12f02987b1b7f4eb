package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// samples collects repeated measurements of one quantity.
type samples map[string][]float64

func (s samples) add(key string, v float64) { s[key] = append(s[key], v) }

// median of the samples under key, and how many there are.
func (s samples) median(key string) (float64, int) {
	v := append([]float64(nil), s[key]...)
	if len(v) == 0 {
		return 0, 0
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], len(v)
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, len(v)
}

// goBenchLine matches `BenchmarkX/sub-2   100   123 ns/op   4.5 MB/s   67 B/op   8 allocs/op`.
var goBenchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseGoBench reads `go test -bench -benchmem` output: unit → samples.
func parseGoBench(path string) (map[string]samples, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]samples{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := goBenchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		fields := strings.Fields(m[2])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			unit := fields[i+1]
			if out[unit] == nil {
				out[unit] = samples{}
			}
			out[unit].add(m[1], v)
		}
	}
	return out, sc.Err()
}

type dataItems struct {
	DataItems []struct {
		Data   map[string]float64 `json:"data"`
		Unit   string             `json:"unit"`
		Labels map[string]string  `json:"labels"`
	} `json:"dataItems"`
}

// perfData is scheduler_perf's measurements by quantity, each by run:
// key "<metric>|<case>/<workload>|<bucket>" → run → value. A run is a
// directory under make bench's perf directory ("run-3"), in which every
// workload ran once, back to back; two workloads' values of one run are
// a pair.
type perfData map[string]map[string]float64

func (p perfData) add(key, run string, v float64) {
	if p[key] == nil {
		p[key] = map[string]float64{}
	}
	p[key][run] = v
}

// values are key's values, in the order of their runs' names.
func (p perfData) values(key string) []float64 {
	runs := make([]string, 0, len(p[key]))
	for run := range p[key] {
		runs = append(runs, run)
	}
	sort.Slice(runs, func(i, j int) bool { return naturalLess(runs[i], runs[j]) })
	out := make([]float64, len(runs))
	for i, run := range runs {
		out[i] = p[key][run]
	}
	return out
}

// median of key's values, and how many there are.
func (p perfData) median(key string) (float64, int) {
	return samples{"": p.values(key)}.median("")
}

// pairs are a's and b's values of the runs that measured both, a first,
// in the order of the runs' names.
func (p perfData) pairs(a, b string) [][2]float64 {
	var runs []string
	for run := range p[a] {
		if _, ok := p[b][run]; ok {
			runs = append(runs, run)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return naturalLess(runs[i], runs[j]) })
	out := make([][2]float64, len(runs))
	for i, run := range runs {
		out[i] = [2]float64{p[a][run], p[b][run]}
	}
	return out
}

// parsePerf reads every scheduler_perf DataItems file of each run under
// dir: <dir>/<run>/*.json, and <dir>/<run>/<workload>/*.json where each
// workload of a run wrote its own directory. A metric's key holds its
// extension point and plugin, when it has them
// ("scheduler_framework_extension_point_duration_seconds:PreScore",
// "PreScore:CustomScorePlugin").
func parsePerf(dir string) (perfData, error) {
	var files []string
	for _, pattern := range []string{"*/*.json", "*/*/*.json"} {
		found, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	out := perfData{}
	for _, file := range files {
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return nil, err
		}
		run := strings.Split(filepath.ToSlash(rel), "/")[0]
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var items dataItems
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, it := range items.DataItems {
			metric := it.Labels["Metric"]
			for _, label := range []string{"extension_point", "plugin"} {
				if v := it.Labels[label]; v != "" && v != "not applicable" {
					metric += ":" + v
				}
			}
			workload := workloadName(it.Labels["Name"])
			for bucket, v := range it.Data {
				out.add(metric+"|"+workload+"|"+bucket, run, v)
			}
		}
	}
	return out, nil
}

// workloadName turns "BenchmarkPerfScheduling/ProfileOverhead_KNS3/5000Nodes/namespace-2"
// into "ProfileOverhead_KNS3/5000Nodes".
func workloadName(name string) string {
	parts := strings.Split(name, "/")
	if len(parts) > 0 && strings.HasPrefix(parts[0], "Benchmark") {
		parts = parts[1:]
	}
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return strings.Join(parts, "/")
}

var (
	wrkRate = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkP99  = regexp.MustCompile(`\s99%\s+([\d.]+)(us|ms|s)`)
)

// parseLoad reads wrk --latency outputs named <scenario>-<run>.txt.
func parseLoad(dir string) (samples, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	out := samples{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		base := strings.TrimSuffix(filepath.Base(file), ".txt")
		i := strings.LastIndex(base, "-")
		if i < 1 {
			return nil, fmt.Errorf("load output %s: want a name <scenario>-<run>.txt", file)
		}
		name := base[:i]
		if m := wrkRate.FindSubmatch(raw); m != nil {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			out.add(name+"|rps", v)
		}
		if m := wrkP99.FindSubmatch(raw); m != nil {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			switch string(m[2]) {
			case "us":
				v /= 1000
			case "s":
				v *= 1000
			}
			out.add(name+"|p99ms", v)
		}
	}
	return out, nil
}

func sortedKeys(s samples) []string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return naturalLess(keys[i], keys[j]) })
	return keys
}

// naturalLess orders names with node counts by number, so that nodes=5000
// comes before nodes=15000.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			if len(da) != len(db) {
				return len(da) < len(db)
			}
			if da != db {
				return da < db
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
