#!/usr/bin/env python3
"""Summarise a GGUF as JSON with gguf-py (the reader in llama.cpp's tree):
every tensor (name, shape in GGUF order, type, SHA-256 of its bytes) and
every key (type; the value of a scalar; length and SHA-256 of an array).

An array's digest is SHA-256 over its elements as GGUF stores them: a
string as its u64 little-endian byte length then its UTF-8 bytes, a number
as its little-endian bytes. pc-tools/cli/tests/llama2c_import.rs computes
the same for the GGUFs `ssnail import` writes.

    summary.py GGUF_PY_DIR FILE.gguf
"""
import hashlib
import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
import gguf  # noqa: E402
from gguf import GGUFValueType as T  # noqa: E402

PACK = {T.UINT8: "<B", T.INT8: "<b", T.UINT16: "<H", T.INT16: "<h",
        T.UINT32: "<I", T.INT32: "<i", T.FLOAT32: "<f", T.UINT64: "<Q",
        T.INT64: "<q", T.FLOAT64: "<d", T.BOOL: "<?"}
NAME = {T.UINT8: "u8", T.INT8: "i8", T.UINT16: "u16", T.INT16: "i16",
        T.UINT32: "u32", T.INT32: "i32", T.FLOAT32: "f32", T.UINT64: "u64",
        T.INT64: "i64", T.FLOAT64: "f64", T.BOOL: "bool", T.STRING: "str"}


def element(t, v):
    if t == T.STRING:
        b = v.encode("utf-8")
        return struct.pack("<Q", len(b)) + b
    return struct.pack(PACK[t], v)


def main():
    r = gguf.GGUFReader(sys.argv[2])
    keys = {}
    for k, f in r.fields.items():
        if k.startswith("GGUF."):
            continue
        if f.types[0] == T.ARRAY:
            et = f.types[1]
            vals = f.contents()
            h = hashlib.sha256()
            for v in vals:
                h.update(element(et, v))
            keys[k] = {"type": "array[%s]" % NAME[et], "len": len(vals),
                       "sha256": h.hexdigest()}
        else:
            v = f.contents()
            if f.types[0] == T.FLOAT32:
                # Exactly the stored f32, as its bits.
                v = struct.unpack("<I", struct.pack("<f", v))[0]
                keys[k] = {"type": "f32", "bits": v}
            else:
                keys[k] = {"type": NAME[f.types[0]], "value": v}
    tensors = []
    for t in r.tensors:
        tensors.append({"name": t.name, "shape": [int(d) for d in t.shape],
                        "type": t.tensor_type.name,
                        "sha256": hashlib.sha256(t.data.tobytes()).hexdigest()})
    json.dump({"keys": keys, "tensors": tensors}, sys.stdout)


main()
