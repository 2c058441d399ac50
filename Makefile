# sparkui — build, test and tools. `make help` lists the targets.
SHELL := /bin/bash
VERSION ?= $(shell cat VERSION)
CACHE ?= $(HOME)/.cache/sparkui
export SPARKUI_CACHE := $(CACHE)
KUSTOMIZE_VERSION := v5.8.1
KUSTOMIZE := $(CACHE)/bin/kustomize-$(KUSTOMIZE_VERSION)
export SPARKUI_KUSTOMIZE := $(KUSTOMIZE)
LDFLAGS := -s -w -X github.com/sparkui/sparkui/internal/version.Version=$(VERSION)
# One set of build flags for build, vet, test and the binaries the tests build (they set
# CGO_ENABLED=0 and -trimpath themselves): both flags are part of every compiled package's
# cache key, so with go's defaults (cgo on, no -trimpath) vet and test compiled again every
# package `make build` had just compiled (529 of the 1,075 that vet and test need).
export CGO_ENABLED := 0
export GOFLAGS := -trimpath
GO_BUILD := CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)'
# Each fuzzer runs for a count of executions (about 10 s each on a quiet 2-core machine), not a
# duration: go1.26's fuzz coordinator can report "context deadline exceeded" as a failure when a
# duration's deadline races a busy worker (golang/go#75804, fixed in Go 1.27), with no input
# found. FUZZTIME=<duration or Nx> runs every fuzzer for that instead.
FUZZTIME ?=
fuzztime = $(or $(FUZZTIME),$(1))

REPO ?= ghcr.io/sparkui
# The runtime image is tagged by the runtime contract it implements, not by VERSION: the
# function writes that tag (internal/version.RuntimeImage), so a release that keeps the contract
# keeps every rendered pod spec as it was (CHANGELOG.md, docs/runtime-contract.md).
RUNTIME_CONTRACT := $(shell sed -n 's/^const RuntimeContract = "\(.*\)"$$/\1/p' internal/version/version.go)
RUNTIME_TAG := contract-$(RUNTIME_CONTRACT)
PLATFORMS ?= linux/amd64 linux/arm64

.PHONY: help setup kubernetes build example test check generate update-golden unit fuzz bench bench-start bench-rss bench-redirect tools kustomize control-plane node traefik registry crane helm helm-plugin kubectl-plugin fmt-check vet lint clean image image-tar cmp-image-tar flux spark-operator scale scale-history

help:
	@echo "make build          bin/sparkui-fn and bin/sparkui-runtime (static)"
	@echo "make example        run sparkui-fn on the bundled spark-submit example and print the result"
	@echo "make setup          install the Debian packages the tests run (.ci/setup.sh; as root, only what is missing)"
	@echo "make test           everything (after make setup): vet, gofmt, staticcheck, unit + golden + kustomize/kpt + control-plane tests, short fuzzing"
	@echo "make check          before a commit: build, gofmt, vet and the tests that need no control plane, kustomize or kpt"
	@echo "make generate       go generate ./...: docs/rules.md and troubleshooting.md's rule table from the catalog, docs/cli.md from the binaries' --help"
	@echo "make update-golden  rewrite every golden (fn, rule fixtures, report formats, examples) and docs/rules.md; review the diff"
	@echo "make lint           staticcheck (built once per machine into $(CACHE)/bin)"
	@echo "make bench          benchmarks (compare runs with benchstat)"
	@echo "make bench-start    process start: the built binary on one application vs a no-op kyaml function"
	@echo "make scale          N applications (default 100) against the test control plane, in a burst then a trickle (INTERVAL), ended by a burst of SIGTERMs, RESTART=10s kills kube-apiserver mid-start for 10 s; tables for docs/performance.md (not in make test)"
	@echo "make bench-redirect the History redirector at 10,000 handed-off Services"
	@echo "make scale-history  the built History redirector against the test control plane: N handed-off Services (default 10000), churn for DURATION (default 60s); table for docs/performance.md (not in make test)"
	@echo "make bench-rss      peak memory: the built binary on 1,000 and 5,000 kubeflow applications vs a no-op kyaml function"
	@echo "make tools          build the kustomize CLI, the control plane, the node (kubelet, kube-scheduler, kube-proxy), Traefik, the distribution registry, crane, helm, the Flux CLI and the kubeflow spark-operator into $(CACHE)"
	@echo "make helm           the Helm 4 CLI (helm.sh/helm/v4) into $(CACHE)/helm: the deploy/helm-plugin tests and docs/deploy-helm.md run it"
	@echo "make helm-plugin    the sparkui Helm post-renderer plugin, one helm plugin package per platform (bin/helm-plugin; HELM_PLUGIN_PLATFORMS=os/arch for fewer; docs/deploy-helm.md)"
	@echo "make kubectl-plugin kubectl sparkui for the Helm plugin's platforms: krew archives and manifest in bin/kubectl-plugin (docs/kubectl-plugin.md)"
	@echo "make image-tar      both images as multi-platform OCI layout tarballs, no container engine needed (bin/*.oci.tar; docs/images.md)"
	@echo "make cmp-image-tar  the Argo CD plugin sidecar image (sparkui-fn, sparkui-cmp, plugin.yaml) as an OCI layout tarball (docs/deploy-argocd.md)"
	@echo "make image          both images with docker buildx (needs a Docker engine)"

build:
	$(GO_BUILD) -o bin/sparkui-fn ./fn
	$(GO_BUILD) -o bin/sparkui-runtime ./runtime
	$(GO_BUILD) -o bin/sparkui-cmp ./cmp

example: build
	bin/sparkui-fn examples/spark-submit/fn-config.yaml examples/spark-submit/manifests.yaml

kustomize: $(KUSTOMIZE)
$(KUSTOMIZE):
	mkdir -p $(CACHE)/bin
	GOBIN=$(CACHE)/bin/.tmp-kustomize CGO_ENABLED=0 go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(CACHE)/bin/.tmp-kustomize/kustomize $(KUSTOMIZE)
	rmdir $(CACHE)/bin/.tmp-kustomize

control-plane:
	bash testkit/testcluster/build.sh

# The control plane and the node in one go build of the six commands (what `make tools` runs).
kubernetes:
	bash testkit/testcluster/build.sh all

# kubelet, kube-scheduler and kube-proxy from the same k8s.io/kubernetes module: the real node
# testkit/testnode runs (with Debian's containerd, runc and CNI plugins, see .ci/run).
node: control-plane
	bash testkit/testcluster/build.sh node

# Traefik (its Kubernetes Gateway provider): the real Gateway API implementation of
# runtime/blackbox's TestGatewayRoutesToBoundUI, built from its Go module (testkit/gatewaytest).
traefik:
	bash testkit/gatewaytest/build-traefik.sh

# The distribution registry testkit/imagetest pushes the images to, built from its Go
# module like the other tools.
registry:
	bash testkit/registry/build-registry.sh

# crane (go-containerregistry's CLI, the version go.mod requires): the publishing command
# docs/images.md gives, run by testkit/imagetest against that registry.
CRANE_VERSION := v0.22.1
CRANE := $(CACHE)/bin/crane-$(CRANE_VERSION)
crane: $(CRANE)
$(CRANE):
	mkdir -p $(CACHE)/bin
	GOBIN=$(CACHE)/bin/.tmp-crane CGO_ENABLED=0 go install github.com/google/go-containerregistry/cmd/crane@$(CRANE_VERSION)
	mv $(CACHE)/bin/.tmp-crane/crane $(CRANE)
	rmdir $(CACHE)/bin/.tmp-crane

# The Helm 4 CLI, built from its Go module in a scratch module (it requires other k8s.io/*
# versions than the project's): the real client of deploy/helm-plugin's tests and of
# docs/deploy-helm.md's commands.
helm:
	bash testkit/helmtest/build-helm.sh

# The sparkui Helm post-renderer plugin, packaged by the real `helm plugin package` once per
# platform into bin/helm-plugin/<os>-<arch>/sparkui-$(VERSION).tgz; SIGN_KEY (and KEYRING,
# PASSPHRASE_FILE) signs them (deploy/helm-plugin/package.sh). HELM_PLUGIN_PLATFORMS, when set,
# replaces package.sh's four platforms: installing on this machine needs one build of
# sparkui-fn, not four (docs/deploy-helm.md).
helm-plugin: helm
	HELM=$$(bash testkit/helmtest/build-helm.sh) VERSION=$(VERSION) $(if $(HELM_PLUGIN_PLATFORMS),PLATFORMS='$(HELM_PLUGIN_PLATFORMS)') bash deploy/helm-plugin/package.sh

# `kubectl sparkui` (./kubectlplugin) for the Helm plugin's platforms, each a krew archive
# bin/kubectl-plugin/kubectl-sparkui_<os>_<arch>.tar.gz, and the krew manifest with their
# sha256 (deploy/krew/package.sh; docs/kubectl-plugin.md).
kubectl-plugin:
	VERSION=$(VERSION) bash deploy/krew/package.sh

# The Flux CLI (github.com/fluxcd/flux2/v2): docs/deploy-flux.md's CI recipe, which
# examples' TestDeployFlux runs (flux build kustomization --dry-run, push/tag/pull artifact).
flux:
	bash testkit/fluxtest/build-flux.sh

# The kubeflow spark-operator controller (github.com/kubeflow/spark-operator/v2, its
# cmd/operator): testkit/kubeflowtest runs it against the test control plane with a stand-in
# spark-submit.
spark-operator:
	bash testkit/kubeflowtest/build-spark-operator.sh

# Every tool the tests run that is built from a Go module, each a target of its own: the one
# list `make tools` (and so `make test`) builds. A new tool is a build script under testkit/
# (testkit/toolcache: the cache directory, the lock), a target calling it, and its name here.
# They are built TOOLS_JOBS at a time: one tool's module downloads and single-threaded links
# then overlap another's compiles (docs/CONTRIBUTING.md "Cold cost"); -j1 builds them in turn.
TOOLS = kubernetes spark-operator traefik flux helm registry kustomize crane $(STATICCHECK)
TOOLS_JOBS ?= 3
tools:
	$(MAKE) --no-print-directory -j$(TOOLS_JOBS) $(TOOLS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

# staticcheck, built from its module once per machine like the other tools. Its default checks;
# a finding that is deliberate carries a //lint:ignore with the reason next to it.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(CACHE)/bin/staticcheck-$(STATICCHECK_VERSION)
$(STATICCHECK):
	mkdir -p $(CACHE)/bin
	GOBIN=$(CACHE)/bin/.tmp-staticcheck CGO_ENABLED=0 go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(CACHE)/bin/.tmp-staticcheck/staticcheck $(STATICCHECK)
	rmdir $(CACHE)/bin/.tmp-staticcheck

lint: $(STATICCHECK)
	$(STATICCHECK) ./...

# -timeout: go test's default 10 minutes is per package binary, and runtime/nodetest runs
# every carrier and fault on real nodes one after another (5 min on 2 cores, growing).
# -p: the package binaries run TEST_P at a time (go's default is the core count, 2 here). The
# longest ones wait on real processes more than they compute (runtime/blackbox 840 s,
# runtime/nodetest 527 s, testkit/imagetest 435 s in one cold run under load), and all three
# start near the end of the import-path order, so with two slots they ran one after another.
TEST_P ?= 3
unit:
	go test -count=1 -p $(TEST_P) -timeout 30m ./...

# -fuzzminimizetime=1x: minimising each new input against the large seed fixtures would take
# most of a short run.
fuzz:
	go test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(call fuzztime,300000x) ./internal/sparkconf
	go test -run='^$$' -fuzz='^FuzzFunction$$' -fuzztime=$(call fuzztime,2000x) -fuzzminimizetime=1x ./fn
	go test -run='^$$' -fuzz='^FuzzValidate$$' -fuzztime=$(call fuzztime,800x) -fuzzminimizetime=1x ./fn
	go test -run='^$$' -fuzz='^FuzzWriteWrapped$$' -fuzztime=$(call fuzztime,10000x) -fuzzminimizetime=1x ./fn/krmio
	go test -run='^$$' -fuzz='^FuzzEncodeItems$$' -fuzztime=$(call fuzztime,15000x) -fuzzminimizetime=1x ./fn/krmio

# The Debian packages the tests run (.ci/setup.sh: as root it installs what is missing, without
# root it stops with the command that would).
setup:
	bash .ci/setup.sh

# setup first, in its own make, so a missing package stops the run before any build.
test:
	@$(MAKE) --no-print-directory setup
	@$(MAKE) --no-print-directory build tools fmt-check vet lint unit fuzz

# The packages whose tests link neither testkit/testcluster (the control plane, and the cache
# root of the tools `make tools` builds: testkit/imagetest's registry) nor run the
# examples (kustomize, kpt): read from the test binaries' dependencies, so a package that starts
# needing a cluster or a built tool leaves the list by itself. There is no -short mode (a test never skips; a
# missing tool is a failure), so fn's one test of the kustomize and kpt CLIs and catalog's run of its
# examples with kpt are left out by name.
CHECK_SKIP := ^(TestValidateModeInKustomizeAndKpt|TestCatalogExamples)$$
check: build fmt-check vet
	go test -count=1 -skip '$(CHECK_SKIP)' $$(go list -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... | \
	  awk '$$1 ~ /\.test$$/ { c = 0; for (i = 2; i <= NF; i++) if ($$i == "github.com/sparkui/sparkui/testkit/testcluster") c = 1; if (!c) print substr($$1, 1, length($$1) - 5) }')

generate:
	go generate ./...

# docs/rules.md, then every golden the repository has, each rewritten by its own test's switch.
# The examples' expected.yaml and pre-merge-ci text/SARIF come from the built binary and the
# kustomize and kpt CLIs (make kustomize; kpt on PATH); deploy/helm-plugin's expected.yaml from
# the real helm (make helm).
update-golden: kustomize helm generate
	UPDATE_GOLDEN=1 go test -count=1 -run '^TestGolden$$' ./fn
	UPDATE_GOLDEN=1 go test -count=1 -run '^TestRuleFixtures$$' ./validate
	UPDATE_GOLDEN=1 go test -count=1 ./validate/report
	go test -count=1 -run '^TestExamples$$' ./examples -update
	UPDATE_GOLDEN=1 go test -count=1 -run '^TestHelmTemplate$$' ./deploy/helm-plugin

BENCHSTAT := $(CACHE)/bin/benchstat
$(BENCHSTAT):
	GOBIN=$(CACHE)/bin go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

# Columns: the function, the no-op floor on the same input, the no-op floor on the output.
# Rows: 1, 100 and 1,000 spark-submit applications, 1,000 kubeflow SparkApplications. One go
# test per round, so the three columns see the same load on a shared machine (with -count=6
# in one run, every Function sample came minutes before every FloorOutput one).
bench: $(BENCHSTAT)
	rm -f bench.out
	for i in 1 2 3 4 5 6; do go test -run='^$$' -bench='Benchmark(Function|Floor|FloorOutput)/' -benchmem -count=1 ./fn | tee -a bench.out; done
	$(BENCHSTAT) -col .name -row /apps,/carrier bench.out
	go test -run='^$$' -bench='Benchmark(Validate|FloorValidate|FloorValidateOut)' -benchmem -count=6 ./fn | tee bench-validate.out
	$(BENCHSTAT) -col .name bench-validate.out

# The built binary, one process per application as kustomize runs it, against a no-op kyaml
# function. One go test per round, so both columns see the same load on a shared machine.
bench-start: $(BENCHSTAT)
	rm -f bench-start.out
	for i in 1 2 3 4 5 6 7 8 9 10; do go test -run='^$$' -bench='^BenchmarkStart(Function|Floor|FloorOutput)$$' -benchtime=40x -count=1 ./fn | tee -a bench-start.out; done
	$(BENCHSTAT) -col .name bench-start.out

# Peak RSS (the child's rusage) of the built binary on 1,000 and 5,000 kubeflow
# SparkApplications and of the no-op on its output, three rounds (the peak moves with when the
# garbage collector happens to run: ±20 % between rounds).
bench-rss: $(BENCHSTAT)
	rm -f bench-rss.out
	for i in 1 2 3; do go test -run='^$$' -bench='^BenchmarkPeakRSS$$' -benchtime=1x -count=1 ./fn | tee -a bench-rss.out; done
	$(BENCHSTAT) bench-rss.out

# The History redirector at 10,000 handed-off Services (issue 33): a change of the table, a
# lookup per way a request names its Service, a relist after a watch expired, and requests a
# second on loopback; docs/performance.md "The History redirector at 10,000 Services".
bench-redirect: $(BENCHSTAT)
	go test -run='^$$' -bench=. -benchmem -count=6 ./runtime/redirect | tee bench-redirect.out
	$(BENCHSTAT) bench-redirect.out

# testkit/scale: N applications (real sparkui-runtime processes, each with the stand-in UI in a
# network namespace of its own) against the test control plane with kube-controller-manager,
# started in a burst and then N more in a trickle (one every INTERVAL), each run ended by a
# burst of SIGTERMs; prints the tables of docs/performance.md "At scale" (and writes them to
# scale.out; STARTS=burst or STARTS=trickle runs that one alone; RESTART=10s kills kube-apiserver
# in the middle of each run's starts and starts it again 10 s later). Its 50-application form,
# TestScaleSmall, and its API server restart at 40 applications, TestScaleRestart, run in
# `make test`. Runs as root (or with unprivileged user namespaces); N=1000 needs about 3,000 processes.
N ?= 100
INTERVAL ?= 50ms
STARTS ?= burst,trickle
RESTART ?= 0
scale: control-plane
	go test -tags scale -count=1 -timeout 90m -run '^TestScale$$' -v ./testkit/scale \
	  -args -scale.n=$(N) -scale.interval=$(INTERVAL) -scale.starts=$(STARTS) -scale.restart=$(RESTART) -scale.out=$(CURDIR)/scale.out

# testkit/scale's History redirector run: the built `sparkui-runtime redirect` under the example's
# identity and environment (examples/history-redirector) against the test control plane, on N
# handed-off UI Services; for DURATION, RATE applications a second are handed off and RATE old
# Services deleted (loopback lookup clients in its second half); then a restart, a fresh list.
# Prints the table of docs/performance.md "The History redirector at 10,000 Services" (and writes
# it to scale-history.out). HISTORY_ENV adds to the Deployment's environment (e.g.
# HISTORY_ENV=GOMEMLIMIT=off). EXPIRE=15s runs the API server without a watch cache for Services
# and cuts the redirector off it that long after the churn: its watch outlives etcd's compaction
# (410) and it lists again. Its 500-Service form, TestHistorySmall (with EXPIRE), runs in `make test`.
DURATION ?= 60s
RATE ?= 10
HISTORY_ENV ?=
EXPIRE ?= 0
scale-history: N = 10000
scale-history: control-plane
	go test -tags scale -count=1 -timeout 60m -run '^TestHistoryScale$$' -v ./testkit/scale \
	  -args -history.n=$(N) -history.duration=$(DURATION) -history.rate=$(RATE) -history.env='$(HISTORY_ENV)' -history.expire=$(EXPIRE) \
	  -history.out=$(CURDIR)/scale-history.out

# One multi-platform image per binary (an OCI image index over PLATFORMS), each an OCI layout
# tarball in IMAGE_OUT; the command prints each tarball and its index digest. REVISION (the
# commit) becomes org.opencontainers.image.revision; it is left out when the work tree has
# changes, since the image then holds no commit's code. docs/images.md: loading, publishing,
# pinning by digest.
IMAGE_OUT ?= bin
REVISION ?= $(shell git diff --quiet HEAD 2>/dev/null && git rev-parse HEAD 2>/dev/null)
image-tar:
	@set -e; for b in sparkui-fn sparkui-runtime; do \
	  args=""; for p in $(PLATFORMS); do \
	    os=$${p%/*}; arch=$${p#*/}; \
	    GOOS=$$os GOARCH=$$arch $(GO_BUILD) -o $(IMAGE_OUT)/$$os-$$arch/$$b ./$${b#sparkui-}; \
	    args="$$args $$p=$(IMAGE_OUT)/$$os-$$arch/$$b"; \
	  done; \
	  tag=$(VERSION); [ $$b = sparkui-runtime ] && tag=$(RUNTIME_TAG); \
	  go run ./internal/ociimage/cmd/image-tar -name $$b -ref $(REPO)/$$b:$$tag -version $(VERSION) \
	    -revision '$(REVISION)' -out $(IMAGE_OUT)/$$b.oci.tar $$args; \
	done

# The Argo CD plugin sidecar (docs/deploy-argocd.md): sparkui-fn, sparkui-cmp and cmp/plugin.yaml
# at /home/argocd/cmp-server/config/plugin.yaml, one multi-platform OCI layout tarball.
cmp-image-tar:
	@set -e; args=""; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; \
	  GOOS=$$os GOARCH=$$arch $(GO_BUILD) -o $(IMAGE_OUT)/$$os-$$arch/sparkui-fn ./fn; \
	  GOOS=$$os GOARCH=$$arch $(GO_BUILD) -o $(IMAGE_OUT)/$$os-$$arch/sparkui-cmp ./cmp; \
	  args="$$args $$p=$(IMAGE_OUT)/$$os-$$arch"; \
	done; \
	go run ./internal/ociimage/cmd/cmp-image-tar -ref $(REPO)/sparkui-argocd-cmp:$(VERSION) -version $(VERSION) \
	  -revision '$(REVISION)' -plugin cmp/plugin.yaml -out $(IMAGE_OUT)/sparkui-argocd-cmp.oci.tar $$args

image:
	docker buildx build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --target fn -t $(REPO)/sparkui-fn:$(VERSION) .
	docker buildx build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --target runtime -t $(REPO)/sparkui-runtime:$(RUNTIME_TAG) .

clean:
	rm -rf bin scale.out scale-history.out bench.out bench-validate.out bench-start.out bench-rss.out
