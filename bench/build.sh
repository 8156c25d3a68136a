#!/usr/bin/env bash
# Builds the benchmark's own binaries (not posenc's; that is ../build.sh):
#   bench/build/limit.wasm     bench/wasm/limit.c: in-place SIMD pass, memcpy, fill; limit_strided.c: the in-place
#                              pass over strided views (bench/strided.mjs); bench/wasm/rotation.c: the
#                              hand-written SIMD128 rotation ("limit: rotation") (emcc, posenc's SIMD flags)
#   bench/build/unfused.wasm   bench/wasm/unfused.c + c/src/*.c: the unfused attention pipeline (same flags)
#   bench/build/posenc-names.simd.wasm  c/src/*.c with build.sh's SIMD flags and function names (bench/v8-code.mjs)
#   bench/build/bench_native   bench/native/bench_native.c + c/src/*.c: gcc -O3 -march=native -DPE_NATIVE_SIMD=1
# Idempotent: each output is rebuilt only when its sources, posenc's headers or the flags change.
# A failed step is reported and skipped (run.mjs leaves that contender out); the exit status is 0 unless
# nothing could be built.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mkdir -p bench/build
export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"  # emcc 3.1.6's JS tools need Debian's acorn
shopt -s nullglob
POSENC_SOURCES=(c/src/*.c)
HEADERS=(c/include/*.h c/src/*.h)

fp() { { sha256sum "$@" 2>/dev/null; printf '%s\n' "$FLAGS"; } | sha256sum | cut -c1-64; }
built=0
failed=0

step() { # step OUTPUT "flags string" -- sources... ; runs "$CMD"
  local out="$1"; shift
  local f; f="$(fp "$@" "${HEADERS[@]}")"
  if [[ -f "$out" && "$(cat "$out.stamp" 2>/dev/null)" == "$f" ]]; then built=$((built + 1)); return 0; fi
  rm -f "$out" "$out.stamp"
  if eval "$CMD"; then echo "$f" > "$out.stamp"; echo "bench/build.sh: built $out"; built=$((built + 1))
  else echo "bench/build.sh: could not build $out (its contender is left out)" >&2; failed=$((failed + 1)); fi
}

if command -v emcc >/dev/null 2>&1; then
  EMVER="$(emcc --version 2>/dev/null | head -1)"
  em_root="$(dirname "$(readlink -f "$(command -v emcc)")")"
  if grep -q '^var STACK_SIZE\b' "$em_root/src/settings.js" 2>/dev/null; then stack=STACK_SIZE; else stack=TOTAL_STACK; fi
  # posenc's SIMD build flags (build.sh), plus bulk memory so memcpy is wasm's memory.copy
  EMFLAGS="-std=c11 -Ic/include -ffp-contract=off -O3 -msimd128 -mbulk-memory --no-entry -sSTANDALONE_WASM \
-sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=1MB -s$stack=256KB"

  FLAGS="$EMVER $EMFLAGS limit"
  CMD='emcc $EMFLAGS -sEXPORTED_FUNCTIONS=_malloc,_free bench/wasm/limit.c bench/wasm/limit_strided.c bench/wasm/rotation.c -o bench/build/limit.wasm'
  step bench/build/limit.wasm bench/wasm/limit.c bench/wasm/limit_strided.c bench/wasm/limit_scale.h bench/wasm/rotation.c

  FLAGS="$EMVER $EMFLAGS unfused"
  CMD='emcc $EMFLAGS -sEXPORTED_FUNCTIONS=_malloc,_free,_pe_rope_init,_pe_rope_cos_sin,_pe_rope_apply,_pe_alibi_bias,_pe_abi_rope_config_layout \
    bench/wasm/unfused.c "${POSENC_SOURCES[@]}" -o bench/build/unfused.wasm'
  step bench/build/unfused.wasm bench/wasm/unfused.c "${POSENC_SOURCES[@]}"

  # posenc's SIMD build again, with build.sh's SIMD flags, its full export list (what binaryen inlines depends
  # on what is exported) and a name section (--profiling-funcs keeps function names), so bench/v8-code.mjs can
  # find the apply kernels (static, called through a table) in V8's code: the instruction counts behind the
  # "limit: rotation" notes
  EMNAMES="-std=c11 -Ic/include -ffp-contract=off -O3 -msimd128 --no-entry -sSTANDALONE_WASM \
-sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=1MB -s$stack=256KB --profiling-funcs"
  CORE_EXPORTS="$(node scripts/wasm-exports.mjs --exclude pe_model_ c/include/posenc.h)"
  FLAGS="$EMVER $EMNAMES $CORE_EXPORTS names"
  CMD='emcc $EMNAMES -sEXPORTED_FUNCTIONS=$CORE_EXPORTS \
    "${POSENC_SOURCES[@]}" -o bench/build/posenc-names.simd.wasm'
  step bench/build/posenc-names.simd.wasm "${POSENC_SOURCES[@]}"
else
  echo "bench/build.sh: emcc not found; the limit and unfused contenders are left out" >&2
  failed=$((failed + 2))
fi

if command -v gcc >/dev/null 2>&1; then
  # The same C as the wasm builds, natively: -O3 -march=native, ISO C11 (so no FMA contraction, as
  # -ffp-contract=off in the wasm builds), no -ffast-math; the SIMD loops through simd.h's native mapping
  # (-DPE_NATIVE_SIMD=1: SSE4.1 on x86-64), so SIMD is compared with SIMD.
  FLAGS="$(gcc --version | head -1) $(gcc -march=native -Q --help=target 2>/dev/null | grep -E '^\s+-march=' | tr -s ' ') -std=c11 -O3 -march=native -ffp-contract=off -DPE_NATIVE_SIMD=1"
  CMD='gcc -std=c11 -O3 -march=native -ffp-contract=off -DPE_NATIVE_SIMD=1 -Wall -Ic/include -Ic/src bench/native/bench_native.c "${POSENC_SOURCES[@]}" -lm -o bench/build/bench_native'
  step bench/build/bench_native bench/native/bench_native.c "${POSENC_SOURCES[@]}"
else
  echo "bench/build.sh: gcc not found; the native contender is left out" >&2
  failed=$((failed + 1))
fi

(( built > 0 )) || { echo "bench/build.sh: nothing could be built" >&2; exit 1; }
exit 0
