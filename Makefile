# Gryvia developer entry points. The README's two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: help image install k8s-bin node-bin k9s-bin kueue-bin stripe-mock-bin storage-bin rclone-bin s3-bin proxy-bin prometheus-bin registry-bin slurm-bin krew-archive lint format test test-all test-pure test-cluster test-unit crds docs bench bench-large demo demo-check demo-down clean

help: ## List the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,operator,mcp,stripe]'
	touch $@

install: $(VENV)/.installed ## Create .venv and install gryvia with its dev, operator, mcp and stripe extras
	@# Bytecode for the editable install, as a wheel install has it (startup does not compile
	@# every module, even where PYTHONDONTWRITEBYTECODE is set); only changed files are redone.
	@$(BIN)/python -m compileall -q gryvia_cli gryvia_operator > /dev/null

image: ## The operator image from the Dockerfile, with no registry (as root: Debian base, podman)
	tools/image/build.sh

proxy-bin: ## tinyproxy (Debian's package): the real proxy of the proxy-authentication test
	tools/deb.sh tinyproxy tinyproxy

prometheus-bin: ## Prometheus (Debian's package): the sandbox's server scraping the GPU exporters
	tools/deb.sh prometheus prometheus

registry-bin: ## An OCI registry (Debian's docker-registry): `sandbox up --registry`, the chart installed from it
	tools/deb.sh docker-registry docker-registry

slurm-bin: ## Slurm 22.05 and munge (Debian's packages): the oracle the sbatch importer is checked against
	PATH="$$PATH:/usr/sbin" tools/deb.sh munged munge
	PATH="$$PATH:/usr/sbin" tools/deb.sh slurmctld slurmctld
	PATH="$$PATH:/usr/sbin" tools/deb.sh slurmd slurmd
	tools/deb.sh sbatch slurm-client

k8s-bin: ## Build kube-apiserver, controller-manager, scheduler, kubectl, etcd, kwok, helm, dex from Go modules
	tools/k8s/build.sh
	tools/k8s/build-dex.sh

node-bin: ## kubelet, containerd, runc, CNI plugins and pause for `gryvia sandbox up --real-node` (as root)
	tools/k8s/build.sh
	tools/k8s/build-node.sh

kueue-bin: ## Build Kueue's controller manager into the same cache (sandbox up --kueue and its tests)
	tools/k8s/build-kueue.sh

stripe-mock-bin: ## Build stripe-mock (Stripe's offline API server) into the same cache (the Stripe test-mode test)
	tools/k8s/build-stripe-mock.sh

storage-bin: ## Build Rancher's local-path-provisioner into the same cache (sandbox up --storage: PVCs bind to real folders)
	tools/k8s/build-local-path.sh

rclone-bin: ## Install Debian's rclone (the copier of dataset staging, GryviaDataset) when missing
	tools/deb.sh rclone rclone

s3-bin: rclone-bin ## Build SeaweedFS (weed: sandbox up --s3, an S3 server on loopback) into the same cache; rclone (Debian's package)
	tools/k8s/build-seaweedfs.sh

k9s-bin: ## Build k9s into the same cache (only the console benchmark uses it; make bench builds it)
	tools/k8s/build-k9s.sh

lint: install ## ruff (lint and format check), mypy, import contracts
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install ## Apply ruff's formatter and safe fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

TIMING := .pytest_cache/timing
# pytest's exit 5 (no test selected, e.g. PYTEST_ARGS naming only unit tests) is not a failure
# of one half when the other half ran.
NONE_OK := || test $$? -eq 5
PURE_WORKERS ?= 2
CLUSTER_WORKERS ?= 3

# `make test` and `make test-all`: the tests without a cluster run in one worker beside the
# cluster tests' three (those mostly wait on their sandboxes, so the CPU is there); the pure
# half's output is printed when both are done, then the time tables of both, the operator's
# starts and pytest's whole wall time.
define both_halves
	@mkdir -p .pytest_cache && rm -f $(TIMING)-*.jsonl .pytest_cache/operator-starts.log
	@start=$$(date +%s); \
	GRYVIA_TEST_TIMING=$(TIMING)-pure.jsonl $(MAKE) --no-print-directory test-pure PURE_WORKERS=1 \
		> .pytest_cache/pure.log 2>&1 & pure=$$!; \
	GRYVIA_TEST_TIMING=$(TIMING)-cluster.jsonl GRYVIA_TEST_STARTS=.pytest_cache/operator-starts.log \
		$(MAKE) --no-print-directory test-cluster; cluster=$$?; \
	wait $$pure; pure_rc=$$?; \
	echo "== the tests without a cluster (beside the cluster tests) =="; cat .pytest_cache/pure.log; \
	$(BIN)/python -m tests.support.timing $(TIMING)-pure.jsonl $(TIMING)-cluster.jsonl; \
	echo "== operator starts, by test and the line that asked =="; \
	cat .pytest_cache/operator-starts.log 2>/dev/null; \
	echo "== pytest wall time, both halves together: $$(( $$(date +%s) - start )) s =="; \
	test $$cluster -eq 0 && test $$pure_rc -eq 0
endef

test: install k8s-bin kueue-bin stripe-mock-bin storage-bin rclone-bin proxy-bin prometheus-bin registry-bin slurm-bin lint ## The whole suite: lint, then the unit and console tests beside the cluster tests
	$(both_halves)

test-all: export GRYVIA_TEST_FULL = 1
test-all: install k8s-bin kueue-bin stripe-mock-bin storage-bin s3-bin proxy-bin prometheus-bin registry-bin slurm-bin node-bin image lint ## `make test` with the long proofs whole (500 key sequences, 10 operator kills, a 500-element array) and the chart on a real node (as root)
	$(both_halves)

test-pure: install ## Unit tests and console tests without a cluster, on both cores (pytest-xdist)
	$(BIN)/pytest -n $(PURE_WORKERS) -m "not integration" $(PYTEST_ARGS) $(NONE_OK)

test-cluster: install ## The tests against a real control plane: three workers, each with its own sandbox and operator
	$(BIN)/pytest -n $(CLUSTER_WORKERS) --dist loadfile --no-loadscope-reorder -m integration $(PYTEST_ARGS) $(NONE_OK)

test-unit: install ## Unit tests only (no cluster)
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

crds: install ## Regenerate the chart's CRDs and the CRD reference from the models
	$(BIN)/python -m gryvia_operator.api.crd --out charts/gryvia/templates/crds --docs docs/reference/crds.md

krew-archive: ## The krew archive of kubectl gryvia in dist/ (reproducible; its sha256 is in plugins/krew/gryvia.yaml)
	@$(BIN)/python plugins/krew/archive.py dist

docs: install crds ## Regenerate every generated document (CLI, CRDs, chart values, keybindings, JSON schemas)
	$(BIN)/python -m gryvia_cli.docgen > docs/cli.md
	$(BIN)/python -c "from gryvia_cli.tui import bindings; print(bindings.render_markdown())" > docs/keybindings.md
	$(BIN)/python charts/gryvia/hack/values_doc.py
	$(BIN)/python -m gryvia.apidoc > docs/reference/python.md
	$(BIN)/python -m gryvia_cli.schemas docs/reference/json

bench: install k8s-bin k9s-bin kueue-bin registry-bin node-bin image ## Benchmarks that print numbers (the console's beside k9s, Kueue's gang start and admission, the operator pod on a real node)
	$(BIN)/python -m tests.bench

bench-large: install k8s-bin ## At 100,000: the console's paged first list (first rows, full list, RSS) and the operator's restart (tens of minutes to fill)
	$(BIN)/python -m tests.bench_tui_pages 100000
	$(BIN)/python -m tests.bench_scale 10000 20000 100000

demo: install k8s-bin kueue-bin storage-bin rclone-bin ## The demo: sandbox, chart, operator, tenants and jobs (Kueue admits them as root), then the console
	$(BIN)/gryvia demo up

demo-check: install k8s-bin kueue-bin storage-bin rclone-bin ## The demo without the console: set up, print and check every state
	$(BIN)/gryvia demo check

demo-down: install ## Stop the demo and everything it started
	$(BIN)/gryvia demo down --yes

clean: ## Remove the virtualenv and caches in the tree (not the Go binary cache)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
