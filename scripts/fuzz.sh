#!/usr/bin/env bash
# Builds and runs the libFuzzer harnesses in fuzz/ (clang, ASan + UBSan, the SIMD loops through simd.h's
# native mapping, as the shipped wasm runs them).
#   bash scripts/fuzz.sh [--seconds N | --smoke] [--build-only] [name...]    (npm run fuzz -- ...)
#     name          fuzz_<name>.c, e.g. rope_apply (default: every fuzz/fuzz_*.c)
#     --seconds N   time per harness (default $FUZZ_SECONDS, else 180)
#     --smoke       a few seconds each ($FUZZ_SMOKE_SECONDS, else 5): the `fuzz` phase of scripts/test.sh
#   Environment: PE_FUZZ_STRICT=0 turns off the harnesses' own invariants (finite results of accepted calls
#   and the rest; only the sanitizers judge); FUZZ_ARGS adds libFuzzer flags (e.g. "-runs=1000000", or
#   "-fork=1 -ignore_crashes=1" to keep going past findings and collect them all).
# Convention: each fuzz/fuzz_<name>.c is one harness, linked against every c/src/*.c and the c/model library
# sources (c/model/*.c but the trainer's: any file with a main(), train.c, tasks.c, eval.c). Its committed seeds
# are fuzz/corpus/<name>/ (read, never written); what a run finds goes to build/fuzz/corpus/<name>/ and
# crash inputs to build/fuzz/artifacts/<name>/ (git-ignored). Reproduce one: build/fuzz/fuzz_<name> FILE.
# fuzz_simd_twins*.c link both builds at once (SIMD symbols renamed simd_*) and compare them bit for bit.
# Prints executions and findings per harness; last line "fuzz: N passed, N failed" (N = harnesses).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
shopt -s nullglob

seconds="${FUZZ_SECONDS:-180}" build_only=0 names=()
while (( $# )); do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    --smoke) seconds="${FUZZ_SMOKE_SECONDS:-5}"; shift ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) names+=("${1#fuzz_}"); shift ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds wants a whole number, got '$seconds'" >&2; exit 2; }

bash scripts/ensure-tools.sh clang || exit 1

if (( ${#names[@]} == 0 )); then
  for f in fuzz/fuzz_*.c; do n="$(basename "${f%.c}")"; names+=("${n#fuzz_}"); done
fi
(( ${#names[@]} )) || { echo "fuzz.sh: no harnesses in fuzz/" >&2; exit 1; }
for n in "${names[@]}"; do
  [[ -f "fuzz/fuzz_$n.c" ]] || { echo "fuzz.sh: no harness fuzz/fuzz_$n.c" >&2; exit 2; }
done

# ---- build ------------------------------------------------------------------------------------------
LIB_SOURCES=(c/src/*.c)
for f in c/model/*.c; do
  case "$(basename "$f")" in train.c|tasks.c|eval.c) continue ;; esac
  grep -qE '^int main\(' "$f" && continue
  LIB_SOURCES+=("$f")
done
HEADERS=(c/include/*.h c/src/*.h c/model/*.h fuzz/*.h)
CFLAGS=(-std=c11 -O1 -g -ffp-contract=off -Wall -Wextra -Ic/include -DPE_NATIVE_SIMD=1)
[[ "$(uname -m)" == x86_64 ]] && CFLAGS+=(-msse4.1)
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all)
FP_EXTRA="$(clang --version | head -1) ${CFLAGS[*]} ${SAN[*]}"
fp() { { sha256sum "$@" "${HEADERS[@]}" 2>/dev/null; echo "$FP_EXTRA"; } | sha256sum | cut -c1-64; }

mkdir -p build/fuzz/obj
objs=() rc=0
for src in "${LIB_SOURCES[@]}"; do
  obj="build/fuzz/obj/$(basename "$(dirname "$src")")_$(basename "${src%.c}").o"
  f="$(fp "$src")"
  if [[ ! -f "$obj" || "$(cat "$obj.stamp" 2>/dev/null)" != "$f" ]]; then
    # the library gets coverage edges too (fuzzer-no-link), so the fuzzer steers by the kernels' branches
    clang "${CFLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" || { rc=1; continue; }
    echo "$f" > "$obj.stamp"
  fi
  objs+=("$obj")
done
(( rc == 0 )) || { echo "fuzz.sh: the library did not compile" >&2; exit 1; }
# fuzz_simd_twins*.c compare the SIMD build with the scalar one: they link the scalar objects (no
# PE_NATIVE_SIMD, no auto-vectorisation) and the SIMD objects above with every global symbol they define
# renamed simd_<name>, as build.sh does for tests/c/test_simd_twins*.c.
twin_objs=()
if printf '%s\n' "${names[@]}" | grep -q '^simd_twins'; then
  mkdir -p build/fuzz/obj/scalar build/fuzz/obj/simd-renamed
  for src in "${LIB_SOURCES[@]}"; do
    obj="build/fuzz/obj/scalar/$(basename "$(dirname "$src")")_$(basename "${src%.c}").o"
    f="$(FP_EXTRA+=" scalar"; fp "$src")"
    if [[ ! -f "$obj" || "$(cat "$obj.stamp" 2>/dev/null)" != "$f" ]]; then
      clang "${CFLAGS[@]/-DPE_NATIVE_SIMD=1/-DPE_NATIVE_SIMD=0}" -fno-vectorize -fno-slp-vectorize "${SAN[@]}" \
        -fsanitize=fuzzer-no-link -c "$src" -o "$obj" || { rc=1; continue; }
      echo "$f" > "$obj.stamp"
    fi
    twin_objs+=("$obj")
  done
  renames=build/fuzz/obj/simd-renamed/renames.txt
  nm --defined-only -g "${objs[@]}" | awk 'NF == 3 { print $3 " simd_" $3 }' | sort -u > "$renames"
  for obj in "${objs[@]}"; do
    out="build/fuzz/obj/simd-renamed/$(basename "$obj")"
    objcopy --redefine-syms="$renames" "$obj" "$out" || rc=1
    twin_objs+=("$out")
  done
fi
(( rc == 0 )) || { echo "fuzz.sh: the scalar library for the twins harnesses did not build" >&2; exit 1; }

for n in "${names[@]}"; do
  bin="build/fuzz/fuzz_$n" src="fuzz/fuzz_$n.c"
  link_objs=("${objs[@]}")
  [[ "$n" == simd_twins* ]] && link_objs=("${twin_objs[@]}")
  f="$(fp "$src" "${link_objs[@]}")"
  if [[ ! -x "$bin" || "$(cat "$bin.stamp" 2>/dev/null)" != "$f" ]]; then
    clang "${CFLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer "$src" "${link_objs[@]}" -lm -o "$bin" || { rc=1; continue; }
    echo "$f" > "$bin.stamp"
  fi
done
(( rc == 0 )) || { echo "fuzz.sh: a harness did not build"; echo "fuzz: 0 passed, ${#names[@]} failed"; exit 1; }
echo "fuzz.sh: built ${#names[@]} harness(es) in build/fuzz/ (${#LIB_SOURCES[@]} library sources)"
(( build_only )) && exit 0

# ---- run, one harness at a time -------------------------------------------------------------------------
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
read -r -a extra_args <<< "${FUZZ_ARGS:-}"
passed=0 failed=0 failed_names=()
for n in "${names[@]}"; do
  work="build/fuzz/corpus/$n" arts="build/fuzz/artifacts/$n" log="build/fuzz/logs/$n.log"
  mkdir -p "$work" "$arts" "$(dirname "$log")"
  seeds=(); [[ -d "fuzz/corpus/$n" ]] && seeds=("fuzz/corpus/$n")
  before="$(find "$arts" -type f | wc -l)"
  t0=$SECONDS
  # -max_total_time bounds the run; -timeout flags one input that runs away; -rss_limit_mb one that eats
  # memory (the kernels allocate nothing, so only the harness's exact-size buffers count)
  "build/fuzz/fuzz_$n" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="$arts/" "${extra_args[@]}" "$work" "${seeds[@]}" > "$log" 2>&1
  code=$?
  execs="$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)"
  [[ -n "$execs" ]] || execs="$(grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#')"
  new_arts=$(( $(find "$arts" -type f | wc -l) - before ))
  findings=$new_arts; (( code != 0 && findings == 0 )) && findings=1
  corpus="$(find "$work" -type f | wc -l)"
  line="$(printf 'fuzz_%-16s %10s executions in %4ss, corpus %5s, %d finding(s)' "$n" "${execs:-?}" \
    "$((SECONDS - t0))" "$corpus" "$findings")"
  if (( findings == 0 )); then
    passed=$((passed + 1)); echo "ok   $line"
  else
    failed=$((failed + 1)); failed_names+=("fuzz_$n"); echo "FAIL $line (exit $code; log $log)"
    grep -E '^(fuzz: invariant|SUMMARY|==[0-9]+==ERROR)|runtime error' "$log" | head -n 3 | sed 's/^/     /'
    ls -t "$arts" | head -n "$(( new_arts < 3 ? new_arts : 3 ))" | sed "s|^|     input: $arts/|"
    (( new_arts > 3 )) && echo "     ... and $((new_arts - 3)) more inputs in $arts/"
  fi
done
(( failed )) && echo "failed: ${failed_names[*]}"
echo "fuzz: $passed passed, $failed failed"
(( failed == 0 ))
