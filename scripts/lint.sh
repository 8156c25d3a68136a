#!/usr/bin/env bash
# npm run lint: ESLint over the JS (eslint.config.js: web/, tests/, bench/, scripts/, fuzz/) and clang-format 14 over
# the C in c/, tests/c/, fuzz/ and bench/ (.clang-format), checking only (--dry-run --Werror): nothing is rewritten.
#   bash scripts/lint.sh [js|c]...      (default: both)
# To fix: npx eslint --fix <file>  /  clang-format -i <file>  (see CONTRIBUTING.md).
# Last line: "lint: N passed, N failed" (N = checks). Exits non-zero if any check failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

(( $# )) || set -- js c
passed=0 failed=0 failed_names=()
result() {  # name rc
  if (( $2 == 0 )); then passed=$((passed + 1)); echo "ok   $1"
  else failed=$((failed + 1)); failed_names+=("$1"); echo "FAIL $1"; fi
}

for check in "$@"; do
  case "$check" in
    js)
      echo "--- eslint (web/ tests/ bench/ scripts/ fuzz/)"
      if [[ ! -x node_modules/.bin/eslint ]]; then
        echo "lint: node_modules/.bin/eslint is missing: run bash scripts/setup.sh (npm ci)"; result eslint 1; continue
      fi
      dirs=(); for d in web tests bench scripts fuzz; do [[ -d "$d" ]] && dirs+=("$d"); done
      node_modules/.bin/eslint --max-warnings 0 "${dirs[@]}" eslint.config.js; result eslint $?
      ;;
    c)
      echo "--- clang-format (c/ tests/c/ fuzz/ bench/)"
      bash scripts/ensure-tools.sh clang-format || { result clang-format 1; continue; }
      version="$(clang-format --version | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -1)"
      [[ "${version%%.*}" == 14 ]] || echo "lint: note: .clang-format is checked with clang-format 14; this is $version, which may lay code out differently"
      mapfile -t files < <(git ls-files -co --exclude-standard 'c/*.c' 'c/*.h' 'tests/c/*.c' 'tests/c/*.h' 'fuzz/*.c' 'fuzz/*.h' 'bench/*.c' 2>/dev/null | sort)
      (( ${#files[@]} )) || mapfile -t files < <(find c tests/c fuzz bench -name '*.[ch]' | sort)
      bad=0
      for f in "${files[@]}"; do
        [[ -f "$f" ]] || continue
        out="$(clang-format --dry-run --Werror "$f" 2>&1)" && continue
        bad=$((bad + 1))
        printf '  %-40s %4d change(s) to match .clang-format\n' "$f" "$(grep -c 'clang-format-violations' <<<"$out")"
      done
      if (( bad )); then
        echo "lint: $bad of ${#files[@]} C files are not in .clang-format's layout."
        echo "      See the changes: clang-format <file> | diff <file> -    Apply them: clang-format -i <file>"
        result clang-format 1
      else
        echo "lint: all ${#files[@]} C files match .clang-format"; result clang-format 0
      fi
      ;;
    *) echo "usage: lint.sh [js|c]..." >&2; exit 2 ;;
  esac
done
(( failed )) && echo "failed: ${failed_names[*]}"
echo "lint: $passed passed, $failed failed"
(( failed == 0 ))
