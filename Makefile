# KNS-3 developer entry points. `make test` is the one test command.
GO        ?= go
BAZEL     ?= bazel
# Bazel uses the loopback remote cache (--config=cache) whenever `make cache`
# (tools/bazel/remote-cache.sh start) has it running.
BAZEL_FLAGS ?= $(shell tools/bazel/remote-cache.sh status >/dev/null 2>&1 && echo --config=cache)
KUBE_VERSION := v1.37.2
BIN       := _output/bin
LDFLAGS   := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
             -X k8s.io/component-base/version.gitMajor=1 \
             -X k8s.io/component-base/version.gitMinor=37

.PHONY: all build images test check fmt-check vet lint-bazel bazel-setup bazel-test go-test cache clean

all: build

# Every test: formatting, vet, Bazel lint (buildifier, stale BUILD files),
# then every unit and integration test under Bazel.
test: check bazel-test

check: fmt-check vet lint-bazel

bazel-setup:
	tools/bazel/setup.sh

bazel-test: bazel-setup
	$(BAZEL) test $(BAZEL_FLAGS) //...

lint-bazel: bazel-setup
	tools/bazel/lint.sh

images: bazel-setup
	$(BAZEL) build $(BAZEL_FLAGS) //scheduler:image //simulator:image

cache:
	tools/bazel/remote-cache.sh start

# The same tests without Bazel.
go-test:
	$(GO) test -count=1 -timeout 30m ./...

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kns-3-scheduler ./scheduler/cmd/kns-3-scheduler
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/simulator ./simulator/cmd/simulator

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf _output
