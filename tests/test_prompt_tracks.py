"""Work that follows a log request by request without redoing its history: prompts and body
offsets built from pieces must equal what a whole rebuild gives.

The cache's prompt model builds each request's prompt incrementally: one growing track per
conversation, extended in place while only appends happen, forked after a replace with the
surviving messages copied. Whatever the log does, each prompt must equal the one built from
scratch, and every pair of prompts must share the same prefix either way."""

from __future__ import annotations

from hypothesis import given, settings

from dsh_audit.attribution import lcp_bytes, pieces_offset
from dsh_audit.cache import PromptBuilder, common_prefix, rule_for
from dsh_audit.cache._prompt import _Messages, _Track
from dsh_audit.strategies import GeneratedSession, sessions
from dsh_audit.wire import DeepSeekRenderer, render

from _properties import replay_file, written

MANY_REPLACES = sessions(turns=(2, 4), max_steps=3, retries=1, compactions=2, prunes=3, header_changes=2, resumes=1)


def _prompts(requests, *, fresh: bool):  # type: ignore[no-untyped-def]
    rule = rule_for("deepseek-official", "deepseek-chat")
    renderer = DeepSeekRenderer()
    builder = PromptBuilder(rule, pieces=renderer.prompt_pieces)
    out = []
    for request in requests:
        if fresh:
            renderer = DeepSeekRenderer()
            builder = PromptBuilder(rule, pieces=renderer.prompt_pieces)
        out.append(builder.build(request))
    return out


@settings(max_examples=30, deadline=None)
@given(session=MANY_REPLACES)
def test_incremental_prompts_equal_prompts_built_from_scratch(session: GeneratedSession) -> None:
    with written(session) as paths:
        requests = replay_file(paths[0])
    incremental, scratch = _prompts(requests, fresh=False), _prompts(requests, fresh=True)
    # a rendered prompt's log-JSON projection is built when read, not with the prompt
    assert [callable(p.projection) for p in incremental] == [p.source != "json" for p in incremental]
    for a, b in zip(incremental, scratch):
        assert (a.segments[:a.size], a.cumulative[:a.size], a.source) == (b.segments[:b.size], b.cumulative[:b.size], b.source)
        assert (a.json is None) == (b.json is None)
        if a.json is not None and b.json is not None:  # a rendered prompt and its log-JSON projection
            assert (a.json.segments[:a.json.size], a.json.cumulative[:a.json.size]) == \
                (b.json.segments[:b.json.size], b.json.cumulative[:b.json.size])
    for i in range(len(requests)):
        for j in range(max(0, i - 6), i):
            assert common_prefix(incremental[i], incremental[j]) == common_prefix(scratch[i], scratch[j])
            assert common_prefix(incremental[j], incremental[i]) == common_prefix(scratch[j], scratch[i])


@settings(max_examples=30, deadline=None)
@given(session=MANY_REPLACES)
def test_a_body_offset_told_from_pieces_equals_the_rendered_bodies(session: GeneratedSession) -> None:
    with written(session) as paths:
        requests = [r for r in replay_file(paths[0]) if r.kind == "loop"]
    renderer = DeepSeekRenderer()
    told = 0
    for prev, cur in zip(requests, requests[1:]):
        a, b = renderer.prompt_pieces(prev), renderer.prompt_pieces(cur)
        if a is None or b is None:
            continue
        offset = pieces_offset(a, prev.header["config"].get("model"), b, cur.header["config"].get("model"))
        bodies = render(prev).body, render(cur).body
        if offset is not None:
            told += 1
            assert offset == lcp_bytes(*bodies) < min(map(len, bodies))


def test_forked_tracks_compare_from_where_they_were_cut() -> None:
    """A fork's common prefix with the tracks it came from starts at their cut, and is still the
    prefix of equal segments: a replacement equal to what it replaced, or a later one, is read."""
    def track_of(parent: _Track | None, texts: list[str], kept: int) -> _Track:
        messages = _Messages(tuple(texts), lambda i: (("".join(["<", texts[i], ">"]),), (len(texts[i]),)), runs=False)
        if parent is None:
            track = _Track(("head",), [4])
            track.extend(messages, 0)
            return track
        return parent.fork(messages, kept)

    root = track_of(None, ["a", "b", "c", "d", "e"], 0)
    equal = track_of(root, ["a", "b", "c", "d", "e"], 2)  # "c" replaced by an equal message
    pruned = track_of(equal, ["a", "b", "c", "x", "e"], 3)
    early = track_of(pruned, ["y", "b", "c", "x", "e"], 0)
    other = track_of(None, ["a", "b", "z"], 0)
    tracks = [root, equal, pruned, early, other]
    assert [t.base[1] if t.base else None for t in tracks] == [None, 3, 4, 1, None]
    found = {(i, j): tracks[i].common(tracks[j]) for i in range(5) for j in range(5) if i != j}
    assert {k: v for k, v in found.items() if k[0] < k[1]} == {
        (0, 1): (6, 0), (0, 2): (4, 1), (0, 3): (1, 1), (0, 4): (3, 1), (1, 2): (4, 1), (1, 3): (1, 1),
        (1, 4): (3, 1), (2, 3): (1, 1), (2, 4): (3, 1), (3, 4): (1, 1)}
    assert all(found[i, j] == found[j, i] for i, j in found)
