"""Fuzz round 26, the gate: check runs validate's fork-lineage check (D3), and policy errors say
where and how much (D8)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _cli import invoke
from _golden import CORPUS
from dsh_audit.validate import validate_paths

FORK = CORPUS / "live/f-fork/session-logs"
CHILD = "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7.jsonl"
PARENT = "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6.jsonl"
LOG = Path(__file__).resolve().parent.parent / "sample_logs/chat/session.jsonl"
HINT = "(hint: a JSON report written by `dsh-audit check --json-report FILE`)"


def _fork(tmp_path: Path, *, apart: bool = False, seed: int | None = None) -> tuple[Path, Path]:
    """The corpus fork, each log in its own folder with ``apart``: its parent's event 1 one
    millisecond later (the child's seed still has the old time), or ``seed`` the child's seedLength."""
    child_dir, parent_dir = (tmp_path / "a", tmp_path / "b") if apart else (tmp_path / "p", tmp_path / "p")
    for folder in (child_dir, parent_dir):
        folder.mkdir(exist_ok=True)
    child, parent = shutil.copy(FORK / CHILD, child_dir / CHILD), parent_dir / PARENT
    text = (FORK / PARENT).read_text("utf-8")
    if seed is None:
        text = text.replace('"seq":1,"time":1796209397804', '"seq":1,"time":1796209397805', 1)
    parent.write_text(text, "utf-8")
    if seed is not None:
        child_text = Path(child).read_text("utf-8")
        Path(child).write_text(child_text.replace('"seedLength":44', f'"seedLength":{seed}', 1), "utf-8")
    return Path(child), parent


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("given", ["folder", "files", "apart"])
def test_check_fails_a_child_whose_seed_differs_from_its_parent_as_validate_does(
        given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    child, parent = _fork(tmp_path, apart=given == "apart")
    monkeypatch.chdir(tmp_path)
    paths = ["p"] if given == "folder" else [str(child.relative_to(tmp_path)), str(parent.relative_to(tmp_path))]
    code, out, err = invoke(monkeypatch, capsys, "check", *paths, "--json-report", "r.json", "--junit", "r.xml",
                            "--sarif", "r.sarif")
    said = (f"{paths[0] if given != 'folder' else 'p/' + CHILD}:3: seq 1: DSH603 error (fails the gate: "
            "validation-fail-severity): seeded event 1 differs from the parent's "
            f"({parent.relative_to(tmp_path)} line 3) (hint: copy the parent's events verbatim into the seed)")
    # the info finding the table counts for each log too, said once (session 42: not listed)
    logs = ", ".join(sorted(str(p.relative_to(tmp_path)) for p in (child, parent)))
    none = (f"DSH810 info: 2 logs ({logs}): no capture given or found beside the log (wire.jsonl) (hint: pass "
            "--capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four folders above it)")
    verdict = "FAILED: 2 log(s), 6 request(s), 1 error(s), 0 warning(s), 2 info, 1 failing (policy: defaults)"
    assert (code, out.splitlines()[-3:], err) == (1, [said, none, verdict], [])  # failing first, the logs named
    validated = [(f.rule, f.path, f.line, f.seq, f.message) for f in validate_paths(
        [child.relative_to(tmp_path), parent.relative_to(tmp_path)])]
    report = json.loads(Path("r.json").read_text("utf-8"))
    assert [(f["rule"], f["path"], f["line"], f["seq"], f["message"]) for f in report["findings"]
            if f["rule"].startswith("DSH6")] == validated and len(validated) == 1
    assert report["passed"] is False
    results = json.loads(Path("r.sarif").read_text("utf-8"))["runs"][0]["results"]
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results if r["ruleId"] == "DSH603"] == [("DSH603", "error", 3)]
    assert Path("r.xml").read_text("utf-8").count('<failure message="DSH603') == 1


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
def test_check_and_report_say_a_seed_past_the_end_twice_as_validate_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    child, parent = _fork(tmp_path, seed=9999)
    monkeypatch.chdir(tmp_path)
    validated = [(f.rule, f.line, f.seq, f.message) for f in validate_paths(["p/" + CHILD, "p/" + PARENT])
                 if f.rule.startswith("DSH6")]
    assert [rule for rule, *_ in validated] == ["DSH602", "DSH603"]
    code, out, err = invoke(monkeypatch, capsys, "check", "p", "--json")
    report = json.loads(out)
    assert (code, err) == (1, [])
    assert [(f["rule"], f["line"], f["seq"], f["message"]) for f in report["findings"]
            if f["rule"].startswith("DSH6")] == validated
    code, out, err = invoke(monkeypatch, capsys, "report", "p", "-o", "r.html")
    assert (code, out) == (0, "wrote r.html: 2 log(s), 5 request(s), check failed: 2 validation finding(s)\n")
    assert err[-1] == "note: 1 failing finding(s) (DSH603, 1 log(s)); hint: copy the parent's events verbatim into the seed"
    assert "check failed" in Path("r.html").read_text("utf-8")


# -- D8: policy errors at their line, a folder named as a baseline, long values cut -----------------

_PRICES_HINT = ("(hint: fix this key under [tool.dsh-audit.prices] of this pyproject.toml, the nearest to the "
                "current folder; the Price files section of docs/cache-accounting.md gives the shape)")


@pytest.mark.parametrize(("name", "text", "said"), [
    ("p.toml", "[check]\nbaseline = 1\n", f"p.toml:2: [check] key 'baseline' must be a file name {HINT}"),
    ("pyproject.toml", "[project]\nname = 'x'\n[tool.dsh-audit.check]\nbaseline = 1e400\n",
     f"pyproject.toml:4: [tool.dsh-audit.check] key 'baseline' must be a file name {HINT}"),
    ("pyproject.toml", "[project]\nname = 'x'\n[tool.dsh-audit.prices]\nfoo = nan\n",
     "pyproject.toml:3: [tool.dsh-audit.prices] price table key providers: missing: a price table holds its rates "
     f"under providers (providers.PROVIDER.models.MODEL) {_PRICES_HINT}"),
    ("pyproject.toml", '[tool.dsh-audit.prices.providers.deepseek.models."deepseek-chat"]\ncache_miss = nan\n'
                       "cache_read = 1\noutput = 1\n",
     "pyproject.toml:2: [tool.dsh-audit.prices] price table key providers.deepseek.models.deepseek-chat.cache_miss: "
     f"nan is not a rate (a number >= 0) {_PRICES_HINT}"),
    ("p.toml", "[check]\nbaseline = \"/\"\n",
     "/: is a folder, not a baseline (hint: a folder is not a report file: write one with `dsh-audit check PATHS "
     "--no-baseline --json-report /dsh-baseline.json` and name that file in the policy's [tool.dsh-audit.check] "
     "baseline)"),
    ("p.toml", f'ignore = ["DSH{"1" * 5000}"]\n',
     f"p.toml:1: policy key 'ignore': 'DSH{'1' * 56}…' is not a rule id (hint: give a rule id (DSH101-DSH832) or a "
     "family such as DSH3; see docs/rules.md)"),
    ("p.toml", f'capture-fail = ["{"x" * 5000}"]\n',
     f"p.toml:1: policy key 'capture-fail': unknown value '{'x' * 59}…' (hint: allowed: different, equivalent, "
     "unmatched, unexplained, unrendered; see the Policy section of docs/ci.md)"),
])
def test_a_policy_error_names_its_line_and_cuts_a_long_value(
        name: str, text: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / name).write_text(text, "utf-8")
    monkeypatch.chdir(tmp_path)
    policy, where = (["--policy", name], "") if name == "p.toml" else ([], f"{tmp_path}/")
    assert invoke(monkeypatch, capsys, "check", str(LOG), *policy) == (2, "", [f"error: {where}{said}"])
