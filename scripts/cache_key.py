#!/usr/bin/env python3
"""Recompute the completion-cache key pinned in tests/executor_cache.rs (PINNED_KEY).

An independent implementation of the key derivation documented in
src/executor/cache.rs, written from the documented byte layout only (standard library,
no harness-rl code): SHA-256 over
  field(TAG) field(model_id) prompt sampling
where field(b) = u64-LE length of b, then b; counts and integers are little-endian;
floats are their f32 bit patterns (little-endian).
  prompt   = field("raw") field(text)
           | field("chat") u64(n_messages) (field(role) field(content))...
  sampling = u32(max_tokens) u64(n_stop) field(stop)... grammar greedy-or-sampled
  grammar  = 0x00 | 0x01 field(gbnf)
  greedy   = "greedy"                      (temperature <= 0)
  sampled  = "sampled" f32(temperature) f32(top_p) u32(top_k) f32(min_p) u64(seed)

Run: python3 scripts/cache_key.py   (prints the key of the pinned request; the test
`key_derivation_matches_the_independent_script` runs it and compares).
"""
import hashlib
import struct

TAG = b"harness-rl/completion-cache/v1"


def field(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def f32(x: float) -> bytes:
    return struct.pack("<f", x)


def key(model_id, prompt, max_tokens=512, stop=(), grammar=None, temperature=0.0,
        top_p=1.0, top_k=0, min_p=0.0, seed=0):
    """prompt: ("raw", text) or ("chat", [(role, content), ...])."""
    out = field(TAG) + field(model_id.encode())
    kind, body = prompt
    if kind == "raw":
        out += field(b"raw") + field(body.encode())
    else:
        out += field(b"chat") + struct.pack("<Q", len(body))
        for role, content in body:
            out += field(role.encode()) + field(content.encode())
    out += struct.pack("<I", max_tokens) + struct.pack("<Q", len(stop))
    for s in stop:
        out += field(s.encode())
    out += b"\x00" if grammar is None else b"\x01" + field(grammar.encode())
    if temperature <= 0.0:
        out += b"greedy"
    else:
        out += (b"sampled" + f32(temperature) + f32(top_p) + struct.pack("<I", top_k)
                + f32(min_p) + struct.pack("<Q", seed))
    return hashlib.sha256(out).hexdigest()


if __name__ == "__main__":
    # The request of `key_derivation_is_pinned`: chat [system "s", user "u"],
    # temperature 0.5, seed 3, stop ["\n"], every other field at its default.
    print(key("sha256:abc", ("chat", [("system", "s"), ("user", "u")]),
              stop=["\n"], temperature=0.5, seed=3))
