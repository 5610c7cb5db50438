#!/usr/bin/env bash
# llama.cpp's greedy answers to every corpus question for the shipped GGUF, recorded in
# model/answers/llama-cpp.tsv (question, generated ids with the end token, text), which
# model/train/tests/shipped_model.rs compares with the float reference (`ssnail run --float`).
# CI has no llama.cpp build, so the record is committed; this script remakes it.
#
#   model/llama-cpp/answers.sh [GGUF]     (LLAMA_CPP: a built llama.cpp tree, default /work/llama-ref
#                                          with the source in src/ and the static libraries in build/)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gguf=${1:-$root/model/ssnail-qa.gguf}
L=${LLAMA_CPP:-/work/llama-ref}
out=$root/build/llama-cpp
mkdir -p "$out"
for f in "$L/build/src/libllama.a" "$L/src/include/llama.h"; do
  [ -e "$f" ] || { echo "answers.sh: $f: no such file (set LLAMA_CPP to a built llama.cpp tree)" >&2; exit 1; }
done
g++ -O2 -std=c++17 -I "$L/src/include" -I "$L/src/ggml/include" "$here/answers.cpp" -o "$out/answers" \
  "$L/build/src/libllama.a" "$L/build/ggml/src/libggml.a" "$L/build/ggml/src/libggml-cpu.a" \
  "$L/build/ggml/src/libggml-base.a" -lpthread -ldl -lm
qs=$out/questions.txt
for s in ${ANSWER_SETS:-train dev test}; do tail -n +2 "$root/model/corpus/$s.tsv" | cut -f2; done > "$qs"
{
  printf 'question\tids\ttext\n'
  paste "$qs" <("$out/answers" "$gguf" 64 < "$qs")
} > "$root/model/answers/llama-cpp.tsv.tmp"
mv "$root/model/answers/llama-cpp.tsv.tmp" "$root/model/answers/llama-cpp.tsv"
echo "wrote model/answers/llama-cpp.tsv ($(($(wc -l < "$qs"))) questions)"
