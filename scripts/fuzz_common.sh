# scripts/fuzz_common.sh — the fuzzing that scripts/fuzz (long runs) and
# scripts/test (the smoke run) share: the build, the harness list, the
# runs and their report. Sourced after scripts/setup.sh; not run on its
# own.
#
# The harnesses are the lines of tests/fuzz/harnesses ("NAME MAX_LEN"):
# tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME/. A new harness
# is one line there and its file; nothing here names one.

ATTN_FUZZ=$ATTN_ROOT/build-fuzz

# The harness names, in the order of the list.
attn_fuzz_harnesses() {
    sed -e 's/#.*//' "$ATTN_ROOT/tests/fuzz/harnesses" | awk 'NF { print $1 }'
}

# The MAX_LEN of harness $1.
attn_fuzz_max_len() {
    sed -e 's/#.*//' "$ATTN_ROOT/tests/fuzz/harnesses" | awk -v h="$1" '$1 == h { print $2 }'
}

# Build the libFuzzer programs in build-fuzz/ (clang, AddressSanitizer,
# UndefinedBehaviorSanitizer, portable code). Exits 1 when the build fails
# (run it in a subshell to go on).
attn_fuzz_build() {
    attn_need_packages $ATTN_PACKAGES clang libclang-rt-14-dev time
    # -Wno-pass-failed: the sanitizers' instrumentation keeps clang from
    # vectorising the '#pragma omp simd' loops, which it reports as a warning
    CC=clang attn_build build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        "-Dc_args=-fsanitize=fuzzer-no-link -Wno-pass-failed" -Dnative=false \
        --buildtype=debugoptimized
}

# attn_fuzz_run MODE SECONDS [NAME…]: run the harnesses (default: all),
# two at a time, SECONDS each, and print one line per harness. MODE long
# fuzzes from the persistent corpus build-fuzz/corpus/NAME (it grows);
# MODE smoke from a fresh copy of the seeds (build-fuzz/smoke/NAME), so
# that the suite's run does not depend on earlier ones. Either way the
# seeds are tests/fuzz/corpus/NAME and what make_dict.py generates, and
# the dictionary build-fuzz/dicts/NAME.dict. Findings (crashes, leaks,
# sanitizer reports, timeouts, out-of-memory) go to build-fuzz/artifacts/.
# Sets ATTN_FUZZ_PASSED and ATTN_FUZZ_FAILED (harnesses with nothing
# found / with something found); returns 1 when anything was found.
attn_fuzz_run() {
    local mode=$1 secs=$2 F=$ATTN_FUZZ h
    shift 2
    local names=("$@")
    [ ${#names[@]} -gt 0 ] || mapfile -t names < <(attn_fuzz_harnesses)
    mkdir -p "$F/artifacts" "$F/logs"
    ATTN_FUZZ_PASSED=0
    ATTN_FUZZ_FAILED=0
    if ! python3 "$ATTN_ROOT/tests/fuzz/make_dict.py" "$F/attn" "$ATTN_ROOT/tests/fuzz" \
        "$F/dicts" "${names[@]}"; then
        echo "tests/fuzz/make_dict.py failed" >&2
        ATTN_FUZZ_FAILED=${#names[@]}
        return 1
    fi
    local i status=0
    for ((i = 0; i < ${#names[@]}; i += 2)); do
        local pair=("${names[@]:i:2}") pids=()
        for h in "${pair[@]}"; do
            if [ ! -x "$F/tests/fuzz/fuzz_$h" ] || [ -z "$(attn_fuzz_max_len "$h")" ]; then
                echo "fuzz_$h: no such harness (see tests/fuzz/harnesses)" >&2
                return 2
            fi
            attn_fuzz_start "$mode" "$secs" "$h" &
            pids+=($!)
        done
        local j=0
        for h in "${pair[@]}"; do
            local rc=0
            wait "${pids[$j]}" || rc=$?
            j=$((j + 1))
            if attn_fuzz_report "$h" "$secs" "$rc"; then
                ATTN_FUZZ_PASSED=$((ATTN_FUZZ_PASSED + 1))
            else
                ATTN_FUZZ_FAILED=$((ATTN_FUZZ_FAILED + 1))
                status=1
            fi
        done
    done
    return $status
}

# One harness's run (in the background): its corpus, then libFuzzer.
attn_fuzz_start() {
    local mode=$1 secs=$2 h=$3 F=$ATTN_FUZZ corpus
    if [ "$mode" = smoke ]; then
        corpus=$F/smoke/$h
        rm -rf "$corpus"
    else
        corpus=$F/corpus/$h
    fi
    mkdir -p "$corpus"
    cp -n "$ATTN_ROOT/tests/fuzz/corpus/$h/"* "$corpus/" 2>/dev/null || true
    if [ -d "$F/dicts/seeds/$h" ]; then
        cp "$F/dicts/seeds/$h/"* "$corpus/" 2>/dev/null || true
    fi
    rm -rf "$F/logs/$h.log" "$F/logs/$h.cpu" "$F/logs/$h"
    mkdir -p "$F/logs/$h"
    touch "$F/logs/$h.log.start"
    # -fork=1 -ignore_*: one process runs the inputs, a crash or a timeout
    # is saved and fuzzing goes on, so one run collects them all; the
    # commands' own error lines are silenced (-close_fd_mask=3); the fork
    # mode's child logs go to logs/NAME/
    cd "$F/logs/$h" &&
        ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 OMP_NUM_THREADS=1 \
            /usr/bin/time -f "%U %S" -o "$F/logs/$h.cpu" \
            "$F/tests/fuzz/fuzz_$h" "$corpus" -dict="$F/dicts/$h.dict" \
            -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
            -max_len="$(attn_fuzz_max_len "$h")" -close_fd_mask=3 \
            -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
            -artifact_prefix="$F/artifacts/$h-" >"$F/logs/$h.log" 2>&1
}

# The line of harness $1 after a run of $2 seconds that exited $3; 0 when
# nothing was found.
attn_fuzz_report() {
    local h=$1 secs=$2 rc=$3 F=$ATTN_FUZZ log
    log=$F/logs/$h.log
    # fork mode's progress lines: "#EXECUTIONS: cov: N ft: … crash: C …"
    local execs cov corpus found cpu
    execs=$(sed -n 's/^#\([0-9]*\): cov.*/\1/p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
    corpus=$(find "$F/corpus/$h" "$F/smoke/$h" -type f -newer "$log.start" 2>/dev/null | wc -l)
    found=$(find "$F/artifacts" -name "$h-*" -newer "$log.start" | wc -l)
    # user + system seconds of the fuzzer and its fork-mode children
    cpu=$(awk '{ printf "%.0f CPU s = %.1f min", $1 + $2, ($1 + $2) / 60 }' \
        "$F/logs/$h.cpu" 2>/dev/null || true)
    [ "$found" -eq 0 ] || rc=${rc/#0/1}
    if [ "$rc" -eq 0 ]; then
        echo "fuzz_$h: ${execs:-?} executions in $secs s (${cpu:-? CPU s}), $cov," \
            "$corpus new inputs, nothing found"
        return 0
    fi
    echo "fuzz_$h: FOUND something in ${execs:-?} executions (exit $rc):"
    grep -E '(ERROR: |SUMMARY: |runtime error: |ALARM: )' "$log" |
        sort | uniq -c | sort -rn | head -10 | sed 's/^/  /'
    echo "  $found input(s) saved, e.g.:"
    find "$F/artifacts" -name "$h-*" -newer "$log.start" | head -3 | sed 's/^/    /'
    echo "  log: $log"
    return 1
}
