#!/usr/bin/env bash
# Runs every test, phase by phase, after build.sh: lint (scripts/lint.sh), typecheck (scripts/typecheck.sh),
# node --test over tests/js, tests/browser, tests/pack, the native C tests, then a few seconds of each C fuzzer
# (scripts/fuzz.sh --smoke). Every phase runs even when an earlier one fails; the summary gives counts and times.
# The build the phases test is brought up to date first (build.sh skips what is unchanged, ~10 s), so a stale
# wasm module or native binary is never what a phase tests.
#   bash scripts/test.sh [lint|typecheck|js|browser|pack|c|fuzz]...     (default: all phases)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

(( $# )) || set -- lint typecheck js browser pack c fuzz
need_wasm=0 need_native=0
for phase in "$@"; do
  case "$phase" in
    js|browser|pack) need_wasm=1 ;;
    c) need_native=1 ;;
    lint|typecheck|fuzz) ;;
    *) echo "test.sh: unknown phase '$phase' (lint typecheck js browser pack c fuzz)" >&2; exit 2 ;;
  esac
done
if (( need_wasm && need_native )); then bash build.sh all || exit 1
elif (( need_wasm )); then bash build.sh wasm || exit 1
elif (( need_native )); then bash build.sh native || exit 1
fi

mkdir -p test-results
summary=() status=0 total_pass=0 total_fail=0

for phase in "$@"; do
  log="test-results/$phase.log"
  t0=$SECONDS
  echo "=== $phase"
  if [[ "$phase" == c ]]; then
    bash scripts/run-c-tests.sh 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
    counts="$(tail -n 1 "$log" | sed 's/^c: //')"
  elif [[ "$phase" == fuzz ]]; then
    bash scripts/fuzz.sh --smoke 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
    counts="$(tail -n 1 "$log" | sed 's/^fuzz: //')"
  elif [[ "$phase" == lint || "$phase" == typecheck ]]; then
    bash "scripts/$phase.sh" 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
    counts="$(tail -n 1 "$log" | sed "s/^$phase: //")"
  else
    mapfile -t files < <(find "tests/$phase" -type f \( -name '*.test.js' -o -name '*.test.mjs' \) 2>/dev/null | sort)
    if (( ${#files[@]} == 0 )); then
      echo "(no test files in tests/$phase)"; rc=0; counts="no tests"
    else
      node --test --test-reporter=spec "${files[@]}" 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
      pass="$(grep -E '^ℹ pass [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+')"
      fail="$(grep -E '^ℹ fail [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+')"
      counts="${pass:-?} passed, ${fail:-?} failed"
    fi
  fi
  (( rc == 0 )) || status=1
  if [[ "$counts" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    (( total_pass += BASH_REMATCH[1], total_fail += BASH_REMATCH[2] ))
  elif [[ "$counts" != "no tests" ]]; then
    (( total_fail += 1 ))  # a phase whose counts could not be read failed to report
  fi
  summary+=("$(printf '%-10s %-28s %4ss%s' "$phase:" "$counts" "$((SECONDS - t0))" "$( (( rc == 0 )) || echo '   FAILED')")")
done

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
# the closing line CI reads: every test of every phase (C counts test binaries, fuzz counts harnesses)
echo "total: $total_pass passed, $total_fail failed"
exit "$status"
