#!/usr/bin/env python3
"""Check that the trained vocabularies work in the project's tokenizers.

Usage: python3 model/tokenizer/check_gguf.py [--keep DIR]
Environment: SSNAIL (default target/release/ssnail), LLAMA_TOKENIZE
(default /work/llama-ref/build/bin/llama-tokenize, llama.cpp built from
the vendored source; the check is skipped with a message if it is absent).
Needs the Python packages of requirements.txt (sentencepiece, gguf).

For every tok*.model beside this file it writes, in a temporary folder, a
llama GGUF holding the vocabulary as llama.cpp's converters store a
SentencePiece model (tokenizer.ggml.model "llama"; tokens, scores and
token_type from the model's pieces; unk 0, BOS 1, EOS 2; add_bos_token
true, add_space_prefix true) and small random weights (dim 32, one layer:
the model is only a carrier for the tokenizer), then:

1. encodes every question and answer of the corpus, and a line of all
   printable ASCII, with SentencePiece, with llama.cpp (llama-tokenize
   --ids --no-bos) and with ssnail's GGUF tokenizer (ssnail tokenize --ids
   --no-bos), and requires the same ids from all three;
2. converts the GGUF to an image (ssnail convert) and runs ssnail tokcheck
   on the same lines: the image's tables and algorithm (what the MEGA65
   program runs) against the GGUF tokenizer, BOS included;
3. compiles the MEGA65 program's own C tokenizer for the PC (tokhost, as
   make mega65-hosttest does; needs cc) and requires BOS + SentencePiece's
   ids from it on the image, for every line.

It prints one line per vocabulary and exits 1 on the first difference.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np
import sentencepiece as spm

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE.parent / "corpus"
SSNAIL = os.environ.get("SSNAIL", str(ROOT / "target" / "release" / "ssnail"))
LLAMA_TOKENIZE = os.environ.get("LLAMA_TOKENIZE", "/work/llama-ref/build/bin/llama-tokenize")
ALL_ASCII = "".join(chr(c) for c in range(32, 127))


def texts():
    out = []
    for split in ("train", "dev", "test"):
        for row in (CORPUS / f"{split}.tsv").read_text(encoding="ascii").splitlines()[1:]:
            _, q, a = row.split("\t")
            out += [q, a]
    out.append(ALL_ASCII)
    return list(dict.fromkeys(out))


def token_type(sp, i):
    if sp.is_unknown(i):
        return gguf.TokenType.UNKNOWN
    if sp.is_control(i):
        return gguf.TokenType.CONTROL
    if sp.is_unused(i):
        return gguf.TokenType.UNUSED
    if sp.is_byte(i):
        return gguf.TokenType.BYTE
    return gguf.TokenType.NORMAL


def write_gguf(sp, name, path):
    n = sp.get_piece_size()
    dim, hidden, layers, heads = 32, 64, 1, 2
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"vocabulary check {name}")
    w.add_context_length(64)
    w.add_embedding_length(dim)
    w.add_block_count(layers)
    w.add_feed_forward_length(hidden)
    w.add_head_count(heads)
    w.add_head_count_kv(heads)
    w.add_rope_dimension_count(dim // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("llama")
    w.add_token_list([sp.id_to_piece(i) for i in range(n)])
    w.add_token_scores([sp.get_score(i) for i in range(n)])
    w.add_token_types([token_type(sp, i) for i in range(n)])
    w.add_unk_token_id(sp.unk_id())
    w.add_bos_token_id(sp.bos_id())
    w.add_eos_token_id(sp.eos_id())
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(True)
    rng = np.random.default_rng(0)

    def t(tname, *shape):
        w.add_tensor(tname, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    t("token_embd.weight", n, dim)
    w.add_tensor("output_norm.weight", np.ones(dim, np.float32))
    for b in range(layers):
        w.add_tensor(f"blk.{b}.attn_norm.weight", np.ones(dim, np.float32))
        w.add_tensor(f"blk.{b}.ffn_norm.weight", np.ones(dim, np.float32))
        for m in ("attn_q", "attn_k", "attn_v", "attn_output"):
            t(f"blk.{b}.{m}.weight", dim, dim)
        t(f"blk.{b}.ffn_gate.weight", hidden, dim)
        t(f"blk.{b}.ffn_up.weight", hidden, dim)
        t(f"blk.{b}.ffn_down.weight", dim, hidden)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def ids_llama_cpp(model, text):
    r = subprocess.run([LLAMA_TOKENIZE, "-m", str(model), "-p", text, "--ids", "--no-bos", "--no-escape",
                        "--log-disable"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"check_gguf.py: llama-tokenize failed on {text!r}: {r.stderr.strip()[-300:]}")
    line = [l for l in r.stdout.splitlines() if l.startswith("[")][-1]
    return [int(x) for x in line.strip("[]").split(",") if x.strip()]


def ids_ssnail(model, text):
    r = subprocess.run([SSNAIL, "tokenize", "--ids", "--no-bos", str(model), "-p", text],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"check_gguf.py: ssnail tokenize failed on {text!r}: {r.stderr.strip()}")
    out = r.stdout.strip()
    return [int(x) for x in out.split(",")] if out else []


def build_tokhost(work):
    m = ROOT / "mega65"
    exe = work / "tokhost"
    srcs = [m / "host" / "tokhost.c", m / "host" / "far_host.c", m / "src" / "tokenizer.c", m / "src" / "fold.c"]
    r = subprocess.run([os.environ.get("CC", "cc"), "-O2", "-I", str(m / "include"), "-o", str(exe)] + [str(x) for x in srcs],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"check_gguf.py: building tokhost failed: {r.stderr.strip()[-300:]}")
    return exe


def ids_tokhost(exe, image, lines):
    r = subprocess.run([str(exe), str(image)], input="\0".join(lines), capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"check_gguf.py: tokhost failed: {r.stderr.strip()}")
    return [[int(x) for x in out.split(",")] if out else [] for out in r.stdout.splitlines()]


def main(argv):
    keep = None
    if argv[1:2] == ["--keep"] and len(argv) == 3:
        keep = Path(argv[2])
    elif argv[1:]:
        print("usage: check_gguf.py [--keep DIR]", file=sys.stderr)
        return 2
    use_llama = Path(LLAMA_TOKENIZE).exists()
    if not use_llama:
        print(f"check_gguf.py: {LLAMA_TOKENIZE} not found: llama.cpp is not compared")
    lines = texts()
    work = Path(tempfile.mkdtemp(prefix="ssnail-vocab-"))
    try:
        (work / "lines.txt").write_text("\n".join(lines) + "\n")
        tokhost = build_tokhost(work)
        for path in sorted(HERE.glob("tok*.model"), key=lambda p: (len(p.stem), p.stem)):
            name = path.stem
            sp = spm.SentencePieceProcessor(model_file=str(path))
            g = work / f"{name}.gguf"
            write_gguf(sp, name, g)
            for text in lines:
                want = sp.encode(text)
                got = ids_ssnail(g, text)
                if got != want:
                    print(f"{name}: {text!r}: SentencePiece {want}, ssnail {got}")
                    return 1
                if use_llama:
                    got = ids_llama_cpp(g, text)
                    if got != want:
                        print(f"{name}: {text!r}: SentencePiece {want}, llama.cpp {got}")
                        return 1
            img = work / f"{name}.ssnail"
            r = subprocess.run([SSNAIL, "convert", str(g), "-o", str(img)], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{name}: ssnail convert failed: {r.stderr.strip()}")
                return 1
            r = subprocess.run([SSNAIL, "tokcheck", str(img), str(g), str(work / "lines.txt")],
                               capture_output=True, text=True)
            summary = (r.stdout.strip().splitlines() or [""])[-1]
            if r.returncode != 0:
                print(f"{name}: ssnail tokcheck: {r.stdout.strip()} {r.stderr.strip()}")
                return 1
            c_ids = ids_tokhost(tokhost, img, lines)
            for text, got in zip(lines, c_ids):
                want = [sp.bos_id()] + sp.encode(text)
                if got != want:
                    print(f"{name}: {text!r}: SentencePiece {want}, MEGA65 C tokenizer {got}")
                    return 1
            if len(c_ids) != len(lines):
                print(f"{name}: the MEGA65 C tokenizer gave {len(c_ids)} lines for {len(lines)}")
                return 1
            whom = "SentencePiece = llama.cpp = ssnail" if use_llama else "SentencePiece = ssnail"
            print(f"{name}: {len(lines)} texts, {whom} = MEGA65 C tokenizer (ids); image tokcheck: {summary}")
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            for f in work.iterdir():
                shutil.copy(f, keep / f.name)
    finally:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
