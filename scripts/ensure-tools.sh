#!/usr/bin/env bash
# Makes sure the given tools exist, installing their Debian packages with apt-get when they do not.
#   bash scripts/ensure-tools.sh emcc gcc chromium clang clang-format
# Needs root to install; otherwise prints exactly what to install and exits non-zero.
set -euo pipefail

# clang: the fuzzers (scripts/fuzz.sh) need libFuzzer's runtime too, which Debian packages separately.
# chromium: with a CJK font (5 MB installed), so the Chinese pages of the browser tests' screenshots show glyphs.
declare -A PKG=([emcc]="emscripten" [gcc]="gcc libc6-dev" [chromium]="chromium fonts-wqy-microhei" [clang]="clang libclang-rt-dev" [clang-format]="clang-format")
declare -A BIN=([emcc]="emcc" [gcc]="gcc" [chromium]="/usr/bin/chromium" [clang]="clang" [clang-format]="clang-format")

present() {
  command -v "${BIN[$1]}" >/dev/null 2>&1 || return 1
  if [[ "$1" == clang ]]; then
    [[ -f "$(clang --print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-$(uname -m).a" ]] || return 1
  fi
  if [[ "$1" == chromium ]]; then
    [[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]] || return 1
  fi
}

missing=()
for tool in "$@"; do
  [[ -n "${PKG[$tool]:-}" ]] || { echo "ensure-tools: unknown tool '$tool'" >&2; exit 2; }
  present "$tool" || missing+=(${PKG[$tool]})
done
(( ${#missing[@]} == 0 )) && exit 0

if [[ "$(id -u)" != 0 ]]; then
  echo "posenc needs these Debian packages: ${missing[*]}" >&2
  echo "install them as root, then run this again:" >&2
  echo "    apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "ensure-tools: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
for tool in "$@"; do
  present "$tool" || { echo "ensure-tools: $tool still missing after installing ${PKG[$tool]}" >&2; exit 1; }
done
