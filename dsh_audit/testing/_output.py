"""The builder's output side: the header line, write batches, JSONL lines, zstd frames, files.

Storage follows spec §1.1-§1.4: packing runs per write batch, the header alone in zstd frame 1,
one checksummed frame per batch, DSH's ``<root>/<projectKey(cwd)>/<encodeSegment(id)>/`` layout.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..jsjson import stringify
from ._state import BuilderState
from ._storage import frames_bytes, jsonl_bytes, pack_chunk_runs, session_dir_parts

__all__ = ["OutputMixin"]


class OutputMixin(BuilderState):
    """Methods of :class:`~dsh_audit.testing.LogBuilder` that serialise what was built."""

    @property
    def header_record(self) -> dict[str, Any]:
        """The session header line (spec §1.3 key order)."""
        record: dict[str, Any] = {"type": "session", "version": 0, "id": self.session_id,
                                  "createdAt": self.created_at}
        if self.cwd is not None:
            record["cwd"] = self.cwd
        record.update({k: v for k, v in self.lineage.items() if v is not None})
        record["delegationDepth"] = self.delegation_depth
        if self.agent_preset is not None:
            record["agentPreset"] = self.agent_preset
        return record

    def batches(self) -> list[list[dict[str, Any]]]:
        """The events grouped by write batch (see :meth:`flush`); the last batch may be open."""
        out, start = [], 0
        for end in [*self._batch_ends, len(self._events)]:
            if end > start:
                out.append(self._events[start:end])
            start = end
        return out

    def records(self, *, packed: bool = True) -> list[dict[str, Any]]:
        """The storage records after the header: events, with chunk runs packed per batch."""
        if not packed:
            return list(self._events)
        return [record for batch in self.batches() for record in pack_chunk_runs(batch)]

    def lines(self, *, packed: bool = True) -> list[str]:
        """Every line of the plain log, header first, without newlines."""
        return [stringify(self.header_record)] + [stringify(r) for r in self.records(packed=packed)]

    def jsonl_bytes(self, *, packed: bool = True) -> bytes:
        return jsonl_bytes([self.header_record, *self.records(packed=packed)])

    def zstd_bytes(self, *, packed: bool = True, frames: str | int = "batches") -> bytes:
        """The zstd log: header alone in frame 1, then ``frames`` = ``"batches"`` (one frame per
        write batch, as DSH writes), ``"single"`` (all records in one frame) or an int N (N
        records per frame)."""
        if frames == "batches":
            groups = [pack_chunk_runs(b) if packed else b for b in self.batches()]
        else:
            records = self.records(packed=packed)
            size = (len(records) or 1) if frames == "single" else int(frames)
            groups = [records[i:i + size] for i in range(0, len(records), size)]
        return frames_bytes(self.header_record, groups)

    def write_jsonl(self, path: str | os.PathLike[str], *, packed: bool = True) -> Path:
        """Write the plain log (``compression: 'none'``); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.jsonl_bytes(packed=packed))
        return target

    def write_zstd(self, path: str | os.PathLike[str], *, packed: bool = True,
                   frames: str | int = "batches") -> Path:
        """Write the multi-frame zstd log (DSH's default encoding); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.zstd_bytes(packed=packed, frames=frames))
        return target

    def write_to_root(self, root: str | os.PathLike[str], *, compressed: bool = True) -> Path:
        """Write into a sessions root in DSH's layout (spec §1.1); returns the file path."""
        project, segment = session_dir_parts(self.session_id, self.cwd)
        folder = Path(root) / project / segment
        if compressed:
            return self.write_zstd(folder / "session.jsonl.zstd")
        return self.write_jsonl(folder / "session.jsonl")
