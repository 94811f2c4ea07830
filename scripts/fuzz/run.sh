#!/usr/bin/env bash
# Coverage-guided fuzzing of phikit's parsers with libFuzzer + ASan. See scripts/fuzz/README.md.
#
#   scripts/fuzz/run.sh build [target...]           # build all targets, or the ones named
#   scripts/fuzz/run.sh relink [target...]          # only the harness, on the last build's objects
#   scripts/fuzz/run.sh fuzz <target> [seconds]     # fuzz one target (default 600 s) on one core
#   scripts/fuzz/run.sh regress [target...]         # replay seeds + regressions once (CI-style)
#   scripts/fuzz/run.sh repro <target> <file>       # run one input
#   scripts/fuzz/run.sh minimize <target> <crash>   # minimize a crashing input
#
# targets: safetensors, json, config, http, gguf, jinja, regex, tokenizer
# Everything generated (objects, binaries, corpora, crash files, logs) goes under
# $PHIKIT_FUZZ_OUT (default /tmp/phikit-fuzz), never into the repo.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="${PHIKIT_FUZZ_OUT:-/tmp/phikit-fuzz}"
BUILD="$OUT/build"
TOOLCHAIN_BIN="${PHIKIT_FUZZ_TOOLCHAIN:-/opt/swift/usr/bin}"
SWIFTC="$TOOLCHAIN_BIN/swiftc"
CLANG="$TOOLCHAIN_BIN/clang"
# Builds at nice 10; fuzzing campaigns at nice 19 (PHIKIT_FUZZ_NICE): they run for hours beside
# everyone else's builds.
NICE=(nice -n 10)
FUZZ_NICE=(nice -n "${PHIKIT_FUZZ_NICE:-19}")
TARGETS=(safetensors json config http gguf jinja regex tokenizer)
# Targets over PhiText (the chat template interpreter and the tokenizer) link it as well.
TEXT_TARGETS=" jinja regex tokenizer "

# Resource limits that define the properties: no unbounded allocation, no hang. -timeout is
# wall-clock, so it is only the backstop for a real hang (a niced fuzzer on a loaded machine
# can wait seconds for a core); the per-input limit is CPU time, checked by the harness.
LIMITS=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=60)

die() { echo "run.sh: $*" >&2; exit 2; }

check_target() {
    [[ " ${TARGETS[*]} " == *" $1 "* ]] || die "unknown target '$1' (${TARGETS[*]})"
}

define_for() {
    case "$1" in
        safetensors) echo FUZZ_SAFETENSORS ;;
        json) echo FUZZ_JSON ;;
        config) echo FUZZ_CONFIG ;;
        http) echo FUZZ_HTTP ;;
        gguf) echo FUZZ_GGUF ;;
        jinja) echo FUZZ_JINJA ;;
        regex) echo FUZZ_REGEX ;;
        tokenizer) echo FUZZ_TOKENIZER ;;
    esac
}

max_len_for() {
    case "$1" in
        safetensors) echo 8192 ;;
        json) echo 4096 ;;
        config) echo 8192 ;;
        http) echo 4096 ;;
        gguf) echo 8192 ;;
        jinja) echo 4096 ;;
        regex) echo 1024 ;;
        tokenizer) echo 32768 ;;
    esac
}

# CPU milliseconds one input may take (PHIKIT_FUZZ_CPU_MS for the harness). The regex limit
# is the real budget scaled to the target's inputs: at most 1 KB of text gets 250k + 64 steps a
# byte (RegexBudget.steps), a few ms even under ASan, so 500 ms means the budget failed to stop
# a search. Jinja's budget is per render (output size, iterations), which under ASan may take
# a good fraction of a second for a template that hits it.
cpu_ms_for() {
    case "$1" in
        regex) echo 500 ;;
        jinja|tokenizer) echo 3000 ;;
        *) echo 2000 ;;
    esac
}

FORMATS_C=(affine_quant half_convert pk_mxfp_quant sha1 sha256 tensor_stats)

# CKernels and PhiFormats (the safetensors, json and config targets link them).
build_formats() {
    mkdir -p "$BUILD/ckernels" "$BUILD/modules"
    # CKernels (PhiFormats imports it): instrumented for coverage + ASan, not linked with libFuzzer's main.
    cat > "$BUILD/modules/module.modulemap" <<EOF
module CKernels {
    umbrella "$REPO/Sources/CKernels/include"
    export *
}
EOF
    FORMATS_OBJS=()
    # FORMATS_C: only the C files PhiFormats calls into (hashes, half floats, quantization, statistics):
    # the matvec kernels are never reached from a parser and take many minutes under ASan. A
    # new call from PhiFormats into another file shows as an undefined symbol at link time.
    for name in "${FORMATS_C[@]}"; do
        local c="$REPO/Sources/CKernels/$name.c" o="$BUILD/ckernels/$name.o"
        "${NICE[@]}" "$CLANG" -c -O2 -g -fsanitize=fuzzer-no-link,address \
            -I "$REPO/Sources/CKernels/include" "$c" -o "$o"
        FORMATS_OBJS+=("$o")
    done

    # PhiFormats as its own module, so the harness sees only its public API (its files live in
    # subfolders too, e.g. Quantization/).
    local formats=()
    while IFS= read -r -d '' f; do formats+=("$f"); done \
        < <(find "$REPO/Sources/PhiFormats" -name '*.swift' -print0 | sort -z)
    "${NICE[@]}" "$SWIFTC" -module-name PhiFormats -parse-as-library -swift-version 6 \
        -wmo -num-threads 0 -O -g -sanitize=fuzzer,address \
        -I "$BUILD/modules" \
        -emit-module -emit-module-path "$BUILD/modules/PhiFormats.swiftmodule" \
        -c "${formats[@]}" -o "$BUILD/PhiFormats.o"
    FORMATS_OBJS+=("$BUILD/PhiFormats.o")
}

# PhiText (tokenizer, chat templates) on top of PhiFormats, for the text targets.
build_text() {
    local text=()
    while IFS= read -r -d '' f; do text+=("$f"); done \
        < <(find "$REPO/Sources/PhiText" -name '*.swift' -print0 | sort -z)
    "${NICE[@]}" "$SWIFTC" -module-name PhiText -parse-as-library -swift-version 6 \
        -wmo -num-threads 0 -O -g -sanitize=fuzzer,address \
        -I "$BUILD/modules" \
        -emit-module -emit-module-path "$BUILD/modules/PhiText.swiftmodule" \
        -c "${text[@]}" -o "$BUILD/PhiText.o"
}

# PhiServer's request parser: only its standard-library-only files, as module PhiServer (the
# http target needs nothing else, so it builds in seconds).
build_http_parser() {
    mkdir -p "$BUILD/modules"
    local http="$REPO/Sources/PhiServer/HTTP"
    "${NICE[@]}" "$SWIFTC" -module-name PhiServer -parse-as-library -swift-version 6 \
        -wmo -num-threads 0 -O -g -sanitize=fuzzer,address \
        -emit-module -emit-module-path "$BUILD/modules/PhiServer.swiftmodule" \
        -c "$http/HTTPRequest.swift" "$http/HTTPRequestParser.swift" \
        "$http/HTTPRequestParser+Semantics.swift" -o "$BUILD/PhiServerParser.o"
}

# build [target...]: all targets by default.
build() {
    local targets=("$@"); [[ ${#targets[@]} -gt 0 ]] || targets=("${TARGETS[@]}")
    echo "== building ${targets[*]} into $BUILD"
    local formats_built=$RELINK text_built=$RELINK
    for t in "${targets[@]}"; do
        check_target "$t"
        local libs
        if [[ "$t" == http ]]; then
            build_http_parser
            libs=("$BUILD/PhiServerParser.o")
        else
            [[ $formats_built -eq 1 ]] || { build_formats; formats_built=1; }
            [[ $RELINK -eq 0 ]] || FORMATS_OBJS=("${FORMATS_C[@]/#/$BUILD/ckernels/}")
            [[ $RELINK -eq 0 ]] || FORMATS_OBJS=("${FORMATS_OBJS[@]/%/.o}" "$BUILD/PhiFormats.o")
            libs=("${FORMATS_OBJS[@]}")
            if [[ "$TEXT_TARGETS" == *" $t "* ]]; then
                [[ $text_built -eq 1 ]] || { build_text; text_built=1; }
                libs=("$BUILD/PhiText.o" "${libs[@]}")
            fi
        fi
        "${NICE[@]}" "$SWIFTC" -module-name PhiFuzz -parse-as-library -swift-version 6 \
            -O -g -sanitize=fuzzer,address -D "$(define_for "$t")" \
            -use-ld=lld -I "$BUILD/modules" "$HERE/FuzzHarness.swift" \
            "${libs[@]}" -o "$BUILD/fuzz-$t"
        echo "   $BUILD/fuzz-$t"
    done
}

ensure_built() { [[ -x "$BUILD/fuzz-$1" ]] || RELINK=0 build "$1"; }

# Seeds are read-only inputs from the repo; the working corpus lives in $OUT. Regressions
# (inputs that once crashed) are replayed by `regress`, not fed to `fuzz`: while a bug is
# open, a crashing seed would stop libFuzzer before it starts.
fuzz() {
    local t="$1" secs="${2:-600}"
    check_target "$t"; ensure_built "$t"
    local corpus="$OUT/corpus/$t" artifacts="$OUT/artifacts/$t" logs="$OUT/logs/$t"
    mkdir -p "$corpus" "$artifacts" "$logs"
    echo "== fuzzing $t for ${secs}s (corpus $corpus, crashes $artifacts/, log $logs/fuzz-0.log)"
    # -jobs=1 -workers=1: one fuzzing process on one core; libFuzzer writes its output to
    # fuzz-0.log in the current directory.
    local rc=0 dict=()
    [[ -f "$HERE/$t.dict" ]] && dict=(-dict="$HERE/$t.dict")
    ( cd "$logs" && PHIKIT_FUZZ_REPO="$REPO" PHIKIT_FUZZ_CPU_MS="$(cpu_ms_for "$t")" \
        "${FUZZ_NICE[@]}" "$BUILD/fuzz-$t" \
        -jobs=1 -workers=1 -max_total_time="$secs" -max_len="$(max_len_for "$t")" \
        "${LIMITS[@]}" -print_final_stats=1 \
        "${dict[@]}" -artifact_prefix="$artifacts/" \
        "$corpus" "$HERE/seeds/$t" ) || rc=$?
    grep -E '^#[0-9]+' "$logs/fuzz-0.log" | tail -n 1 || true
    grep -E '^(stat::|SUMMARY|==[0-9]+==ERROR|\*\*\* Swift runtime failure|Fatal error|fuzz property)' "$logs/fuzz-0.log" || true
    echo "corpus: $(ls "$corpus" | wc -l) files, $(du -sh "$corpus" | cut -f1)"
    ls "$artifacts" 2>/dev/null | sed 's/^/artifact: /' || true
    return "$rc"
}

regress() {
    local targets=("$@"); [[ ${#targets[@]} -gt 0 ]] || targets=("${TARGETS[@]}")
    local failed=0
    for t in "${targets[@]}"; do
        check_target "$t"; ensure_built "$t"
        local n=0 bad=0
        while IFS= read -r -d '' f; do
            n=$((n + 1))
            # One process per input so that every failing input is reported.
            if ! PHIKIT_FUZZ_REPO="$REPO" PHIKIT_FUZZ_CPU_MS="$(cpu_ms_for "$t")" \
                SWIFT_BACKTRACE=enable=no "$BUILD/fuzz-$t" "${LIMITS[@]}" "$f" >"$OUT/regress.log" 2>&1; then
                bad=$((bad + 1))
                echo "FAIL $t: ${f#"$REPO"/}"
                { grep -E 'Swift runtime failure|Fatal error|fuzz property|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' \
                    "$OUT/regress.log" || true; } | head -n 3 | sed 's/^/    /'
            fi
        done < <(find "$HERE/seeds/$t" "$HERE/regressions/$t" -type f -print0 2>/dev/null | sort -z)
        echo "== $t: $n inputs, $bad failing"
        failed=$((failed + bad))
    done
    [[ $failed -eq 0 ]]
}

case "${1:-}" in
    build) shift; RELINK=0 build "$@" ;;
    relink) shift; RELINK=1 build "$@" ;;
    fuzz) [[ $# -ge 2 ]] || die "usage: run.sh fuzz <target> [seconds]"; fuzz "$2" "${3:-600}" ;;
    regress) shift; regress "$@" ;;
    repro)
        [[ $# -eq 3 ]] || die "usage: run.sh repro <target> <file>"
        check_target "$2"; ensure_built "$2"
        PHIKIT_FUZZ_REPO="$REPO" PHIKIT_FUZZ_CPU_MS="$(cpu_ms_for "$2")" \
            "$BUILD/fuzz-$2" "${LIMITS[@]}" "$3" ;;
    minimize)
        [[ $# -eq 3 ]] || die "usage: run.sh minimize <target> <crash-file>"
        check_target "$2"; ensure_built "$2"
        PHIKIT_FUZZ_REPO="$REPO" PHIKIT_FUZZ_CPU_MS="$(cpu_ms_for "$2")" \
            "${NICE[@]}" "$BUILD/fuzz-$2" "${LIMITS[@]}" -minimize_crash=1 -max_total_time=120 \
            -exact_artifact_path="$3.min" "$3"
        echo "minimized: $3.min ($(wc -c < "$3.min") bytes)" ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
esac
