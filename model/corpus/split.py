#!/usr/bin/env python3
"""Check the hand-written corpus (facts.txt) and write its fixed split.

Usage: python3 model/corpus/split.py [--check]

Writes model/corpus/{train,dev,test}.tsv (columns: fact, question, answer)
and model/corpus/facts.jsonl (every phrasing with its split). With --check
it writes nothing and fails if the committed files differ from what it
would write.

The split holds out phrasings, not facts: every fact has phrasings in all
three sets. Phrasings that differ only in letter case, spacing or
punctuation ("what is attic ram?", "WHAT IS ATTIC RAM") form one group and
always land in the same set, so no held-out question is a training
question typed differently. Per fact, the first group (the fact's plain
phrasing) is always training; the others are ordered by SHA-256 of
SEED + fact id + the group's key (no random number generator, so the split
does not depend on Python's version), and the first n_held(groups) go to
test, the next n_held(groups) to dev, the rest to training.
"""

import hashlib
import json
import re
import sys
from pathlib import Path

SEED = "ssnail-corpus-1"
HERE = Path(__file__).resolve().parent
SOURCE = HERE / "facts.txt"
# A question or an answer longer than this does not fit the model's context
# together with the other (the tokenizer's report checks tokens too).
MAX_QUESTION_CHARS = 56
MAX_ANSWER_CHARS = 44
MIN_PHRASINGS = 8


def n_held(groups):
    """Groups held out for test, and as many for dev, for a fact with `groups` groups."""
    return max(1, groups // 6)


class CorpusError(Exception):
    pass


def group_key(question):
    """The runs of letters and digits of a question, lower case: what case,
    spacing and punctuation variants share (the Rust test of the split,
    pc-tools/tokenizer/tests/model_corpus.rs, uses the same rule)."""
    return " ".join(re.findall(r"[a-z0-9]+", question.lower()))


def parse(path):
    facts = []
    ids = set()
    cur = None
    for lineno, raw in enumerate(path.read_text(encoding="ascii").split("\n"), 1):
        where = f"{path.name}:{lineno}"
        line = raw.rstrip()
        if raw != line:
            raise CorpusError(f"{where}: trailing white space")
        if not line or line.startswith("#"):
            continue
        if any(not (32 <= ord(c) < 127) for c in line) or "\t" in line:
            raise CorpusError(f"{where}: only printable ASCII is allowed")
        if line.startswith("@ "):
            fid = line[2:].strip()
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", fid):
                raise CorpusError(f"{where}: bad fact id '{fid}'")
            if fid in ids:
                raise CorpusError(f"{where}: fact '{fid}' defined twice")
            ids.add(fid)
            cur = {"id": fid, "answer": None, "questions": [], "line": lineno}
            facts.append(cur)
        elif cur is None:
            raise CorpusError(f"{where}: text before the first '@ id' line")
        elif line.startswith("= "):
            if cur["answer"] is not None:
                raise CorpusError(f"{where}: fact '{cur['id']}' has two answers")
            ans = line[2:]
            if not ans.endswith(".") or ans != ans.strip():
                raise CorpusError(f"{where}: the answer must end with a full stop")
            if len(ans) > MAX_ANSWER_CHARS:
                raise CorpusError(f"{where}: answer longer than {MAX_ANSWER_CHARS} characters")
            cur["answer"] = ans
        else:
            if cur["answer"] is None:
                raise CorpusError(f"{where}: question before the answer of '{cur['id']}'")
            if line != line.strip() or "  " in line:
                raise CorpusError(f"{where}: leading or doubled spaces")
            if len(line) > MAX_QUESTION_CHARS:
                raise CorpusError(f"{where}: question longer than {MAX_QUESTION_CHARS} characters")
            cur["questions"].append(line)
    seen = {}
    for f in facts:
        where = f"{path.name}:{f['line']}"
        if f["answer"] is None:
            raise CorpusError(f"{where}: fact '{f['id']}' has no answer")
        if len(f["questions"]) < MIN_PHRASINGS:
            raise CorpusError(
                f"{where}: fact '{f['id']}' has {len(f['questions'])} phrasings, at least {MIN_PHRASINGS} needed"
            )
        for q in f["questions"]:
            if q in seen:
                raise CorpusError(f"{where}: question '{q}' also in fact '{seen[q]}'")
            seen[q] = f["id"]
    # The same words in two facts would be one question with two answers.
    owner = {}
    for f in facts:
        for q in f["questions"]:
            k = group_key(q)
            if owner.setdefault(k, f["id"]) != f["id"]:
                raise CorpusError(f"{path.name}: '{q}' ({f['id']}) reads like a question of '{owner[k]}'")
    return facts


def split(facts):
    rows = []
    for f in facts:
        groups = {}
        for q in f["questions"]:
            groups.setdefault(group_key(q), []).append(q)
        keys = list(groups)
        if len(keys) < 3:
            raise CorpusError(f"{SOURCE.name}:{f['line']}: fact '{f['id']}' needs 3 differently worded phrasings")
        first, rest = keys[0], keys[1:]
        rest.sort(key=lambda k: hashlib.sha256(f"{SEED}\0{f['id']}\0{k}".encode()).hexdigest())
        h = n_held(len(keys))
        where = {first: "train"}
        for i, k in enumerate(rest):
            where[k] = "test" if i < h else "dev" if i < 2 * h else "train"
        for q in f["questions"]:
            rows.append({"fact": f["id"], "question": q, "answer": f["answer"], "split": where[group_key(q)]})
    return rows


def outputs(rows):
    files = {}
    for name in ("train", "dev", "test"):
        lines = ["fact\tquestion\tanswer"]
        lines += [f"{r['fact']}\t{r['question']}\t{r['answer']}" for r in rows if r["split"] == name]
        files[f"{name}.tsv"] = "\n".join(lines) + "\n"
    files["facts.jsonl"] = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    return files


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        print("usage: split.py [--check]", file=sys.stderr)
        return 2
    try:
        facts = parse(SOURCE)
        rows = split(facts)
    except (CorpusError, UnicodeDecodeError, OSError) as e:
        print(f"split.py: {e}", file=sys.stderr)
        return 1
    files = outputs(rows)
    if check:
        stale = [n for n, text in files.items() if not (HERE / n).exists() or (HERE / n).read_text() != text]
        if stale:
            print(f"split.py: {', '.join(stale)} differ from facts.txt; run python3 model/corpus/split.py", file=sys.stderr)
            return 1
    else:
        for n, text in files.items():
            (HERE / n).write_text(text)
    counts = {s: sum(r["split"] == s for r in rows) for s in ("train", "dev", "test")}
    print(
        f"{len(facts)} facts, {len(rows)} phrasings: train {counts['train']}, dev {counts['dev']}, test {counts['test']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
