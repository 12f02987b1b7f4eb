#!/usr/bin/env bash
# make bench / make bench-smoke: the KNS-3 benchmarks, side by side in one
# run set, then docs/performance.md and docs/reliability.md (smoke:
# _output/bench-smoke/docs).
#   full:  everything at 500-5000 nodes. The profiles of section 1 and
#          the placement event's variants run in interleaved rounds, at
#          least BENCH_RUNS (default 7) of each size, then more, up to
#          BENCH_MAX_RUNS (default 15), until every ratio's 95 % interval
#          is within ±5 %; BENCH_HOSTNAME_RUNS (default 3) runs of the
#          hostname cases, BENCH_GO_COUNT (default 5) of the Go
#          benchmarks, 3 of the rest
#   smoke: one short run of everything (two rounds of the interleaved
#          ones, so that their intervals show), so the benchmarks keep
#          working
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
# the last `performance` run; `value-peers` only step 7 (the peers value
# benchmark on a kind cluster with one slow, lossy path, full mode; no
# other run has it) and docs/value-peers.md.
set -euo pipefail
# Under `bazel run //hack/bench` the script runs from its runfiles.
cd "${BUILD_WORKSPACE_DIRECTORY:-$(dirname "$0")/../..}"

# The Makefile's build flags, so the perf binary reuses what go vet compiled.
# go vet has vetted these packages; go test's own vet (-vet=off below) would
# work out its analyzers' facts for every dependency again.
export CGO_ENABLED=0

mode=${1:-full}
case $mode in
  full) runs=${BENCH_RUNS:-7}; max_runs=${BENCH_MAX_RUNS:-15}; other_runs=3; hostname_runs=${BENCH_HOSTNAME_RUNS:-3}
    go_count=${BENCH_GO_COUNT:-5}; label=performance; sizes=(500Nodes 1000Nodes 5000Nodes); event_size=5000Nodes
    out=_output/bench; docs=docs; dur=10s ;;
  smoke) runs=2; max_runs=2; other_runs=1; hostname_runs=1; go_count=1; label=short; sizes=(10Nodes); event_size=10Nodes
    out=_output/bench-smoke; docs=$out/docs; dur=2s ;;
  *) echo "usage: $0 [full|smoke] [all|performance|reliability|value|splits|value-peers|event|load]" >&2; exit 2 ;;
esac
steps=${2:-all}
case $steps in
  all|performance|reliability|load) ;;
  event|value|splits|value-peers) [ "$mode" = full ] || { echo "$0: $steps runs in full mode only" >&2; exit 2; } ;;
  *) echo "usage: $0 [full|smoke] [all|performance|reliability|value|splits|value-peers|event|load]" >&2; exit 2 ;;
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
  performance) rm -rf "$out/perf" "$out/perf-event" "$out/load" "$out/go-bench.txt" ;;
  reliability) rm -rf "$out/reliability" "$out/reliability.jsonl" ;;
  value) rm -rf "$out/value" "$out"/value*.json "$out/accuracy.json" ;;
  value-peers) rm -rf "$out/value-peers" ;;
  splits) rm -rf "$out/splits" "$out"/splits*.json ;;
  event) rm -rf "$out/perf-event" ;;
  load) rm -rf "$out/load" ;;
esac
mkdir -p "$out/perf" "$out/perf-event" "$out/load" "$out/reliability" "$out/value" "$out/splits"
abs=$(cd "$out" && pwd)

# perf_case DIR RUN CASE WORKLOAD: one scheduler_perf workload (every
# workload of CASE for WORKLOAD '.*') in a process of its own, its
# DataItems into DIR/run-RUN/CASE-WORKLOAD.
perf_case() {
  local start dir="$1/run-$2/$3-${4/#.\*/all}"; start=$(date +%s)
  mkdir -p "$dir"
  (cd test/perf && KUBE_CACHE_MUTATION_DETECTOR=false "$abs/perf.test" -test.run '^$' \
    -test.bench "BenchmarkPerfScheduling/^$3\$/^$4\$" -test.benchtime=1x -test.timeout 4h \
    -perf-scheduling-label-filter="$label" -data-items-dir="$dir") \
    >"$dir.log" 2>&1 || { tail -50 "$dir.log"; exit 1; }
  echo "bench:   run $2 $3/$4: $(( $(date +%s) - start ))s"
}

# rounds DIR WORKLOAD CASE...: interleaved rounds of WORKLOAD: in each, every
# CASE once, back to back, in an order that rotates from round to round,
# so that none always runs first or last and each round's runs are a
# pair for the report's ratios. At least $runs rounds, then more until
# every ratio those rounds measure (CONVERGED: a node count of section 1,
# or "event") has a 95 % interval within ±5 % (report -converged), up to
# $max_runs.
rounds() {
  local dir=$1 size=$2 converged=$3; shift 3
  local cases=("$@") i=0 k
  while :; do
    i=$((i + 1))
    for k in "${!cases[@]}"; do perf_case "$dir" "$i" "${cases[$(( (i + k) % ${#cases[@]} ))]}" "$size"; done
    [ "$i" -ge "$runs" ] || continue
    [ "$i" -lt "$max_runs" ] || break
    "$out/report" -in "$abs" -converged "$converged" | sed 's/^/bench:   /' && break
  done
}

# The placement event: on, off, and made but not written, in rounds.
event_rounds() {
  rounds "$abs/perf-event" "$event_size" event ProfileOverhead_KNS3NoEvent ProfileOverhead_KNS3 ProfileOverhead_KNS3NoSink
}

if [ "$steps" = event ]; then
  echo "bench: the placement event, scheduler_perf at 5000 nodes: on, off, not written ($runs to $max_runs rounds)"
  go test -vet=off -tags perf -c -o "$out/perf.test" ./test/perf
  go build -o "$out/report" ./test/perf/report
  event_rounds
  "$out/report" -in "$out" -out "$docs" -report event
  echo "bench: wrote the placement event's section of $docs/performance.md"
  exit 0
fi

if [ "$steps" = all ] || [ "$steps" = performance ]; then
echo "bench: 1/6 Go benchmarks of the scoring cycle and of the work beside it ($go_count runs)"
benchtime=1s; [ "$mode" = smoke ] && benchtime=1x
go test -vet=off -run '^$' -bench . -benchmem -benchtime "$benchtime" -count "$go_count" \
  ./scheduler/plugins/customscore/... ./scheduler/plugins/network/ ./scheduler/plugins/placement/ \
  ./scheduler/plugins/networkcapacity/ ./scheduler/plugins/networkpeers/ | tee "$out/go-bench.txt" | grep -E '^(Benchmark|ok)'
# The network coordinates' accuracy on a synthetic 5,000-node cluster of
# three regions of three zones (no socket: the Vivaldi clients driven as
# the prober drives them), printed, apart from the scoring cycle's report.
echo "bench:   network coordinates of a synthetic 5,000-node cluster (simulator/probe)"
go test -vet=off -run '^$' -bench CoordinateAccuracy -benchtime 1x ./simulator/probe/ | tee "$out/coordinates.txt" |
  grep -E '^(Benchmark|ok)|relative error'

echo "bench: 2/6 scheduler_perf, label $label: rounds of the profiles and of the placement event, then the hostname cases"
go test -vet=off -tags perf -c -o "$out/perf.test" ./test/perf
go build -o "$out/report" ./test/perf/report
profiles=(ProfileOverhead_Default ProfileOverhead_KNS3 ProfileOverhead_KNS3Background ProfileOverhead_KNS3Live ProfileOverhead_KNS3LiveNoPeers)
for size in "${sizes[@]}"; do
  rounds "$abs/perf" "$size" "${size%Nodes}" "${profiles[@]}"
done
event_rounds
for i in $(seq "$hostname_runs"); do
  for c in HostnameAffinity HostnameAntiAffinity HostnameAndZoneAffinity; do perf_case "$abs/perf" "$i" "$c" '.*'; done
done
# Pods with 1, 10 and 100 peers: NetworkPeers beside upstream's preferred
# pod affinity, alternating.
for i in $(seq "$hostname_runs"); do
  for c in Peers PeersPreferredAffinity; do perf_case "$abs/perf" "$i" "$c" '.*'; done
done
fi

if [ "$steps" = all ] || [ "$steps" = performance ] || [ "$steps" = load ]; then

echo "bench: 3/6 the simulator stub under load ($other_runs runs of $dur per request kind)"
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
for i in $(seq "$other_runs"); do
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
echo "bench: 4/6 reliability under simulator faults ($other_runs runs${rel_env[*]:+, ${rel_env[*]}})"
for i in $(seq "$other_runs"); do
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

# The peers value benchmark (e2e TestValuePeers, -kns3.value-peers-out): a
# server and six clients, every pod placed by the scheduler under test, on
# a kind cluster whose path between the two workers the server may take
# is shaped to 20 Mbit/s and 5 % loss each way; placed by the default
# scheduler, by it with preferred pod affinity to the server's node, and
# by KNS-3 live without and with NetworkPeers, five trials of each case
# (room for the clients beside the server, and none) in a balanced order,
# for each workload of VALUE_WORKLOADS; value-peers/<workload>.json for
# docs/value-peers.md. About 25 minutes a workload with the node image
# built (netbench's took 24 min 40 s): eight placements of 15 s clients a
# trial, each after the pairs are measured again.
if [ "$mode" = full ] && { [ "$steps" = all ] || [ "$steps" = value-peers ]; }; then
  workloads=${VALUE_WORKLOADS:-netbench,redis}
  echo "bench: 7/7 the peers value benchmark ($workloads; 15 s clients, 2 cases, 5 trials) on a kind cluster with one slow, lossy path"
  hack/dockerhost/setup.sh >/dev/null
  mkdir -p "$out/value-peers"
  start=$(date +%s)
  go test -vet=off -tags e2e -count=1 -timeout 4h -v -run '^TestValuePeers$' ./e2e/ \
    -kns3.value-duration=15s -kns3.value-trials=5 -kns3.value-workloads="$workloads" \
    -kns3.value-peers-out="$abs/value-peers" >"$out/value-peers/run.log" 2>&1 \
    || { grep -E '^(---|=== RUN|\s+(live|value|valuepeers|valuepeerscluster)_test|FAIL|panic|e2e)' "$out/value-peers/run.log" | tail -40; exit 1; }
  grep -E 'valuepeers_test.go:[0-9]+: (netbench|redis), (room|full) \(' "$out/value-peers/run.log" | sed 's/^ *[a-z]*_test.go:[0-9]*: /bench:   /'
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
# The settings a run was given, when set, so that a page says what made it.
for v in VALUE_ACCURACY VALUE_WORKLOADS BENCH_RUNS BENCH_MAX_RUNS BENCH_GO_COUNT BENCH_HOSTNAME_RUNS; do
  [ -z "${!v:-}" ] || command="$v=${!v} $command"
done
report=$steps
[ "$steps" != load ] || report=performance
go run ./test/perf/report -in "$out" -out "$docs" -machine "$machine" -command "$command" -report "$report"
case $mode-$steps in
  full-all) echo "bench: wrote $docs/performance.md, $docs/reliability.md, $docs/value.md, $docs/probe-accuracy.md and $docs/value-peers.md" ;;
  smoke-all) echo "bench: wrote $docs/performance.md and $docs/reliability.md" ;;
  full-value) echo "bench: wrote $docs/value*.md and $docs/probe-accuracy.md" ;;
  full-splits) echo "bench: wrote the splits' section of $docs/value*.md" ;;
  *) echo "bench: wrote $docs/$report.md" ;;
esac
