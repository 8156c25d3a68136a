#!/usr/bin/env bash
# Runs every native C test binary built by `build.sh native`, from the repo root so tests find tests/golden:
# build/native/scalar/test_* (the scalar build), build/native/simd/test_* (the SIMD build through simd.h's
# native mapping) and build/native/twins/test_* (both builds in one binary, compared bit for bit), then
# header_example (scripts/header-example.mjs: the usage example at the top of c/include/posenc.h, compiled with
# -Werror and run). Each prints its own results and exits non-zero on failure.
# Last line: "c: N passed, N failed" (N = binaries, each variant counted, + header_example).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
shopt -s nullglob

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

passed=0 failed=0 failed_names=()
run_one() {  # name command...
  local name="$1" t0 dt rc; shift
  echo "--- $name"
  t0=$(date +%s.%N)
  if "$@"; then rc=0; else rc=$?; fi
  dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  if (( rc == 0 )); then
    passed=$((passed + 1)); echo "ok   $name (${dt}s)"
  else
    failed=$((failed + 1)); failed_names+=("$name"); echo "FAIL $name (exit $rc, ${dt}s)"
  fi
}
for bin in build/native/{scalar,simd,twins}/test_*; do
  [[ -x "$bin" && "$bin" != *.stamp ]] || continue
  run_one "${bin#build/native/}" "$bin"
done
run_one header_example node scripts/header-example.mjs
(( failed )) && echo "failed: ${failed_names[*]}"
echo "c: $passed passed, $failed failed"
(( failed == 0 ))
