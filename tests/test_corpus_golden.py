"""dsh-audit's reconstruction against DSH's own, for every golden file in the shared corpus."""

from __future__ import annotations

import pytest

from _golden import CORPUS, compare, golden_files

GOLDENS = golden_files()

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


@pytest.mark.parametrize("golden", GOLDENS, ids=[str(g.relative_to(CORPUS)) for g in GOLDENS])
def test_matches_dsh_golden(golden):
    assert compare(golden) == []


def test_corpus_has_goldens():
    assert len(GOLDENS) >= 200
