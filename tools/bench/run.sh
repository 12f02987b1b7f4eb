#!/usr/bin/env bash
# make bench / make bench-smoke: the KNS-3 benchmarks, side by side in one
# run set, then docs/performance.md (smoke: _output/bench-smoke/docs).
#   full:  BENCH_RUNS (default 3) runs of everything at 500-5000 nodes
#   smoke: one short run of everything, so the benchmarks keep working
set -euo pipefail
# Under `bazel run //tools/bench` the script runs from its runfiles.
cd "${BUILD_WORKSPACE_DIRECTORY:-$(dirname "$0")/../..}"

mode=${1:-full}
case $mode in
  full) runs=${BENCH_RUNS:-3}; label=performance; out=_output/bench; docs=docs; dur=10s ;;
  smoke) runs=1; label=short; out=_output/bench-smoke; docs=$out/docs; dur=2s ;;
  *) echo "usage: $0 [full|smoke]" >&2; exit 2 ;;
esac

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi

rm -rf "$out"
mkdir -p "$out/perf" "$out/load"
abs=$(cd "$out" && pwd)

echo "bench: 1/3 Go benchmarks of the scoring cycle ($runs runs)"
benchtime=1s; [ "$mode" = smoke ] && benchtime=1x
go test -run '^$' -bench . -benchmem -benchtime "$benchtime" -count "$runs" \
  ./scheduler/plugins/customscore/ | tee "$out/go-bench.txt" | grep -E '^(Benchmark|ok)'

echo "bench: 2/3 scheduler_perf, label $label ($runs runs)"
# One go test per test case: each writes its results as soon as it ends.
cases="ProfileOverhead_Default ProfileOverhead_KNS3 HostnameAffinity HostnameAntiAffinity HostnameAndZoneAffinity"
go test -tags perf -c -o "$out/perf.test" ./test/perf
for i in $(seq "$runs"); do
  for c in $cases; do
    start=$(date +%s)
    (cd test/perf && KUBE_CACHE_MUTATION_DETECTOR=false "$abs/perf.test" -test.run '^$' \
      -test.bench "BenchmarkPerfScheduling/^$c\$" -test.benchtime=1x -test.timeout 4h \
      -perf-scheduling-label-filter="$label" -data-items-dir="$abs/perf/run-$i") \
      >"$out/perf/run-$i-$c.log" 2>&1 || { tail -50 "$out/perf/run-$i-$c.log"; exit 1; }
    echo "bench:   run $i $c: $(( $(date +%s) - start ))s"
  done
done

echo "bench: 3/3 the simulator stub under load ($runs runs of $dur per request kind)"
go build -o "$out/simulator" ./simulator/cmd/simulator
{
  echo "source: load"
  echo "nodes:"
  for i in $(seq 0 4999); do printf '  node-%04d: {score: 0.%03d, latency_ms: %d, bandwidth_mbps: %d}\n' "$i" $((i % 1000)) $((i % 50)) $((100 + i % 900)); done
} >"$out/scenario-5000.yaml"
addr=127.0.0.1:18478
"$out/simulator" --listen=$addr --scenario="$out/scenario-5000.yaml" >"$out/simulator.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
for _ in $(seq 50); do "$out/simulator" --probe=http://$addr/healthz 2>/dev/null && break; sleep 0.1; done
etag=$(go run ./tools/bench/etag http://$addr/simulate)
for i in $(seq "$runs"); do
  wrk -t1 -c8 -d"$dur" --latency http://$addr/simulate >"$out/load/full-5000-$i.txt"
  wrk -t1 -c8 -d"$dur" --latency -H "If-None-Match: $etag" http://$addr/simulate >"$out/load/conditional-5000-$i.txt"
done
grep -h 'Requests/sec' "$out"/load/*.txt | sed 's/^/bench:   /'

machine="$(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), $(free -g | awk '/^Mem:/ {print $2}') GiB, $(go env GOVERSION), Kubernetes v1.37.2"
go run ./tools/benchreport -in "$out" -out "$docs" -machine "$machine" -command "make bench$([ "$mode" = smoke ] && echo -smoke)"
echo "bench: wrote $docs/performance.md"
