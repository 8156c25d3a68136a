#!/usr/bin/env bash
# Builds posenc.
#   bash build.sh          everything: the wasm modules + their inlined JS, and the native C tests
#   bash build.sh wasm     the core dist/posenc.simd.wasm, dist/posenc.wasm (c/src, inlined in web/src/wasm-inline.js)
#                          and the tiny-model modules dist/posenc-model.simd.wasm, dist/posenc-model.wasm (c/src +
#                          the c/model library; inlined in web/src/wasm-inline-model-{simd,scalar}.js) (emcc)
#   bash build.sh native   build/native/{scalar,simd,twins}/test_* (gcc, ASan + UBSan); run: scripts/run-c-tests.sh
#   bash build.sh clean    removes dist/, build/ and the generated web/src/wasm-inline*.js
# Idempotent: a step whose inputs (sources, headers, flags, compiler) are unchanged is skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

what="${1:-all}"
case "$what" in all|wasm|native|clean) ;; *) echo "usage: build.sh [all|wasm|native|clean]" >&2; exit 2 ;; esac

if [[ "$what" == clean ]]; then
  rm -rf dist build web/src/wasm-inline*.js
  echo "build: cleaned"
  exit 0
fi

shopt -s nullglob
SOURCES=(c/src/*.c)
# The tiny model's library: what both the wasm model module and the native tools link (the trainer, tasks and
# eval are native only and live beside it in c/model/).
MODEL_LIB_SOURCES=()
for f in c/model/model.c c/model/safetensors.c; do [[ -f "$f" ]] && MODEL_LIB_SOURCES+=("$f"); done
MODEL_WASM_SOURCES=("${SOURCES[@]}" "${MODEL_LIB_SOURCES[@]}")
HEADERS=(c/include/*.h c/src/*.h)
MODEL_HEADERS=(c/model/*.h)

# Fingerprint of a list of files plus extra strings (flags, compiler version).
fingerprint() { { sha256sum "$@" 2>/dev/null; printf '%s\n' "${EXTRA_FP[@]}"; } | sha256sum | cut -c1-64; }

# ---------------------------------------------------------------------------------------------------
# WebAssembly: standalone modules (no Emscripten JS glue; web/src loads them itself). The core (c/src only,
# the posenc.h API minus pe_model_*) is what `import { init } from 'posenc'` loads; the tiny-model module
# (c/src + c/model library, pe_model_* and what web/src/model.js reads) is loaded only by pe.loadModel /
# pe.fetchModel. Each comes as SIMD128 and scalar.
# ---------------------------------------------------------------------------------------------------
build_wasm() {
  bash scripts/ensure-tools.sh emcc
  export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"  # emcc's JS tools need Debian's acorn

  if (( ${#SOURCES[@]} == 0 )); then
    echo "build: no C sources in c/src yet; nothing to compile to wasm" >&2
    exit 1
  fi

  # 3.1.6 (Debian 12) calls the stack setting TOTAL_STACK; newer Emscripten renamed it STACK_SIZE.
  local em_root stack_setting core_exports model_exports
  em_root="$(dirname "$(readlink -f "$(command -v emcc)")")"
  if grep -q '^var STACK_SIZE\b' "$em_root/src/settings.js" 2>/dev/null; then stack_setting=STACK_SIZE; else stack_setting=TOTAL_STACK; fi
  core_exports="$(node scripts/wasm-exports.mjs --exclude pe_model_ c/include/posenc.h)"
  model_exports="$(node scripts/wasm-exports.mjs --only pe_model_ --also pe_abi_rope_config_layout,pe_status_string c/include/posenc.h)"

  local common=(-std=c11 -Ic/include -ffp-contract=off -Wall -Wextra
    --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=1MB
    "-s$stack_setting=256KB")
  local simd_flags=(-O3 -msimd128)
  local scalar_flags=(-O3 -fno-vectorize -fno-slp-vectorize)
  local outputs=(dist/posenc.simd.wasm dist/posenc.wasm dist/posenc-model.simd.wasm dist/posenc-model.wasm
    web/src/wasm-inline.js web/src/wasm-inline-model-simd.js web/src/wasm-inline-model-scalar.js)

  EXTRA_FP=("$(emcc --version 2>/dev/null | head -1)" "${common[*]}" "${simd_flags[*]}" "${scalar_flags[*]}"
    "$core_exports" "$model_exports" "$(cat scripts/inline-wasm.mjs scripts/check-wasm.mjs scripts/wasm-exports.mjs | sha256sum)")
  local fp; fp="$(fingerprint "${MODEL_WASM_SOURCES[@]}" "${HEADERS[@]}" "${MODEL_HEADERS[@]}")"
  local out up_to_date=1
  for out in "${outputs[@]}"; do [[ -f "$out" ]] || up_to_date=0; done
  if (( up_to_date )) && [[ "$(cat dist/.stamp 2>/dev/null)" == "$fp" ]]; then
    echo "build: wasm up to date"
    return
  fi

  mkdir -p dist
  rm -f dist/.stamp
  local t0=$SECONDS
  echo "build: emcc ${#SOURCES[@]} sources -> dist/posenc{.simd,}.wasm; + ${MODEL_LIB_SOURCES[*]} -> dist/posenc-model{.simd,}.wasm"
  # Two at a time (each build is independent): the SIMD and the scalar build of one module side by side.
  local rc=0 pid
  emcc "${simd_flags[@]}" "${common[@]}" "-sEXPORTED_FUNCTIONS=$core_exports" "${SOURCES[@]}" -o dist/posenc.simd.wasm & pid=$!
  emcc "${scalar_flags[@]}" "${common[@]}" "-sEXPORTED_FUNCTIONS=$core_exports" "${SOURCES[@]}" -o dist/posenc.wasm || rc=$?
  wait "$pid" || rc=$?
  if (( rc == 0 )); then
    emcc "${simd_flags[@]}" "${common[@]}" "-sEXPORTED_FUNCTIONS=$model_exports" "${MODEL_WASM_SOURCES[@]}" -o dist/posenc-model.simd.wasm & pid=$!
    emcc "${scalar_flags[@]}" "${common[@]}" "-sEXPORTED_FUNCTIONS=$model_exports" "${MODEL_WASM_SOURCES[@]}" -o dist/posenc-model.wasm || rc=$?
    wait "$pid" || rc=$?
  fi
  if (( rc != 0 )); then
    echo "build: emcc failed. (\"undefined exported symbol\" means a pe_* function declared in" \
      "c/include/posenc.h is defined in none of: ${MODEL_WASM_SOURCES[*]})" >&2
    exit "$rc"
  fi

  node scripts/check-wasm.mjs "$core_exports" dist/posenc.simd.wasm dist/posenc.wasm
  node scripts/check-wasm.mjs "$model_exports" dist/posenc-model.simd.wasm dist/posenc-model.wasm
  node scripts/inline-wasm.mjs web/src/wasm-inline.js simdWasmBase64=dist/posenc.simd.wasm scalarWasmBase64=dist/posenc.wasm
  node scripts/inline-wasm.mjs web/src/wasm-inline-model-simd.js wasmBase64=dist/posenc-model.simd.wasm
  node scripts/inline-wasm.mjs web/src/wasm-inline-model-scalar.js wasmBase64=dist/posenc-model.wasm
  echo "$fp" > dist/.stamp
  echo "build: wasm done in $((SECONDS - t0))s"
}

# ---------------------------------------------------------------------------------------------------
# Native: every c/src/*.c compiled twice, as the scalar build and as the SIMD build (simd.h's native mapping,
# -DPE_NATIVE_SIMD=1), and each tests/c/test_*.c linked against both, under AddressSanitizer + UBSan:
#   build/native/scalar/test_*   build/native/simd/test_*
# tests/c/test_simd_twins*.c are linked once against both builds together (the SIMD one's symbols renamed
# simd_*, see native_twin_objects) so one binary can compare the two bit for bit: build/native/twins/test_*.
# tests/c/test_model*.c also link the tiny model (c/model/*.c but the command line main.c), compiled per variant.
# ---------------------------------------------------------------------------------------------------
NATIVE_VARIANTS=(scalar simd)
native_variant_flags() { # the flags that make a variant what it is
  case "$1" in
    scalar) echo "-fno-tree-vectorize" ;; # the scalar loops only, not auto-vectorised either
    simd) if [[ "$(uname -m)" == x86_64 ]]; then echo "-DPE_NATIVE_SIMD=1 -msse4.1"
          else echo "-DPE_NATIVE_SIMD=1"; fi ;; # simd.h's portable-C mapping where it has no intrinsics
  esac
}

# native_objects VARIANT -> NATIVE_OBJS: the library objects of one variant, rebuilt when the source, any
# header or the flags change. Sets native_built=1 when anything was rebuilt.
native_objects() {
  local variant="$1" dir="build/native/obj/$1" src obj fp
  local vflags; read -r -a vflags <<< "$(native_variant_flags "$variant")"
  mkdir -p "$dir"
  NATIVE_OBJS=()
  for src in "${SOURCES[@]}"; do
    obj="$dir/$(basename "${src%.c}").o"
    fp="$(EXTRA_FP+=("$hdr_fp" "${vflags[*]}"); fingerprint "$src")"
    if [[ ! -f "$obj" || "$(cat "$obj.stamp" 2>/dev/null)" != "$fp" ]]; then
      gcc "${cflags[@]}" "${vflags[@]}" -c "$src" -o "$obj"
      echo "$fp" > "$obj.stamp"
      native_built=1
    fi
    NATIVE_OBJS+=("$obj")
  done
  for obj in "$dir"/*.o; do # drop objects whose source is gone
    [[ -f "c/src/$(basename "${obj%.o}").c" ]] || { rm -f "$obj" "$obj.stamp"; native_built=1; }
  done
}

# native_model_objects VARIANT -> NATIVE_MODEL_OBJS: the tiny model's objects of one variant (c/model/*.c but
# main.c), for the model tests, which link them instead of including the .c files.
native_model_objects() {
  local variant="$1" dir="build/native/obj/$1/model" src obj fp
  local vflags; read -r -a vflags <<< "$(native_variant_flags "$variant")"
  local model_hdr_fp; model_hdr_fp="$(fingerprint "${HEADERS[@]}" "${MODEL_HEADERS[@]}")"
  mkdir -p "$dir"
  NATIVE_MODEL_OBJS=()
  for src in c/model/*.c; do
    [[ "$src" == c/model/main.c ]] && continue
    obj="$dir/$(basename "${src%.c}").o"
    fp="$(EXTRA_FP+=("$model_hdr_fp" "${vflags[*]}"); fingerprint "$src")"
    if [[ ! -f "$obj" || "$(cat "$obj.stamp" 2>/dev/null)" != "$fp" ]]; then
      gcc "${cflags[@]}" "${vflags[@]}" -c "$src" -o "$obj"
      echo "$fp" > "$obj.stamp"
      native_built=1
    fi
    NATIVE_MODEL_OBJS+=("$obj")
  done
  for obj in "$dir"/*.o; do # drop objects whose source is gone
    [[ -f "c/model/$(basename "${obj%.o}").c" ]] || { rm -f "$obj" "$obj.stamp"; native_built=1; }
  done
}

# native_twin_objects -> NATIVE_TWIN_OBJS: the SIMD objects with every global symbol they define renamed
# simd_<name> (pe_rope_apply -> simd_pe_rope_apply), references included, so they link beside the scalar ones.
native_twin_objects() {
  local dir=build/native/obj/simd-renamed obj syms
  mkdir -p "$dir"
  syms="$dir/renames.txt"
  nm --defined-only -g "${NATIVE_SIMD_OBJS[@]}" | awk 'NF == 3 { print $3 " simd_" $3 }' | sort -u > "$syms.new"
  NATIVE_TWIN_OBJS=()
  for obj in "${NATIVE_SIMD_OBJS[@]}"; do
    local out="$dir/$(basename "$obj")"
    if [[ ! -f "$out" || "$out" -ot "$obj" ]] || ! cmp -s "$syms" "$syms.new"; then
      objcopy --redefine-syms="$syms.new" "$obj" "$out"
      native_built=1
    fi
    NATIVE_TWIN_OBJS+=("$out")
  done
  mv "$syms.new" "$syms"
}

# native_link OUT SOURCE "EXTRA FLAGS" OBJS...: one test binary, relinked when the test, the headers, the
# flags or the objects change.
native_link() {
  local bin="$1" t="$2" xflags; read -r -a xflags <<< "$3"; shift 3
  local fp; fp="$(EXTRA_FP+=("$hdr_fp" "${xflags[*]}"); fingerprint "$t" "$@")"
  if [[ ! -x "$bin" || "$(cat "$bin.stamp" 2>/dev/null)" != "$fp" ]]; then
    gcc "${cflags[@]}" "${xflags[@]}" "$t" "$@" -lm -o "$bin"
    echo "$fp" > "$bin.stamp"
    native_built=1
  fi
}

build_native() {
  bash scripts/ensure-tools.sh gcc
  local tests=(tests/c/test_*.c)
  local cflags=(-std=c11 -O1 -g -Wall -Wextra -Werror -ffp-contract=off
    -fsanitize=address,undefined -fno-sanitize-recover=all -Ic/include)
  EXTRA_FP=("$(gcc --version | head -1)" "${cflags[*]}")
  # the tests' own helper headers (tests/c/*.h) count as headers of every test binary
  local test_headers=(tests/c/*.h)
  [[ -e "${test_headers[0]}" ]] || test_headers=()
  local hdr_fp; hdr_fp="$(fingerprint "${HEADERS[@]}" "${test_headers[@]}")"
  local native_built=0 n=0 variant t bin
  local NATIVE_OBJS NATIVE_SCALAR_OBJS NATIVE_SIMD_OBJS NATIVE_TWIN_OBJS NATIVE_MODEL_OBJS link

  for variant in "${NATIVE_VARIANTS[@]}"; do
    native_objects "$variant"
    native_model_objects "$variant"
    [[ "$variant" == scalar ]] && NATIVE_SCALAR_OBJS=("${NATIVE_OBJS[@]}") || NATIVE_SIMD_OBJS=("${NATIVE_OBJS[@]}")
    mkdir -p "build/native/$variant"
    for t in "${tests[@]}"; do
      [[ "$(basename "$t")" == test_simd_twins*.c ]] && continue
      # the test itself sees the variant's macros too (test_simd_ops.c checks the mapping it was built with)
      link=("${NATIVE_OBJS[@]}")
      [[ "$(basename "$t")" == test_model* ]] && link+=("${NATIVE_MODEL_OBJS[@]}")
      native_link "build/native/$variant/$(basename "${t%.c}")" "$t" "$(native_variant_flags "$variant")" "${link[@]}"
      n=$((n + 1))
    done
  done
  native_twin_objects
  mkdir -p build/native/twins
  for t in tests/c/test_simd_twins*.c; do
    native_link "build/native/twins/$(basename "${t%.c}")" "$t" "" "${NATIVE_SCALAR_OBJS[@]}" "${NATIVE_TWIN_OBJS[@]}"
    n=$((n + 1))
  done

  # Drop test binaries whose source is gone (and the flat layout of earlier builds), so the runner does not
  # run stale ones.
  for bin in build/native/test_* build/native/*/test_*; do
    [[ "$bin" == *.stamp ]] && continue
    [[ -f "tests/c/$(basename "$bin").c" && "$bin" == build/native/*/* ]] || rm -f "$bin" "$bin.stamp"
  done
  rm -rf build/native/obj/*.o build/native/obj/*.o.stamp
  if (( native_built )); then echo "build: native ${#SOURCES[@]} sources x ${#NATIVE_VARIANTS[@]} variants, $n test binaries in build/native/"
  else echo "build: native up to date ($n test binaries)"; fi
}

case "$what" in
  all) build_wasm; build_native ;;
  wasm) build_wasm ;;
  native) build_native ;;
esac
