"""Which members of a DSH record hold content, by their keys: what :class:`._redactor.Redactor` keeps.

Every string value of a record is content and gets a placeholder, except: strings under a
*structural* key (types, ids, roles, kinds, providers, models, reasons, enum-like settings, tool
names; the full list is :data:`STRUCTURAL_KEYS`) where DSH's format puts them, and the parts the user
keeps (``--keep``: :data:`KEEP_CHOICES`). Below a content root (:data:`CONTENT_KEYS`: a tool call's
arguments object, a tool result's ``details``; and a ``tool/result``'s ``meta``, :data:`META_KEY`) no
key is structural, whatever its name; the header line keeps only the members the spec names
(:data:`HEADER_KEYS`), any other one is content. Paths (:data:`PATH_KEYS`) are replaced segment by segment.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONTENT_KEYS", "HEADER_KEYS", "KEEP_CHOICES", "META_KEY", "PATH_KEYS", "STRUCTURAL_KEYS", "TOOL_NAME_KEYS",
           "content_root", "is_header", "meta_of", "structural"]

#: What ``--keep`` can name.
KEEP_CHOICES = ("paths", "system", "titles", "tools")

STRUCTURAL_KEYS = frozenset("""
    type id role kind provider model callId toolCallId responseId surfaceOp op blockType reasoningEffort
    preset policy mode target commandId sourceCommandId compactionId retryId handlerId runId goalId subCallId
    parentCallId rootCallId childId parentSession senderSessionId attachmentId mediaType digest api
    stopReason code thinkingSignature textSignature thoughtSignature responseModel plugin form point phase outcome
    action operation decision dialect
    status source lang shape what waitReason titleProvider agentPreset origin agentProvider agentModel
    pluginId packageId pluginRunId rpcId name toolName required policyKey time createdAt version
    reasoning_effort tool_call_id tool_choice object finish_reason
    """.split())
PATH_KEYS = frozenset({"cwd", "path", "paths", "file_path", "filePath", "root", "workdir"})
#: The structural keys that hold a tool name (replaced too with ``tool_names=False``).
TOOL_NAME_KEYS = frozenset({"name", "toolName"})
#: The members whose object or list value is content whole, whatever its members are named: a tool
#: call's arguments (an object in pi-ai's messages, as a replay envelope holds them; DSH's own are a
#: JSON text) and a tool result's ``details``. No key below one is structural: a string there is
#: content (a path still segment by segment). So is a ``tool/result`` event's ``data.meta``
#: (:data:`META_KEY`), there only: a tool's free-form ``JsonValue`` (``dsh-tool-fs`` puts its
#: result-time diff there), while a tool's JSON schema may name a property ``meta``.
CONTENT_KEYS = frozenset({"arguments", "details"})
#: The member of a ``tool/result`` event's ``data`` that is content whole (spec §2: ``meta?: JsonValue``).
META_KEY = "meta"
#: The members of a log's header line (spec §1.3) that are no content: kept (secrets still go), ``cwd``
#: as a path. Any other member of the header is content, whatever its name.
HEADER_KEYS = frozenset({"type", "version", "id", "createdAt", "parentSession", "seedLength", "origin",
                         "delegationDepth", "agentPreset"})
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_/")


def _identifier(text: str) -> bool:
    return 0 < len(text) <= 40 and set(text) <= _IDENT_CHARS


def is_header(record: Any) -> bool:
    """Whether ``record`` is a log's header line (spec §1.3)."""
    return isinstance(record, dict) and record.get("type") == "session" and "seq" not in record


def meta_of(record: Any) -> Any:
    """The ``data`` object of ``record`` when it is a ``tool/result`` event (its ``meta`` is content), else None."""
    if isinstance(record, dict) and record.get("type") == "tool/result" and isinstance(record.get("data"), dict):
        return record["data"]
    return None


def structural(key: str | None, text: str) -> bool:
    """Whether a string under ``key`` is structural where keys can be (not below a content root)."""
    return key in STRUCTURAL_KEYS or (key == "reason" and _identifier(text))


def content_root(key: Any, value: Any) -> bool:
    """Whether the member ``key`` holds content whole (:data:`CONTENT_KEYS`): an object or a list."""
    return key in CONTENT_KEYS and isinstance(value, (dict, list))
