# KNS-3 developer entry points. `make test` is the one test command.
GO        ?= go
BAZEL     ?= bazel
# Bazel uses the loopback remote cache (--config=cache) whenever `make cache`
# (hack/bazel/remote-cache.sh start) has it running.
BAZEL_FLAGS ?= $(shell hack/bazel/remote-cache.sh status >/dev/null 2>&1 && echo --config=cache)
# The Kubernetes release is the k8s.io/kubernetes version go.mod requires
# (expanded only by the targets that use it).
KUBE_VERSION = $(shell $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
KUBE_MAJOR   = $(patsubst v%,%,$(word 1,$(subst ., ,$(KUBE_VERSION))))
KUBE_MINOR   = $(word 2,$(subst ., ,$(KUBE_VERSION)))
BIN       := _output/bin
# One set of build flags for the go commands here: cgo off and no -trimpath,
# as the demo builds its images, so go vet and the benchmarks reuse the
# packages the demo compiled. The race detector needs cgo and builds apart.
export CGO_ENABLED := 0
LDFLAGS   = -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
             -X k8s.io/component-base/version.gitMajor=$(KUBE_MAJOR) \
             -X k8s.io/component-base/version.gitMinor=$(KUBE_MINOR)

.PHONY: imports-check all build images test check fmt-check vet lint-bazel bazel-setup bazel-test go-test cache clean \
	demo demo-delete host-setup node-image e2e bench bench-smoke race race-build integration integration-build codegen-verify nested-check \
	monitoring-check

all: build

# KNS-3 on a local kind cluster with a sample workload: prints where each
# pod went and the simulator's score for its node. DEMO_FLAGS=-install=replace
# makes kns-3-scheduler the control plane's only scheduler instead.
demo: host-setup
	$(GO) run ./cmd/demo $(DEMO_FLAGS)

# Deletes the demo's cluster, thawing what a stuck pod froze on hosts where
# `kind delete cluster` alone fails.
demo-delete:
	$(GO) run ./cmd/demo -delete

# Every test: formatting, vet, Bazel lint (buildifier, stale BUILD files),
# every unit and kind end-to-end test under Bazel, the integration suite, the race
# detector on the scheduler's plugins and the simulator, and one short run of
# the benchmarks so they keep working. The race detector's build (its own
# compile of Kubernetes) runs beside Bazel's tests at nice 19; in a session
# of its own, under the kernel's autogroup scheduling, it still shares the
# cores with Bazel about equally (docs/development.md). The race tests run
# after.
#
# The integration suite runs here with go test, not Bazel: its dependencies
# (a kube-apiserver on an embedded etcd, 769 of the 2,316 libraries `bazel
# test //...` compiles) are in the Go build cache once `make vet` has run,
# and the benchmarks link the same test binary; Bazel would compile them all
# again. `make bazel-test` still runs it under Bazel.
test: check
	@mkdir -p _output; \
	setsid nice -n 19 $(MAKE) --no-print-directory race-build integration-build >_output/beside-bazel.log 2>&1 & bg=$$!; \
	$(MAKE) --no-print-directory bazel-test BAZEL_TARGETS='$(TEST_BAZEL_TARGETS)'; rc=$$?; \
	if [ $$rc -ne 0 ]; then kill -- -$$bg 2>/dev/null; exit $$rc; fi; \
	wait $$bg || { tail -50 _output/beside-bazel.log; exit 1; }
	$(MAKE) --no-print-directory race integration bench-smoke

# The benchmarks side by side (docs/performance.md): the profiles in
# interleaved rounds, BENCH_RUNS=7 to BENCH_MAX_RUNS=15 of each size (see
# hack/bench/run.sh).
bench:
	hack/bench/run.sh full

bench-smoke:
	hack/bench/run.sh smoke

# Docker running, debootstrap installed, and the runc wrapper where the host
# cannot grant CAP_SYS_RESOURCE (see README).
host-setup:
	hack/dockerhost/setup.sh

# The kind node image (kns-3-node:v1.37.2-<inputs hash>), built if missing.
node-image: host-setup
	$(GO) run ./internal/kindnode

# The kind suite without Bazel. Its monitoring check runs promtool, which
# monitoring-check installs.
e2e: host-setup monitoring-check
	$(GO) test -tags e2e -count=1 -timeout 60m -v ./e2e/...

check: fmt-check vet lint-bazel codegen-verify nested-check monitoring-check imports-check

bazel-setup:
	hack/bazel/setup.sh

BAZEL_TARGETS ?= //...
TEST_BAZEL_TARGETS = //... -- -//test/integration:integration_test

bazel-test: bazel-setup host-setup monitoring-check
	$(BAZEL) test $(BAZEL_FLAGS) $(BAZEL_TARGETS)

lint-bazel: bazel-setup
	hack/bazel/lint.sh

# The generated deepcopy, conversion and defaulting code of the plugins' args
# types is in step with the types (hack/codegen/update.sh regenerates it).
codegen-verify:
	hack/codegen/update.sh --verify

images: bazel-setup
	$(BAZEL) build $(BAZEL_FLAGS) //scheduler:image //simulator:image

cache:
	hack/bazel/remote-cache.sh start

# The plugins' breaker, poller and ETag cache and the simulator's scenario
# watcher are concurrent: the unit tests of the scheduler and the simulator
# run under the race detector, every package with tests but the config
# scheme's. That one loads configurations through kube-scheduler's own option
# code and starts no goroutine; it alone would compile the rest of the
# kube-scheduler command with -race (over a third of the old race build) and
# runs under Bazel. Packages without tests are not compiled here.
RACE_PKGS = $(shell $(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' \
	./scheduler/... ./simulator/... | grep -vxF 'kns3.dev/kns3/scheduler/apis/config/scheme')
# `make vet` has run every analyzer on these packages; go test's own vet
# would work out its analyzers' facts again for every dependency, Kubernetes
# included, in the race build's configuration, so it is off here.
race:
	@[ -n "$(RACE_PKGS)" ] || { echo "race: go list found no package"; exit 1; }
	CGO_ENABLED=1 $(GO) test -race -vet=off -count=1 -timeout 20m $(RACE_PKGS)

# Compiles and links what `make race` runs, running no test.
race-build:
	@[ -n "$(RACE_PKGS)" ] || { echo "race: go list found no package"; exit 1; }
	CGO_ENABLED=1 $(GO) test -race -vet=off -count=1 -run '^$$' $(RACE_PKGS)

# The integration suite (test/integration) with go test; `make vet` has vetted it.
integration:
	$(GO) test -vet=off -count=1 -timeout 20m ./test/integration/

# Compiles and links the integration suite, running no test.
integration-build:
	$(GO) test -vet=off -count=1 -run '^$$' ./test/integration/

# The same tests without Bazel.
go-test:
	$(GO) test -count=1 -timeout 30m ./...

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kns-3-scheduler ./scheduler/cmd/kns-3-scheduler
	$(GO) build -trimpath -o $(BIN)/simulator ./simulator/cmd/simulator
	$(GO) build -trimpath -o $(BIN)/kubectl-kns3 ./kubectl-kns3/cmd/kubectl-kns3

vet:
	$(GO) vet -tags e2e,perf ./...

# deploy/monitoring's alert rules under promtool's unit tests; installs
# Debian's prometheus package for promtool when it is missing.
monitoring-check:
	hack/monitoring/check.sh

# The import rules the go command checks, which Bazel's sandbox cannot run:
# no plugin imports another (shared code lives beside them), and kubectl
# kns3 links no k8s.io/kubernetes package.
imports-check:
	$(GO) test -count=1 -run '^(TestPluginsImportNoOtherPlugin|TestKubectlLinksNoKubernetes)$$' .

# The kind node's pod network plugin lives in a module of its own, outside
# ./...: vet it and run its unit tests (pure functions, no root needed).
nested-check:
	cd internal/kindnode/modules/kubernetes && $(GO) vet ./cmd/kns3-cni && $(GO) test -vet=off -count=1 ./cmd/kns3-cni

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf _output
