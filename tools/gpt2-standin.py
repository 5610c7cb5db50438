#!/usr/bin/env python3
"""Write an F16 GPT-2 GGUF of the shape TinyStories-gpt-0.1-3m's 6.96 M
parameters imply (dim 64, 8 layers, 8 heads, hidden 256, context 2048,
50,257 tokens: the 256 byte tokens, 50,000 merged pieces of random letter
words, <|endoftext|>), with seeded random weights, for measuring images of
that shape (docs/real-mega65.md, "The models, measured on a stock board").
The output is the same bytes on every run.

    LLAMA_SRC=/path/to/llama.cpp tools/gpt2-standin.py OUT.gguf

gguf-py comes from $LLAMA_SRC/gguf-py (the llama.cpp source tree) or an
installed `gguf` package; numpy is needed.
"""
import os, sys, random
if os.environ.get("LLAMA_SRC"):
    sys.path.insert(0, os.path.join(os.environ["LLAMA_SRC"], "gguf-py"))
import numpy as np, gguf
V, D, L, H, F, C = 50257, 64, 8, 8, 256, 2048
rng = np.random.default_rng(1)
def bc():
    # GPT-2's byte-level BPE maps each byte to one printable character.
    bs = list(range(ord("!"), ord("~")+1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]; n = 0
    for b in range(256):
        if b not in bs: bs.append(b); cs.append(256+n); n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}
m = bc()
# Byte tokens, then every prefix of random words (half with GPT-2's leading-space
# mark), each made by one merge, until the vocabulary has 50,257 tokens.
toks = [m[b] for b in range(256)]; seen = set(toks); merges = []
r = random.Random(1); letters = "abcdefghijklmnopqrstuvwxyz"
while len(toks) < V - 1:
    w = ("Ġ" if r.random() < 0.5 else "") + "".join(r.choice(letters) for _ in range(r.randint(2, 10)))
    cur = w[0]
    for c in w[1:]:
        nxt = cur + c
        if nxt not in seen and len(toks) < V - 1:
            seen.add(nxt); toks.append(nxt); merges.append(cur + " " + c)
        cur = nxt
toks.append("<|endoftext|>")
w = gguf.GGUFWriter(sys.argv[1], "gpt2")
w.add_name("TinyStories-gpt-0.1-3m stand-in")
w.add_context_length(C); w.add_embedding_length(D); w.add_block_count(L)
w.add_feed_forward_length(F); w.add_head_count(H); w.add_layer_norm_eps(1e-5)
w.add_tokenizer_model("gpt2"); w.add_token_list(toks)
w.add_token_types([1]*(V-1) + [3]); w.add_token_merges(merges)
w.add_bos_token_id(V-1); w.add_eos_token_id(V-1)
def mat(name, rows, cols, s=None):
    s = s if s is not None else 1/np.sqrt(cols)
    w.add_tensor(name, (rng.standard_normal((rows, cols))*s).astype(np.float16))
def vec(name, n, base=0.0):
    w.add_tensor(name, (base + 0.02*rng.standard_normal(n)).astype(np.float32))
emb = (rng.standard_normal((V, D))*0.5).astype(np.float16)
w.add_tensor("token_embd.weight", emb)
mat("position_embd.weight", C, D, 0.05)
for l in range(L):
    p = f"blk.{l}."
    vec(p+"attn_norm.weight", D, 1.0); vec(p+"attn_norm.bias", D)
    mat(p+"attn_qkv.weight", 3*D, D); vec(p+"attn_qkv.bias", 3*D)
    mat(p+"attn_output.weight", D, D); vec(p+"attn_output.bias", D)
    vec(p+"ffn_norm.weight", D, 1.0); vec(p+"ffn_norm.bias", D)
    mat(p+"ffn_up.weight", F, D); vec(p+"ffn_up.bias", F)
    mat(p+"ffn_down.weight", D, F); vec(p+"ffn_down.bias", D)
vec("output_norm.weight", D, 1.0); vec("output_norm.bias", D)
w.add_tensor("output.weight", emb.copy())
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
