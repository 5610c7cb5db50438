#!/usr/bin/env python3
"""A lookup baseline on the dev set: how hard the held-out phrasings are.

Usage: python3 model/corpus/baseline.py

For every dev question, the training question most similar to it (TF-IDF
cosine over lower-case words, and over character trigrams) gives its
fact's answer; prints the share of dev questions answered exactly. It is a
table of the training phrasings, not a model: a reference point for the
model's held-out rate. It reads train and dev only; the test set is left
for the trainer to read once.
"""

import math
import re
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rows(split):
    return [l.split("\t") for l in (HERE / f"{split}.tsv").read_text(encoding="ascii").splitlines()[1:]]


def words(q):
    return Counter(re.findall(r"[a-z0-9]+", q.lower()))


def trigrams(q):
    q = " " + q.lower() + " "
    return Counter(q[i : i + 3] for i in range(len(q) - 2))


def exact_rate(train, dev, features):
    df = Counter(g for _, q, _ in train for g in set(features(q)))
    n = len(train)

    def vec(q):
        v = {g: (1 + math.log(c)) * math.log((n + 1) / (df.get(g, 0) + 1)) for g, c in features(q).items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {g: x / norm for g, x in v.items()}

    table = [(vec(q), a) for _, q, a in train]
    right = 0
    for _, q, a in dev:
        v = vec(q)
        # max() keeps the first of equal scores: training order breaks ties.
        best = max(table, key=lambda t: sum(v.get(g, 0.0) * x for g, x in t[0].items()))
        right += best[1] == a
    return right


def main():
    train, dev = rows("train"), rows("dev")
    for name, features in (("words", words), ("character trigrams", trigrams)):
        r = exact_rate(train, dev, features)
        print(f"nearest training question by {name}: {r}/{len(dev)} dev answers exact ({100 * r / len(dev):.1f}%)")


if __name__ == "__main__":
    main()
