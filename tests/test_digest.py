"""A request's digest is computed when read, from checkpoints that survive a surface replace:
whatever order digests are asked in, each equals SHA-256 of ``JSON.stringify`` of its messages."""

from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_audit.jsjson import sha256_hex
from dsh_audit.replay import Digest, PrefixDigest

# Each step: ("grow", k) appends k items; ("ask", i) asks the digest of a prefix; ("replace", i)
# starts a new list in which item i became a new one (the items after it kept), as a surface
# replace does.
steps = st.lists(st.tuples(st.sampled_from(["grow", "ask", "replace"]), st.integers(0, 80)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(steps=steps, start=st.sampled_from([0, 1]))
def test_prefix_digest_equals_a_fresh_hash(steps: list[tuple[str, int]], start: int) -> None:
    items: list[dict[str, int]] = []
    digest = PrefixDigest(items, start)
    counter = 0
    for op, k in steps:
        if op == "grow":
            for _ in range(k):
                counter += 1
                items.append({"n": counter})
        elif op == "replace":
            shared = min(k, len(items))
            gone = items[shared:shared + 1]
            items = items[:shared] + [{"replaced": counter}] + items[shared + 1:]
            digest = digest.fork(items, shared, gone)
        else:
            n = min(k, len(items))
            assert digest.digest(n) == sha256_hex(items[start:max(n, start)])
    assert digest.digest(len(items)) == sha256_hex(items[start:])


def test_digest_is_computed_once_and_pickles_as_its_value() -> None:
    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return "ab" * 32

    digest = Digest(compute)
    assert (digest.hex, digest.hex) == ("ab" * 32, "ab" * 32)
    assert calls == [1]
    copy = pickle.loads(pickle.dumps(digest))
    assert copy == digest and copy.hex == "ab" * 32
