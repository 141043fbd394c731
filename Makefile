# agentproto: every command a contributor or CI needs. `make help` lists them.

# The project-local environment `make dev` and `make bench` create (.venv/, ignored by git).
# When it exists, every target uses its Python; CI installs into the system Python instead.
VENV ?= $(CURDIR)/.venv
PYTHON ?= $(if $(wildcard $(VENV)/bin/python),$(VENV)/bin/python,python3)
CARGO ?= cargo
# Node packages every part needs: the TypeScript SDK's toolchain, the official ACP SDK (interop),
# the benchmark's adapters, the sync channel's real peer (typescript 7.0.2's `tsc --api`) and
# the official A2A JavaScript SDK (interop).
NODE_DIRS := ts interop/official/acp-ts bench/ts interop/tsc-api interop/tsc-api/7.1 interop/official/a2a-js

.PHONY: help dev venv node-deps version-check crates-package-check readme-test python-package-test test lint fmt codegen codegen-test codegen-check pins-check spec-refresh spec-verify vectors vectors-lint vectors-author rust-test python-test python-lint ts-build ts-test ts-lint doc clean bench bench-pg-cost bench-smoke bench-lint

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18

dev: venv node-deps ## Set up for development: pinned Python packages in .venv/, pinned Node packages (no root, no apt-get)

venv: $(VENV)/.installed ## The project-local Python environment: .ci/requirements.txt + python/ (editable)

$(VENV)/.installed: .ci/requirements.txt bench/requirements.txt python/pyproject.toml
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r .ci/requirements.txt
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e './python[grpc]'
	touch $@

node-deps: $(foreach d,$(NODE_DIRS),$(d)/node_modules/.package-lock.json) ## npm ci in every Node package folder (pinned by its package-lock.json)

%/node_modules/.package-lock.json: %/package-lock.json
	npm ci --prefix $* --no-audit --no-fund

test: pins-check spec-verify version-check codegen-test codegen-check vectors-lint lint doc crates-package-check rust-test python-lint python-test python-package-test ts-lint ts-test readme-test bench-smoke ## Every check and every test (what CI runs)

rust-test: ## All Rust tests: unit, integration, doc, property and vector tests
	$(CARGO) test --workspace --all-features

python-test: ts-build ## The Python SDK's tests (pytest), every vector case included; the A2A abuse tests run the TypeScript server too (ts/dist)
	cd python && $(PYTHON) -m pytest -q

python-lint: ## ruff check, ruff format --check and mypy --strict on the Python SDK
	cd python && $(PYTHON) -m ruff check src tests
	cd python && $(PYTHON) -m ruff format --check src tests
	cd python && $(PYTHON) -m mypy --strict src tests

ts-build: ## Build the TypeScript SDK into ts/dist (tsc; needs `npm ci --prefix ts`)
	cd ts && node -e "require('node:fs').rmSync('dist', {recursive: true, force: true})" && ./node_modules/.bin/tsc -p tsconfig.json

ts-test: ts-build ## The TypeScript SDK's tests (node:test), every vector case included; A2A interop against the Rust server (built here)
	$(CARGO) build -p agentproto-cli
	cd ts && PYTHON=$(PYTHON) node --test dist/test/

version-check: ## One version number for the release: Cargo workspace, Python package, npm package
	$(PYTHON) tests/versions.py

crates-package-check: ## cargo package every crate meant for crates.io (metadata, READMEs, versioned path dependencies, the shipped proto)
	$(CARGO) package --workspace --no-verify --allow-dirty --exclude agentproto-interop-peers --exclude agentproto-vector-runner --exclude agentproto-vector-files
	tar tzf target/package/agentproto-a2a-0.2.0.crate | grep -qx 'agentproto-a2a-0.2.0/proto/a2a.proto'

python-package-test: ## Build the Python sdist and wheel, twine check them, install the wheel in a fresh venv and run its README's quick start
	$(PYTHON) python/tests/package_check.py

readme-test: ## The README's quick starts, pasted and run as written (Python, TypeScript, Rust, A2A, inspect)
	$(CARGO) build -p agentproto-cli
	$(PYTHON) -m ruff check tests
	$(PYTHON) -m ruff format --check tests
	$(PYTHON) tests/quickstarts.py

ts-lint: ## tsc --noEmit (strict) over the TypeScript SDK's sources and tests
	cd ts && ./node_modules/.bin/tsc -p tsconfig.json --noEmit

lint: ## rustfmt and clippy (warnings are errors)
	$(CARGO) fmt --all --check
	$(CARGO) fmt --manifest-path interop/official/acp-rust/Cargo.toml --check
	$(CARGO) fmt --manifest-path codegen/schema-export/Cargo.toml --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings
	# agentproto-a2a's features build on their own: a client-only user builds no server or SQLite.
	$(CARGO) clippy -p agentproto-a2a --no-default-features --features client --all-targets -- -D warnings
	$(CARGO) clippy -p agentproto-a2a --no-default-features --features server --all-targets -- -D warnings
	$(CARGO) clippy -p agentproto-a2a --no-default-features --features client,grpc --all-targets -- -D warnings
	$(CARGO) clippy -p agentproto-a2a --no-default-features --features server,grpc --all-targets -- -D warnings
	# agentproto-acp's network transport builds per role: a client-only user builds no server.
	$(CARGO) clippy -p agentproto-acp --lib --features remote-server -- -D warnings
	$(CARGO) clippy -p agentproto-acp --lib --features remote-client -- -D warnings

fmt: ## Format the Rust sources
	$(CARGO) fmt --all

codegen: ## Regenerate protocol code from spec/
	cd codegen && $(PYTHON) -m agentproto_codegen

codegen-test: ## Unit tests of the generator
	cd codegen && $(PYTHON) -m unittest discover -s tests -t .

codegen-check: ## Fail if generated code differs from what spec/ and codegen/ produce
	cd codegen && $(PYTHON) -m agentproto_codegen --check

pins-check: ## Verify every file under spec/ against spec/PINNED.json
	cd codegen && $(PYTHON) -m agentproto_codegen --pins-only

spec-refresh: ## Follow the ACP schema upstream: newest schema crate (or VERSION=x.y.z) -> spec/acp, pins, every language, change report
	cd codegen && $(PYTHON) -m agentproto_codegen.refresh $(if $(VERSION),--version $(VERSION))

spec-verify: ## Check that codegen/schema-export reproduces the pinned ACP schema files from their crate version
	cd codegen && $(PYTHON) -m agentproto_codegen.refresh --verify

vectors: ## Run the conformance vectors through the Rust receive paths (ACP, then A2A)
	$(CARGO) test -p agentproto-vector-runner
	$(CARGO) test -p agentproto-a2a --test vectors

vectors-lint: ## Check the vector files' format and check them against the schema
	$(PYTHON) vectors/tools/author.py --check
	$(PYTHON) vectors/tools/a2a_author.py --check
	$(PYTHON) vectors/lint.py

vectors-author: ## Rewrite the vector files from vectors/tools/author.py and a2a_author.py
	$(PYTHON) vectors/tools/author.py
	$(PYTHON) vectors/tools/a2a_author.py

doc: ## Build the Rust API docs
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --all-features

bench: venv node-deps ## The cross-SDK benchmark, report in bench/results/ (QUICK=1: fewer runs, under 2 minutes once built)
	$(VENV)/bin/python bench/run.py $(if $(QUICK),--quick)

bench-pg-cost: venv ## What a SendMessage costs the PostgreSQL store (round trips, statements, transactions, CPU), sequential and at 50 connections
	$(PYTHON) bench/a2a/pg_cost.py

bench-smoke: ## Every benchmark adapter with tiny counts, its output checked (no timings; dev build)
	$(CARGO) fmt --manifest-path bench/rust/Cargo.toml --all --check
	$(PYTHON) bench/run.py --smoke

bench-lint: ## clippy on the benchmark workspace, ruff on its Python
	$(CARGO) fmt --manifest-path bench/rust/Cargo.toml --all --check
	$(CARGO) clippy --manifest-path bench/rust/Cargo.toml --workspace --all-targets -- -D warnings
	$(PYTHON) -m ruff check bench
	$(PYTHON) -m ruff format --check bench

clean: ## Remove build outputs
	$(CARGO) clean
