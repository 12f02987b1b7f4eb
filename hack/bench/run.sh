#!/usr/bin/env bash
# make bench / make bench-smoke: the KNS-3 benchmarks, side by side in one
# run set, then docs/performance.md and docs/reliability.md (smoke:
# _output/bench-smoke/docs).
#   full:  BENCH_RUNS (default 3) runs of everything at 500-5000 nodes
#   smoke: one short run of everything, so the benchmarks keep working
# A second argument `reliability` runs only step 4 and its report; `value`
# only step 5 (the value benchmark and the probe accuracy benchmark on a
# shaped kind cluster, full mode: the kind suite runs the first briefly in
# make test) and docs/value.md and docs/probe-accuracy.md; `splits` only
# step 6 (every split of a level's clients between the two links, full
# mode) and its section of docs/value*.md; `event` only
# the placement event's three scheduler_perf workloads (5000 nodes: event
# on, off, and made but not written) and their section of
# docs/performance.md; `performance` only steps 1-3 and docs/performance.md;
# `load` only step 3, then docs/performance.md from it and the outputs of
# the last `performance` run.
set -euo pipefail
# Under `bazel run //hack/bench` the script runs from its runfiles.
cd "${BUILD_WORKSPACE_DIRECTORY:-$(dirname "$0")/../..}"

# The Makefile's build flags, so the perf binary reuses what go vet compiled.
# go vet has vetted these packages; go test's own vet (-vet=off below) would
# work out its analyzers' facts for every dependency again.
export CGO_ENABLED=0

mode=${1:-full}
case $mode in
  full) runs=${BENCH_RUNS:-3}; label=performance; out=_output/bench; docs=docs; dur=10s ;;
  smoke) runs=1; label=short; out=_output/bench-smoke; docs=$out/docs; dur=2s ;;
  *) echo "usage: $0 [full|smoke] [all|performance|reliability|value|splits|event|load]" >&2; exit 2 ;;
esac
steps=${2:-all}
case $steps in
  all|performance|reliability|load) ;;
  event|value|splits) [ "$mode" = full ] || { echo "$0: $steps runs in full mode only" >&2; exit 2; } ;;
  *) echo "usage: $0 [full|smoke] [all|performance|reliability|value|splits|event|load]" >&2; exit 2 ;;
esac

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi

case $steps in
  all) rm -rf "$out" ;;
  performance) rm -rf "$out/perf" "$out/load" "$out/go-bench.txt" ;;
  reliability) rm -rf "$out/reliability" "$out/reliability.jsonl" ;;
  value) rm -rf "$out/value" "$out"/value*.json "$out/accuracy.json" ;;
  splits) rm -rf "$out/splits" "$out"/splits*.json ;;
  event) rm -rf "$out/perf" ;;
  load) rm -rf "$out/load" ;;
esac
mkdir -p "$out/perf" "$out/load" "$out/reliability" "$out/value" "$out/splits"
abs=$(cd "$out" && pwd)

# perf_case RUN CASE LABEL: one scheduler_perf test case, its DataItems
# into $out/perf/run-RUN.
perf_case() {
  local start; start=$(date +%s)
  (cd test/perf && KUBE_CACHE_MUTATION_DETECTOR=false "$abs/perf.test" -test.run '^$' \
    -test.bench "BenchmarkPerfScheduling/^$2\$" -test.benchtime=1x -test.timeout 4h \
    -perf-scheduling-label-filter="$3" -data-items-dir="$abs/perf/run-$1") \
    >"$out/perf/run-$1-$2.log" 2>&1 || { tail -50 "$out/perf/run-$1-$2.log"; exit 1; }
  echo "bench:   run $1 $2: $(( $(date +%s) - start ))s"
}

if [ "$steps" = event ]; then
  echo "bench: the placement event, scheduler_perf at 5000 nodes: on, off, not written ($runs runs)"
  go test -vet=off -tags perf -c -o "$out/perf.test" ./test/perf
  # The order rotates, so no case always runs first or last.
  event_cases=(ProfileOverhead_KNS3NoEvent ProfileOverhead_KNS3 ProfileOverhead_KNS3NoSink)
  for i in $(seq "$runs"); do
    for k in 0 1 2; do perf_case "$i" "${event_cases[$(( (i + k) % 3 ))]}" event; done
  done
  go run ./test/perf/report -in "$out" -out "$docs" -report event
  echo "bench: wrote the placement event's section of $docs/performance.md"
  exit 0
fi

if [ "$steps" = all ] || [ "$steps" = performance ]; then
echo "bench: 1/6 Go benchmarks of the scoring cycle and of the work beside it ($runs runs)"
benchtime=1s; [ "$mode" = smoke ] && benchtime=1x
go test -vet=off -run '^$' -bench . -benchmem -benchtime "$benchtime" -count "$runs" \
  ./scheduler/plugins/customscore/... ./scheduler/plugins/network/ ./scheduler/plugins/placement/ \
  ./scheduler/plugins/networkcapacity/ ./scheduler/plugins/networkpeers/ | tee "$out/go-bench.txt" | grep -E '^(Benchmark|ok)'
# The network coordinates' accuracy on a synthetic 5,000-node cluster of
# three regions of three zones (no socket: the Vivaldi clients driven as
# the prober drives them), printed, apart from the scoring cycle's report.
echo "bench:   network coordinates of a synthetic 5,000-node cluster (simulator/probe)"
go test -vet=off -run '^$' -bench CoordinateAccuracy -benchtime 1x ./simulator/probe/ | tee "$out/coordinates.txt" |
  grep -E '^(Benchmark|ok)|relative error'

echo "bench: 2/6 scheduler_perf, label $label ($runs runs)"
# One go test per test case: each writes its results as soon as it ends.
# The profiles whose throughputs section 1 compares run one after the
# other, in an order that rotates with the run, so none always runs first.
profiles=(ProfileOverhead_Default ProfileOverhead_KNS3 ProfileOverhead_KNS3Background ProfileOverhead_KNS3Live ProfileOverhead_KNS3LiveNoPeers)
cases="ProfileOverhead_KNS3NoEvent ProfileOverhead_KNS3NoSink HostnameAffinity HostnameAntiAffinity HostnameAndZoneAffinity Peers PeersPreferredAffinity"
go test -vet=off -tags perf -c -o "$out/perf.test" ./test/perf
for i in $(seq "$runs"); do
  for k in "${!profiles[@]}"; do perf_case "$i" "${profiles[$(( (i + k) % ${#profiles[@]} ))]}" "$label"; done
  for c in $cases; do perf_case "$i" "$c" "$label"; done
done
fi

if [ "$steps" = all ] || [ "$steps" = performance ] || [ "$steps" = load ]; then

echo "bench: 3/6 the simulator stub under load ($runs runs of $dur per request kind)"
go build -o "$out/simulator" ./simulator/cmd/simulator
# An hour's window: the answer's ETag changes once a window, and the
# conditional runs must ask with the one it has.
{
  echo "source: load"
  echo "window_seconds: 3600"
  echo "nodes:"
  for i in $(seq 0 4999); do printf '  node-%04d: {score: 0.%03d, latency_ms: %d, bandwidth_mbps: %d}\n' "$i" $((i % 1000)) $((i % 50)) $((100 + i % 900)); done
} >"$out/scenario-5000.yaml"
addr=127.0.0.1:18478
"$out/simulator" --listen=$addr --scenario="$out/scenario-5000.yaml" >"$out/simulator.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
for _ in $(seq 50); do "$out/simulator" --probe=http://$addr/healthz 2>/dev/null && break; sleep 0.1; done
go build -o "$out/etag" ./hack/bench/etag
for i in $(seq "$runs"); do
  wrk -t1 -c8 -d"$dur" --latency http://$addr/simulate >"$out/load/full-5000-$i.txt"
  etag=$("$out/etag" http://$addr/simulate)
  wrk -t1 -c8 -d"$dur" --latency -H "If-None-Match: $etag" http://$addr/simulate >"$out/load/conditional-5000-$i.txt"
done
grep -h 'Requests/sec' "$out"/load/*.txt | sed 's/^/bench:   /'
kill $sim 2>/dev/null || true
fi

# BenchmarkReliability (test/integration): a burst of pods while the simulator
# is healthy, hangs, fails half its requests or answers after 1 s, in each
# refresh mode; one JSON line per case into reliability.jsonl.
#   full:  200 nodes, 1000 pods (20 for PerCycle x latency1s), all 8 cases:
#          about 3.5 min a run on 2 cores, so BENCH_RUNS=3 adds about 11 min
#   smoke: 50 nodes, 100 pods (5 for PerCycle x latency1s), all 8 cases:
#          about 1 min once the test package is compiled
if [ "$steps" = all ] || [ "$steps" = reliability ]; then
if [ "$mode" = smoke ]; then
  rel_env=(KNS3_RELIABILITY_NODES=50 KNS3_RELIABILITY_PODS=100 KNS3_RELIABILITY_SLOW_PODS=5)
else
  rel_env=()
fi
echo "bench: 4/6 reliability under simulator faults ($runs runs${rel_env[*]:+, ${rel_env[*]}})"
for i in $(seq "$runs"); do
  start=$(date +%s)
  env "${rel_env[@]}" KNS3_RELIABILITY_OUT="$abs/reliability.jsonl" \
    go test -vet=off -run '^$' -bench BenchmarkReliability -benchtime 1x -timeout 90m ./test/integration/ \
    >"$out/reliability/run-$i.log" 2>&1 || { grep -E '^(---|\s+reliability_test|Benchmark|FAIL|panic)' "$out/reliability/run-$i.log" | tail -40; exit 1; }
  grep -E '^BenchmarkReliability/' "$out/reliability/run-$i.log" | sed 's/^/bench:   /'
  echo "bench:   run $i: $(( $(date +%s) - start ))s"
done
fi

# The value benchmark (e2e TestValue): the same clients on a
# kind cluster with shaped links, at three load levels, five trials each,
# placed by the default scheduler, by KNS-3 with static numbers, and live
# without and with NetworkCapacity, in a balanced order (value.TrialOrder), for each workload
# of VALUE_WORKLOADS (netbench's own server, then Redis);
# value.json and value-redis.json for docs/value.md and docs/value-redis.md.
# Then, on the same cluster, unless VALUE_ACCURACY=0, the probe accuracy
# benchmark (e2e TestProbeAccuracy): deploy/live as shipped, one worker's
# link shaped six ways, ten windows each; accuracy.json for
# docs/probe-accuracy.md.
# About 90 minutes a workload with the node image built; the smoke mode
# leaves the value benchmark to the kind suite, which runs it with 5 s
# clients in make test, and the accuracy benchmark to its live checks.
if [ "$mode" = full ] && { [ "$steps" = all ] || [ "$steps" = value ]; }; then
  workloads=${VALUE_WORKLOADS:-netbench,redis}
  tests='TestValue|TestProbeAccuracy' accuracy=(-kns3.accuracy-out="$abs/accuracy.json") and=" and the probe accuracy benchmark"
  [ "${VALUE_ACCURACY:-1}" != 0 ] || { tests=TestValue; accuracy=(); and=; }
  echo "bench: 5/6 the value benchmark ($workloads; 15 s clients, 3 levels, 5 trials)$and on a shaped kind cluster"
  hack/dockerhost/setup.sh >/dev/null
  start=$(date +%s)
  go test -vet=off -tags e2e -count=1 -timeout 4h -v -run "^($tests)\$" ./e2e/ \
    -kns3.value-duration=15s -kns3.value-trials=5 -kns3.value-levels=below,equal,twice -kns3.value-workloads="$workloads" \
    -kns3.value-out="$abs" "${accuracy[@]}" >"$out/value/run.log" 2>&1 \
    || { grep -E '^(---|=== RUN|\s+(live|value|accuracy)_test|FAIL|panic|e2e)' "$out/value/run.log" | tail -40; exit 1; }
  grep -E '(live|value|accuracy)_test.go:[0-9]+: ((netbench|redis), (below|equal|twice) \(|[0-9]|unshaped|[0-9.]+ Mbit)' "$out/value/run.log" | sed 's/^ *[a-z]*_test.go:[0-9]*: /bench:   /'
  echo "bench:   $(( $(date +%s) - start ))s"
fi

# Every split of the clients of each level of VALUE_SPLITS (default equal)
# between the two links (e2e TestValue, -kns3.value-splits): each
# client held to a node, every split beside the default scheduler's
# placement, three trials in a balanced order, for each workload of
# VALUE_WORKLOADS. What any placement reaches, so that a goal no placement
# meets shows as such; splits.json and splits-redis.json for their section
# of docs/value*.md. With the node image built, equal for both workloads
# took 28 minutes; equal and twice for netbench alone, 40.
if [ "$mode" = full ] && { [ "$steps" = all ] || [ "$steps" = splits ]; }; then
  workloads=${VALUE_WORKLOADS:-netbench,redis}
  splits=${VALUE_SPLITS:-equal}
  echo "bench: 6/6 every split of the clients at $splits ($workloads; 15 s clients, 3 trials) on a shaped kind cluster"
  hack/dockerhost/setup.sh >/dev/null
  start=$(date +%s)
  go test -vet=off -tags e2e -count=1 -timeout 4h -v -run '^TestValue$' ./e2e/ \
    -kns3.value-duration=15s -kns3.value-trials=3 -kns3.value-levels= -kns3.value-splits="$splits" -kns3.value-workloads="$workloads" \
    -kns3.value-out="$abs" >"$out/splits/run.log" 2>&1 \
    || { grep -E '^(---|=== RUN|\s+(live|value)_test|FAIL|panic|e2e)' "$out/splits/run.log" | tail -40; exit 1; }
  grep -E '_test.go:[0-9]+: (netbench|redis), (below|equal|twice) \(' "$out/splits/run.log" | sed 's/^ *[a-z]*_test.go:[0-9]*: /bench:   /'
  echo "bench:   $(( $(date +%s) - start ))s"
fi

kube_version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
machine="$(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), $(free -g | awk '/^Mem:/ {print $2}') GiB, $(go env GOVERSION), Kubernetes $kube_version"
case $mode-$steps in
  full-all) command="make bench" ;;
  smoke-all) command="make bench-smoke" ;;
  full-load) command="hack/bench/run.sh full performance; hack/bench/run.sh full load" ;;
  *) command="hack/bench/run.sh $mode $steps" ;;
esac
# The value step's own settings, when set, so that a page says what made it.
[ -z "${VALUE_ACCURACY:-}" ] || command="VALUE_ACCURACY=$VALUE_ACCURACY $command"
[ -z "${VALUE_WORKLOADS:-}" ] || command="VALUE_WORKLOADS=$VALUE_WORKLOADS $command"
report=$steps
[ "$steps" != load ] || report=performance
go run ./test/perf/report -in "$out" -out "$docs" -machine "$machine" -command "$command" -report "$report"
case $mode-$steps in
  full-all) echo "bench: wrote $docs/performance.md, $docs/reliability.md, $docs/value.md and $docs/probe-accuracy.md" ;;
  smoke-all) echo "bench: wrote $docs/performance.md and $docs/reliability.md" ;;
  full-value) echo "bench: wrote $docs/value*.md and $docs/probe-accuracy.md" ;;
  full-splits) echo "bench: wrote the splits' section of $docs/value*.md" ;;
  *) echo "bench: wrote $docs/$report.md" ;;
esac
