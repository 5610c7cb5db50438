#!/usr/bin/env bash
# The reference for the chat-template test: llama.cpp's own tokenization
# (llama-tokenize, special tokens parsed) of SmolLM2-135M-Instruct's
# formatted prompt for one user turn, as its chat template renders it with
# the default system message. Writes pc-tools/cli/tests/data/smollm2-chat-prompt.ids.
#
#   tools/llama-cpp-chat-reference.sh [LLAMA_TOKENIZE]
#
# LLAMA_TOKENIZE: a llama-tokenize built from the llama-cpp-python==0.3.36
# sdist's vendored llama.cpp (tools/bench.sh shows how the project builds it).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tokenize=${1:-llama-tokenize}
cache=${SSNAIL_CACHE:-$here/cache}
gguf=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
prompt=$'<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n'
"$tokenize" -m "$gguf" -p "$prompt" --ids --log-disable 2>/dev/null | tail -n 1 |
  tr -d '[] ' >"$here/pc-tools/cli/tests/data/smollm2-chat-prompt.ids"
