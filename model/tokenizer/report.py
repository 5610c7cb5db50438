#!/usr/bin/env python3
"""How each trained vocabulary cuts the corpus.

Usage: python3 model/tokenizer/report.py [--markdown]

For every tok*.model beside this file: mean tokens per question and per
answer on train and dev (SentencePiece's own encoder, no BOS/EOS); the
longest question + answer of every split with BOS and EOS (what one
training sequence needs of the context) and how many exceed 64; and how many dev and test
phrasings need pieces the training text never produced: byte-fallback
tokens (<0xHH>), characters that are pieces only because the vocabulary
holds all of ASCII, and words absent from the training text.
"""

import re
import sys
from pathlib import Path

import sentencepiece as spm

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpus"


def read(split):
    rows = (CORPUS / f"{split}.tsv").read_text(encoding="ascii").splitlines()[1:]
    return [tuple(r.split("\t")[1:]) for r in rows]


def words(text):
    return re.findall(r"[a-z0-9$/._-]+", text.lower())


def main(argv):
    md = argv[1:] == ["--markdown"]
    data = {s: read(s) for s in ("train", "dev", "test")}
    train_text = " ".join(q + " " + a for q, a in data["train"])
    train_chars = set(train_text)
    train_words = set(words(train_text))
    head = ("vocab", "q tok train", "q tok dev", "a tok train", "a tok dev", "max q+a+2", "q+a+2 > 64",
            "dev/test with byte tokens", "dev/test with chars unseen in training", "dev/test with unseen words")
    rows = []
    for path in sorted(HERE.glob("tok*.model"), key=lambda p: (len(p.stem), p.stem)):
        sp = spm.SentencePieceProcessor(model_file=str(path))
        byte_ids = {i for i in range(sp.get_piece_size()) if sp.is_byte(i)}

        def mean(split, col):
            xs = [len(sp.encode(r[col])) for r in data[split]]
            return sum(xs) / len(xs)

        lengths = [len(sp.encode(q)) + len(sp.encode(a)) + 2 for s in data for q, a in data[s]]
        longest = max(lengths)
        over = sum(n > 64 for n in lengths)
        held = data["dev"] + data["test"]
        with_bytes = sum(any(t in byte_ids for t in sp.encode(q)) for q, _ in held)
        unseen_chars = sum(any(c not in train_chars for c in q) for q, _ in held)
        unseen_words = sum(any(w not in train_words for w in words(q)) for q, _ in held)
        rows.append((path.stem, f"{mean('train', 0):.2f}", f"{mean('dev', 0):.2f}", f"{mean('train', 1):.2f}",
                     f"{mean('dev', 1):.2f}", str(longest), f"{over}/{len(lengths)}", f"{with_bytes}/{len(held)}",
                     f"{unseen_chars}/{len(held)}", f"{unseen_words}/{len(held)}"))
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        for r in [head] + rows:
            print("  ".join(x.rjust(w[i]) for i, x in enumerate(r)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
