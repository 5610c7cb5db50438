#!/usr/bin/env bash
# Regenerate llama.cpp's outputs for the llama2.c stand-ins, committed in
# pc-tools/cli/tests/data/llama2c/NAME.json, against which
# pc-tools/cli/tests/llama2c_import.rs tests `ssnail import`, `convert` and
# `run` (CI does not build llama.cpp). Not run by `make test`.
#
# For each stand-in (stories260K, stories260K-unshared, stories15M, written by
# `cargo run -p ssnail-testkit --example llama2c_standins`):
#   1. llama.cpp's llama-convert-llama2c-to-ggml converts NAME.bin with
#      NAME.tok.bin (--copy-vocab-from-model); `ssnail import` does too;
#   2. gguf-py (llama.cpp's reader) summarises llama.cpp's GGUF: tensors
#      (name, shape, type, SHA-256 of the bytes) and keys (values, or array
#      digests) -- tools/llama2c-reference/summary.py;
#   3. llama.cpp decodes greedily on both GGUFs ("Once upon a time", BOS
#      added), recording the prompt ids, the generated ids and the five
#      largest logits at every position (tools/llama2c-reference/greedy.cpp);
#      the script fails unless both GGUFs give the same.
#
#   tools/llama2c-reference.sh
#
# llama.cpp: LLAMA_SRC and LLAMA_BUILD name a source tree and a CMake build
# of it that has llama-convert-llama2c-to-ggml and the static libraries
# (e.g. LLAMA_SRC=/work/llama-ref/src LLAMA_BUILD=/work/llama-ref/build);
# without them it is built once from the llama-cpp-python==0.3.36 sdist that
# tools/fetch-testdata.sh puts in the cache, into cache/llama2c-ref/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SSNAIL_CACHE:-$here/cache}
version=0.3.36
sdist=$cache/pypi/llama_cpp_python-$version.tar.gz
out=$here/pc-tools/cli/tests/data/llama2c
src=${LLAMA_SRC:-$cache/llama2c-ref/src}
build=${LLAMA_BUILD:-$cache/llama2c-ref/build}

if [ ! -x "$build/bin/llama-convert-llama2c-to-ggml" ] || [ ! -f "$build/src/libllama.a" ]; then
  if [ -n "${LLAMA_BUILD:-}" ]; then
    echo "llama2c-reference: $build has no bin/llama-convert-llama2c-to-ggml or src/libllama.a" >&2
    exit 1
  fi
  [ -f "$sdist" ] || "$here/tools/fetch-testdata.sh"
  rm -rf "$src" && mkdir -p "$src"
  tar xzf "$sdist" -C "$src" --strip-components=3 "llama_cpp_python-$version/vendor/llama.cpp"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DGGML_OPENMP=OFF
  cmake --build "$build" -j "$(nproc)" --target llama-convert-llama2c-to-ggml llama
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here" && cargo build --release -q -p ssnail &&
  cargo run --release -q -p ssnail-testkit --example llama2c_standins -- "$work" >/dev/null)
ssnail=${CARGO_TARGET_DIR:-$here/target}/release/ssnail

g++ -O2 -std=c++17 -I"$src/include" -I"$src/ggml/include" \
  "$here/tools/llama2c-reference/greedy.cpp" -o "$work/greedy" \
  "$build/src/libllama.a" "$build/ggml/src/libggml.a" "$build/ggml/src/libggml-cpu.a" \
  "$build/ggml/src/libggml-base.a" -lpthread -ldl -lm

prompt="Once upon a time"
mkdir -p "$out"
for spec in stories260K:40 stories260K-unshared:40 stories15M:24; do
  name=${spec%%:*} n=${spec##*:}
  "$build/bin/llama-convert-llama2c-to-ggml" --copy-vocab-from-model "$work/$name.tok.bin" \
    --llama2c-model "$work/$name.bin" --llama2c-output-model "$work/$name.llama.gguf" \
    >"$work/$name.log" 2>&1 || { tail -5 "$work/$name.log" >&2; exit 1; }
  "$ssnail" import "$work/$name.bin" --tokenizer "$work/$name.tok.bin" -o "$work/$name.ours.gguf" >/dev/null
  python3 "$here/tools/llama2c-reference/summary.py" "$src/gguf-py" "$work/$name.llama.gguf" >"$work/$name.summary.json"
  "$work/greedy" "$work/$name.llama.gguf" "$n" "$prompt" >"$work/$name.greedy.json"
  "$work/greedy" "$work/$name.ours.gguf" "$n" "$prompt" >"$work/$name.ours-greedy.json"
  if ! cmp -s "$work/$name.greedy.json" "$work/$name.ours-greedy.json"; then
    echo "llama2c-reference: llama.cpp decodes $name differently from llama.cpp's GGUF and from ssnail import's" >&2
    exit 1
  fi
  python3 - "$name" "$prompt" "$work" "$out/$name.json" <<'PY'
import json, sys
name, prompt, work, dest = sys.argv[1:]
summary = json.load(open(f"{work}/{name}.summary.json"))
greedy = json.load(open(f"{work}/{name}.greedy.json"))
doc = {
    "made_by": "tools/llama2c-reference.sh (llama.cpp of llama-cpp-python 0.3.36)",
    "standin": name,
    "llama_cpp_gguf": summary,
    "prompt": prompt,
    "greedy": greedy,
    "same_greedy_on_ssnail_import_gguf": True,
}
with open(dest, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
PY
  echo "$out/$name.json"
done
