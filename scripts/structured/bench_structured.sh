#!/bin/sh
# make bench-structured: structured output's mask cost per token on Phi-4-mini's 200,064-token
# tokenizer over the 60-schema suite, phikit and the references (llguidance, xgrammar) side by
# side on the same token paths, then the validity check of sampled answers, then the extraction
# benchmark (constrained against unconstrained wall time) on SmolLM2-135M-Instruct.
#
#   TOKENIZER=path/to/tokenizer.json [MODEL=dir] [ROUNDS=2] [DECODE_STEP_MS=67] \
#       scripts/structured/bench_structured.sh
set -eu
cd "$(dirname "$0")/../.."
TOKENIZER=${TOKENIZER:-$(scripts/fixtures.sh)/_derived/microsoft--Phi-4-mini-instruct/tokenizer.json}
SUITE=Tests/PhiEngineTests/Fixtures/structured/schemas.json
PATHS=$(mktemp)
trap 'rm -f "$PATHS"' EXIT
swift build -c release --product structured-bench
python3 -m pip install -q llguidance jsonschema rfc3339-validator
python3 -m pip install -q xgrammar transformers || echo "xgrammar not installed: skipped"
# Engines alternated, ROUNDS times (the machine is shared: compare within a round).
for round in $(seq "${ROUNDS:-2}"); do
    echo "== round $round (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
    .build/release/structured-bench "$TOKENIZER" "$SUITE" --paths-out "$PATHS" > /dev/null
    python3 scripts/structured/bench_references.py "$TOKENIZER" "$PATHS"
done
python3 scripts/structured/check_outputs.py "$TOKENIZER" 8
# Forced text fed as blocks: the extraction benchmark on the real instruct model, when it was
# fetched (scripts/smollm2/fetch_and_convert.sh).
MODEL=${MODEL:-$(scripts/smollm2/path.sh)}
if [ -f "$MODEL/config.json" ]; then
    swift build -c release --product phikit
    python3 scripts/structured/bench_extract.py "$MODEL"
else
    echo "extraction benchmark skipped: no model at $MODEL (scripts/smollm2/fetch_and_convert.sh)"
fi
