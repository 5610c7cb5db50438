#!/usr/bin/env python3
"""Train the model's SentencePiece vocabularies on the training split.

Usage: python3 model/tokenizer/train_vocab.py [SIZE ...]
       (default: every size in SIZES; needs sentencepiece==0.2.1, see
       requirements.txt beside this file)

Writes model/tokenizer/tokN.model and tokN.vocab for each size N, and
tok384bf.* (the same recipe with byte fallback); then expected_ids.tsv:
every dev and test question, every answer and a line of all printable
ASCII, with SentencePiece's ids for it in each vocabulary (no BOS), which
the Rust tests hold the project's tokenizers to (check_gguf.py compares
every question of all splits). Reads only
model/corpus/train.tsv: the training phrasings and their answers, one per
line; dev and test text never reaches the tokenizer.

The recipe is llama2.c's (BPE, identity normalisation, digits split, white
space only pieces allowed) with two changes:

* remove_extra_whitespaces=False, because llama.cpp's SentencePiece
  tokenizer (the project's reference, docs/tokenizer.md) never collapses
  spaces: with it, SentencePiece, llama.cpp and the image tokenizer give the
  same ids for any ASCII text, runs of spaces included.
* Byte fallback needs 256 <0xHH> pieces, more than a vocabulary of 128, 192
  or 256 can hold (SentencePiece refuses them). Those vocabularies instead
  hold every printable ASCII character as a piece of its own
  (required_chars): everything the MEGA65 program can send (it turns other
  characters into "?", spec section 2.2), so no input is left without a
  token, except TAB: SentencePiece's trainer makes no piece of it, even
  from text that holds tabs, so a typed TAB is dropped by the image
  tokenizer and refused by llama.cpp. SentencePiece's BPE trainer takes no required character that the
  text lacks, so one extra line holds each of them once, separated by
  spaces (frequency 1: it shapes no merge the corpus does not). llama.cpp would otherwise stop with an exception on a character
  it finds neither as a piece nor as a byte token. tok384bf is the
  byte-fallback variant at the one size where it fits (259 fixed pieces).

Ids 0, 1, 2 are <unk>, <s>, </s> (llama's unk, BOS, EOS).
"""

import sys
from pathlib import Path

import sentencepiece as spm

HERE = Path(__file__).resolve().parent
TRAIN = HERE.parent / "corpus" / "train.tsv"
SIZES = [128, 192, 256, 384]
# The printable ASCII the MEGA65 program can put into a line (space becomes
# the piece U+2581, which every vocabulary has anyway).
ASCII = "".join(chr(c) for c in range(33, 127))


def training_lines():
    rows = TRAIN.read_text(encoding="ascii").splitlines()
    if not rows or rows[0] != "fact\tquestion\tanswer":
        raise SystemExit(f"train_vocab.py: {TRAIN}: not a split file (run model/corpus/split.py)")
    out = []
    for n, row in enumerate(rows[1:], 2):
        cols = row.split("\t")
        if len(cols) != 3:
            raise SystemExit(f"train_vocab.py: {TRAIN}:{n}: expected 3 columns")
        out += [cols[1], cols[2]]
    return out


def alphabet_line():
    """Every character of ASCII once, as words of their own."""
    return " ".join(ASCII)


def options(size, byte_fallback):
    opts = dict(
        model_type="bpe",
        vocab_size=size,
        character_coverage=1.0,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        add_dummy_prefix=True,
        split_digits=True,
        allow_whitespace_only_pieces=True,
        byte_fallback=byte_fallback,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        num_threads=1,
        seed_sentencepiece_size=1000000,
        input_sentence_size=0,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    if not byte_fallback:
        opts["required_chars"] = ASCII
    return opts


def train(name, size, byte_fallback, lines):
    prefix = HERE / name
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_prefix=str(prefix), **options(size, byte_fallback)
    )
    sp = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
    missing = [c for c in ASCII if sp.piece_to_id(c) == sp.unk_id() and not byte_fallback]
    if missing:
        raise SystemExit(f"train_vocab.py: {name}: no piece for {missing!r}")
    print(f"{name}: {sp.get_piece_size()} pieces -> {prefix.name}.model, {prefix.name}.vocab")


def all_texts():
    out = []
    for split in ("train", "dev", "test"):
        for row in (HERE.parent / "corpus" / f"{split}.tsv").read_text(encoding="ascii").splitlines()[1:]:
            _, q, a = row.split("\t")
            out += [q, a] if split != "train" else [a]
    out.append(" " + ASCII)
    return list(dict.fromkeys(out))


def write_expected_ids():
    names = [f"tok{n}" for n in SIZES] + ["tok384bf"]
    sps = [spm.SentencePieceProcessor(model_file=str(HERE / f"{n}.model")) for n in names]
    lines = ["text\t" + "\t".join(names)]
    for text in all_texts():
        lines.append(text + "\t" + "\t".join(" ".join(map(str, sp.encode(text))) for sp in sps))
    (HERE / "expected_ids.tsv").write_text("\n".join(lines) + "\n")
    print(f"expected_ids.tsv: {len(lines) - 1} texts")


def main(argv):
    try:
        sizes = [int(a) for a in argv[1:]] or SIZES
    except ValueError:
        print("usage: train_vocab.py [SIZE ...]", file=sys.stderr)
        return 2
    lines = training_lines()
    for size in sizes:
        train(f"tok{size}", size, False, lines + [alphabet_line()])
        if size == 384:
            train("tok384bf", size, True, lines)
    if not argv[1:]:
        write_expected_ids()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
