# KNS-3 developer entry points. `make test` is the one test command.
GO        ?= go
VERSION   := $(shell cat VERSION)
KUBE_VERSION := v1.37.2
BIN       := _output/bin
LDFLAGS   := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
             -X k8s.io/component-base/version.gitMajor=1 \
             -X k8s.io/component-base/version.gitMinor=37

.PHONY: all build test unit integration vet fmt-check clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kns-3-scheduler ./scheduler/cmd/kns-3-scheduler
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/simulator ./simulator/cmd/simulator

# Every test: formatting, vet, unit tests and the integration suite (a real
# kube-apiserver and etcd in the test process).
test: fmt-check vet
	$(GO) test -count=1 -timeout 30m ./...

unit:
	$(GO) test -short ./...

integration:
	$(GO) test -count=1 -timeout 30m -v ./test/integration/...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf _output
