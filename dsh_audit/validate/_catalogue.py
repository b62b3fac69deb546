"""The rule catalogue: every rule's stable id, severity, rationale, fix hint and an example.

Ids are a contract: a rule keeps its id forever, a retired rule's id is never reused.
``docs/rules.md`` is generated from this table by ``scripts/gen_rules_doc.py``.
Sources are DSH 0.1.0-rc.8 (spec ``dsh-log-format.md`` §1-§7, §9.1-§9.3, §10.1) and the released
formats (``dsh-format-versions.md`` §4-§10). The v0 stream rules DSH420-DSH426 also apply to the
streams of v2+ ``assistant/message`` and ``assistant/attempt`` records.
"""

from __future__ import annotations

from ..log import LATEST_VERSION
from ._model import Rule

__all__ = ["LENIENT_RULES", "RULES"]

_H = '{"type":"session","version":0,"id":"s1","createdAt":1800000000000,"cwd":"/w","delegationDepth":0}'


_ALL = [
    # -- DSH1xx: physical layer and event envelope ------------------------------------------
    Rule("DSH101", "error", "unreadable-bytes",
         "The file is neither plain JSONL nor well-formed multi-frame zstd; nothing in it can be read.",
         "restore the file from a copy; DSH writes independent zstd frames, the first holding only the header",
         "(zstd) frame 1 holds the header line and the first events"),
    Rule("DSH102", "error", "not-utf8", "A line is not UTF-8; DSH logs are UTF-8 text.",
         "the file is damaged or is not a DSH log", '{"type":"turn/start","seq":0,"time":1,"data":{"turn":\\xff}}'),
    Rule("DSH103", "warning", "torn-tail",
         "The file ends inside a record (a crash mid-write); DSH ignores the incomplete bytes.",
         "harmless after a crash; a writer must end every batch with a newline",
         _H + '\n{"type":"turn/start","seq":0,"ti'),
    Rule("DSH104", "error", "bad-record",
         "A line that is not JSON sits before a later turn/end; DSH refuses the log as corrupt.",
         "every line is one JSON value written by JSON.stringify",
         '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}\n...\n{"type":"turn/end",...}'),
    Rule("DSH105", "error", "packed-row",
         "A packed chunk row (text-chunks, reasoning-chunks, tool-call-chunks) fails DSH's strict row check.",
         "a row is exactly {type, seq0, time0, data} with dt one shorter than its members",
         '{"type":"text-chunks","seq0":12,"time0":5,"data":{"turn":1,"step":1,"index":1,"dt":[0,0],"texts":["a","b"]}}'),
    Rule("DSH106", "warning", "damaged-tail",
         "A damaged record or a seq break with no turn/end after it: DSH drops it and everything after it.",
         "harmless after a crash; the dropped records are lost",
         '{"type":"step/start","seq":7,...}\n{"type":"assistant/chunk","seq":9,...}   (no later turn/end)'),
    Rule("DSH107", "error", "seq-gap", "Seqs must equal the event's position: a seq was skipped.",
         "renumber the events 0, 1, 2, ... without gaps (packed rows count once per member)",
         '{"type":"turn/start","seq":4,...}\n{"type":"step/start","seq":6,...}'),
    Rule("DSH108", "error", "seq-repeat", "A seq repeats or goes backwards.",
         "each event gets the next seq; a packed row's members take seq0, seq0+1, ...",
         '{"type":"turn/start","seq":4,...}\n{"type":"step/start","seq":4,...}'),
    Rule("DSH109", "error", "stream-record",
         "A v2+ assistant/message or assistant/attempt stream holds only {type:'chunk', time, chunk} records "
         "and packed runs (the v0 chunk-row fields minus seq0, inline); DSH refuses a malformed one.",
         "write runs as {type, time0, index, dt, texts} or {type, time0, index, dt, id, name?, args}",
         '{"stream":[{"type":"text-chunks","time0":5,"index":1,"dt":[0,0],"texts":["a","b"]}]}'),
    Rule("DSH110", "error", "envelope-keys",
         "An event has a top-level key outside type, seq, time, data, sourceEventSeqs, surfaceOp, ignorable.",
         "move extra fields into data", '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1},"meta":{}}'),
    Rule("DSH111", "error", "envelope-numbers", "seq must be a non-negative safe integer and time a safe integer.",
         "write Date.now() milliseconds and the position as integers", '{"type":"turn/start","seq":0,"time":"1","data":{"turn":1}}'),
    Rule("DSH112", "error", "envelope-fields", "An event must be a JSON object with a string type and a data field.",
         "data is always present (it may be {})", '{"type":"session/end-seed","seq":3,"time":1}'),
    Rule("DSH113", "error", "ignorable-value", "ignorable may only be the exact value true.",
         "drop the key instead of writing false", '{"type":"plan/mode","seq":3,"time":1,"data":{"active":true},"ignorable":false}'),
    Rule("DSH114", "error", "version-body",
         "The header's version is newer than its body: a v2+ header over records only older writers write (a "
         "packed chunk row, assistant/chunk, an assistant/message without stream; v3+: a request/header with "
         "system, a start/end replace; v4: a role user tool result). DSH reads the body with the header's "
         "version and refuses the log at the first such record (dsh-format-versions.md §4); it is reported "
         "once, and the later records of the older body are not checked one by one.",
         "fix the header's version (and the file name's generation) to the version the body is written in",
         '{"type":"session","version":2,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0}\n'
         '{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0],"texts":["a","b"]}}'),
    Rule("DSH120", "error", "message-shape",
         "A surface message needs an id, the right role, a source with a kind, a content array; assistant "
         "messages a model source, tool results one tool-result block matching source.callId.",
         "write the message as DSH's Message type (spec §5.1)",
         '{"type":"user/message","seq":7,"time":1,"data":{"content":[],"source":{"kind":"user"},"role":"assistant","id":"u1"},"surfaceOp":"append"}'),
    # -- DSH2xx: session header and request headers -------------------------------------------
    Rule("DSH201", "error", "header-missing", "The first line must be a JSON session header; without it nothing can be read.",
         "start the file with {\"type\":\"session\",\"version\":0,...}", "(empty file)"),
    Rule("DSH202", "error", "header-type", 'The first line must be an object with type "session".',
         "write the session header before any event", '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}'),
    Rule("DSH203", "error", "header-version", "The header needs a numeric version.",
         "write version 0, as DSH 0.1.0-rc.8 does; --lenient reads a tokenised fixture's missing version as a "
         "warning",
         '{"type":"session","id":"s1","createdAt":1800000000000,"delegationDepth":0}'),
    Rule("DSH204", "error", "version-newer",
         "The log's format version is newer than the reader reads; DSH refuses it ('upgrade the harness').",
         f"read it with a harness that knows its version: this dsh-audit reads up to v{LATEST_VERSION}, so a "
         f"newer log needs a newer dsh-audit; a --max-version below {LATEST_VERSION} refuses newer logs on purpose",
         '{"type":"session","version":4,"id":"s1","createdAt":1800000000000,"delegationDepth":0,"isSeeded":false}'),
    Rule("DSH205", "error", "version-unknown", "The version is not a released format (negative or fractional).",
         "released formats are v0-v4", '{"type":"session","version":-1,"id":"s1","createdAt":1,"delegationDepth":0}'),
    Rule("DSH206", "error", "version-file-name", "The header version and the file name's generation must agree.",
         "set the header's version to the version the body is written in and name the file for it: v0 in "
         "session.jsonl[.zstd], vN in session.vN.jsonl[.zstd]", "session.v2.jsonl holding a version 0 header"),
    Rule("DSH207", "error", "header-id", "The header id must be a string.", "write the session id as a string",
         '{"type":"session","version":0,"id":7,"createdAt":1800000000000,"delegationDepth":0}'),
    Rule("DSH208", "error", "header-created-at", "createdAt must be a non-negative safe integer (epoch milliseconds).",
         "write Date.now() at creation", '{"type":"session","version":0,"id":"s1","createdAt":"today","delegationDepth":0}'),
    Rule("DSH209", "error", "header-delegation-depth", "delegationDepth is always written, a non-negative safe integer.",
         "write 0 for a top-level session; --lenient reads a tokenised fixture's missing delegationDepth as a "
         "warning", '{"type":"session","version":0,"id":"s1","createdAt":1800000000000}'),
    Rule("DSH210", "error", "header-origin", "origin may only be \"subagent\".", "omit origin for a top-level session",
         '{"type":"session","version":0,"id":"s1","createdAt":1,"origin":"fork","delegationDepth":0}'),
    Rule("DSH211", "error", "header-agent-preset", "agentPreset must be a string when present.", "omit it or write its name",
         '{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0,"agentPreset":3}'),
    Rule("DSH212", "error", "header-cwd", "cwd must be an absolute path string when present.",
         "write the absolute working directory; --lenient reads a tokenised fixture's {{cwd}} as a warning",
         '{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"{{cwd}}","delegationDepth":0}'),
    Rule("DSH213", "error", "header-parent-session", "parentSession must be a string when present.",
         "write the parent's session id", '{"type":"session","version":0,"id":"c1","createdAt":1,"parentSession":5,"delegationDepth":1}'),
    Rule("DSH214", "error", "header-seed-length", "seedLength must be a non-negative safe integer when present.",
         "write the number of inherited events", '{"type":"session","version":0,"id":"c1","createdAt":1,"seedLength":-2,"delegationDepth":1}'),
    Rule("DSH215", "error", "header-retired-fields", "The retired sandboxMode and approvalPolicy header fields are refused.",
         "policies are events now (sandbox/mode, approval/policy)",
         '{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0,"sandboxMode":"read-only"}'),
    Rule("DSH216", "error", "header-seeded-marker", "v2+ headers carry a boolean isSeeded and no seedLength.",
         "write isSeeded; the inherited count is the inherited session/end-seed's seq",
         '{"type":"session","version":2,"id":"s1","createdAt":1,"delegationDepth":0,"seedLength":4}'),
    Rule("DSH217", "info", "version-development",
         "The header says version 1, a format only development builds wrote (dsh-format-versions.md §6.2): its "
         "body is a v0 body, so nothing else flags it, but DSH 0.1.0-rc.8 reads only v0 and refuses the log "
         "(format.ts refuseForeignFormatVersion); a v2+ reader migrates it (§7.2).",
         'a log meant for DSH 0.1.0-rc.8 writes "version": 0; run validate --max-version 0 to check a log as '
         "rc.8 reads it",
         '{"type":"session","version":1,"id":"s1","createdAt":1800000000000,"delegationDepth":0}   '
         "(in session.v1.jsonl)"),
    Rule("DSH218", "warning", "header-unknown-key",
         "A session header holds only the keys of its version: type, version, id, createdAt, delegationDepth, "
         "cwd, parentSession, origin, agentPreset, and seedLength (v0/v1) or isSeeded (v2+). v2+ readers refuse "
         "any other key (dsh-format-versions.md §6.3 \"exact keys\", §6.5 \"no other keys\"): an error in a "
         "v2+ log. DSH 0.1.0-rc.8 reads a v0 header's other keys and drops them (format.ts fromHeaderLine): a "
         "warning in a v0/v1 log, whose reader loses what the key meant (a misspelt origin: the subagent mark).",
         "spell the key as its version does, or drop it",
         '{"type":"session","version":4,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0,'
         '"orgin":"subagent"}', refused_from=2),
    Rule("DSH221", "error", "request-header-route", "A request/header config needs a non-empty provider and model.",
         "write the resolved route", '{"type":"request/header","seq":10,"time":1,"data":{"header":{"config":{"model":"m"}},"reason":"initial"}}'),
    Rule("DSH222", "error", "request-header-effort", "reasoningEffort, when present (null too: DSH tests !== undefined), must be a non-empty string.",
         "omit it or write the adapter's effort id",
         '{"type":"request/header","seq":10,"time":1,"data":{"header":{"config":{"provider":"p","model":"m","reasoningEffort":""}},"reason":"initial"}}'),
    Rule("DSH223", "error", "request-header-defaults",
         "adapterDefaults may only hold reasoningEffort: true and maxTokens: true, each backed by its config field.",
         "mark only values the adapter filled in",
         '{"type":"request/header","seq":10,"time":1,"data":{"header":{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":true}},"reason":"initial"}}'),
    Rule("DSH224", "warning", "request-header-reason-value", 'A request/header reason is one of "initial", "resume", "change".',
         "write the reason the loop had", '{"type":"request/header","seq":10,"time":1,"data":{"header":{...},"reason":"restart"}}'),
    Rule("DSH225", "warning", "request-header-reason-position",
         "The first header is initial; the first one a new loop instance writes (after session/end-seed) is "
         "resume; every other one is change.",
         "derive the reason from the log: no header yet, new loop instance, or a real change",
         '{"type":"request/header","seq":10,...,"reason":"change"}   (first header of the log)'),
    Rule("DSH226", "warning", "request-header-unchanged",
         "A change header must differ from the header in force (DSH headerEquals); DSH never writes an equal one.",
         "skip the header when nothing changed",
         '{"type":"request/header","seq":35,...,"reason":"change"}   (same config, system and tools as seq 10)'),
    Rule("DSH227", "error", "request-header-unfoldable",
         "A request/header's system and tools, when present, are not null: DSH loads such a log, but its "
         "canonicalHeader reads their length and throws, so no request can be built after the header (DSH "
         "folds every header before a request) and a resumed session fails; dsh-audit refuses those requests.",
         "write system as a string and tools as an array of tool schemas, or leave them out",
         '{"type":"request/header","seq":10,"time":1,"data":{"header":{"config":{"provider":"p","model":"m"},"system":null},"reason":"initial"}}'),
    # -- DSH3xx: the surface fold ----------------------------------------------------------------
    Rule("DSH301", "error", "surface-ineligible", "Only user/message, assistant/message and tool/result may carry surfaceOp or sourceEventSeqs.",
         "drop the surface metadata from log-only events",
         '{"type":"compaction/summary","seq":28,"time":1,"data":{...},"surfaceOp":"append"}'),
    Rule("DSH302", "error", "surface-op-missing", "Every surface-type event carries a surfaceOp.",
         'write "surfaceOp":"append" (or a replace)', '{"type":"user/message","seq":7,"time":1,"data":{...}}'),
    Rule("DSH303", "error", "surface-op-shape", 'surfaceOp is "append" or exactly {op:"replace", start, end} with seq values.',
         "write start and end as the first and last shadowed node seqs",
         '{"type":"user/message","seq":29,...,"surfaceOp":{"op":"replace","start":4}}'),
    Rule("DSH304", "error", "replace-range", "A replace range must name current surface nodes, start not after end by position.",
         "replace only nodes that are on the surface now",
         '{"type":"user/message","seq":29,...,"surfaceOp":{"op":"replace","start":13,"end":19}}   (13 already shadowed)'),
    Rule("DSH305", "error", "replace-coverage", "A replace's sourceEventSeqs must include every node it shadows.",
         "cite every shadowed node seq in sourceEventSeqs",
         '{"type":"user/message","seq":29,...,"sourceEventSeqs":[4],"surfaceOp":{"op":"replace","start":4,"end":11}}'),
    Rule("DSH306", "error", "tool-result-rewrite",
         "A tool/result replace rewrites exactly one current tool/result and may change only its content.",
         "keep turn, step, error, meta, id, source, toolCallId and isError of the original",
         '{"type":"tool/result","seq":26,...,"surfaceOp":{"op":"replace","start":13,"end":13}}   (isError flipped)'),
    Rule("DSH307", "error", "sources-shape",
         "sourceEventSeqs is a non-empty array of non-negative safe integers (it may be empty on assistant/message).",
         "omit it or cite real seqs", '{"type":"tool/result","seq":13,...,"sourceEventSeqs":[]}'),
    Rule("DSH308", "error", "sources-duplicate", "sourceEventSeqs must not repeat a seq.", "cite each source once",
         '{"type":"tool/result","seq":13,...,"sourceEventSeqs":[12,12]}'),
    Rule("DSH309", "error", "sources-later", "sourceEventSeqs may cite only earlier events.", "cite seqs below the event's own",
         '{"type":"tool/result","seq":13,...,"sourceEventSeqs":[14]}'),
    Rule("DSH310", "warning", "assistant-sources",
         "An assistant/message's sourceEventSeqs list exactly the chunk seqs of its step's successful attempt.",
         "cite the attempt's assistant/chunk seqs, in order",
         '{"type":"assistant/message","seq":11,...,"sourceEventSeqs":[7,8]}   (chunks were 7-10)'),
    Rule("DSH311", "warning", "tool-result-sources", "An appended tool/result cites its tool/call: sourceEventSeqs [callSeq].",
         "write sourceEventSeqs:[seq of the tool/call]", '{"type":"tool/result","seq":13,...,"sourceEventSeqs":[11]}   (tool/call is 12)'),
    # -- DSH32x: compaction adjacency and brackets ------------------------------------------------
    # The compaction contract (packages/compaction/compaction/src/types.ts L17-32, L72-88) and DSH's
    # compaction invariant (.../compaction/src/invariant.ts) are runtime checks: DSH loads a log
    # that breaks them, so they are warnings; an unclosed bracket at the end is a crash fact (info).
    Rule("DSH320", "warning", "summary-adjacency",
         "A compaction/summary is immediately followed by the user/message surface replace that carries it.",
         "append the checkpoint replace right after the summary, with nothing in between",
         '{"type":"compaction/summary","seq":113,...}\n{"type":"compaction/end","seq":114,...}   (no replace)'),
    Rule("DSH321", "warning", "summary-range",
         "The replace after a compaction/summary covers exactly its shadowedRange and shadows exactly its "
         "shadowedSeqs; shadowedRange is the first and last of a non-empty shadowedSeqs.",
         "write the summary's shadowedRange/shadowedSeqs from the span the replace shadows",
         '{"type":"compaction/summary",...,"shadowedRange":{"start":7,"end":98}}\n'
         '{"type":"user/message",...,"surfaceOp":{"op":"replace","start":7,"end":84}}'),
    Rule("DSH322", "warning", "checkpoint-source",
         "The replace after a compaction/summary has source {kind:'plugin', plugin:'compact', compactionId} "
         "with the summary's compactionId, and a checkpoint replace only ever follows a summary.",
         "give the checkpoint the compact source of its compaction",
         '{"type":"user/message",...,"data":{...,"source":{"kind":"user"}},"surfaceOp":{"op":"replace",...}}   '
         '(right after a compaction/summary)'),
    Rule("DSH323", "warning", "prune-adjacency",
         "A compaction/prune is immediately followed by the tool/result surface replace it prices.",
         "append the pruned tool/result replace right after the prune record",
         '{"type":"compaction/prune","seq":46,...}\n{"type":"step/start","seq":47,...}   (no tool/result replace)'),
    Rule("DSH324", "warning", "prune-range",
         "The tool/result replace after a compaction/prune covers exactly its shadowedRange and shadows "
         "exactly its shadowedSeqs; shadowedRange is the first and last of a non-empty shadowedSeqs.",
         "price the node the replace rewrites",
         '{"type":"compaction/prune",...,"shadowedRange":{"start":44,"end":44},"shadowedSeqs":[44]}\n'
         '{"type":"tool/result",...,"surfaceOp":{"op":"replace","start":40,"end":40}}'),
    Rule("DSH325", "warning", "compaction-bracket",
         "compaction/summary, the checkpoint replace and compaction/end belong to the open compaction/start "
         "of the same compactionId and sourceCommandId; brackets do not overlap; a successful end follows "
         "exactly one summary.",
         "write start, summary, replace, end of one compaction in order, ending one before starting the next",
         '{"type":"compaction/end","seq":115,"time":1,"data":{"compactionId":"c2","turn":null}}   (open bracket is c1)'),
    Rule("DSH326", "info", "compaction-open-tail",
         "The log ends inside a compaction bracket (a crash mid-compaction); DSH treats it as stale once a "
         "session/end-seed follows.",
         "nothing to fix for a crashed session; a writer closes every bracket with compaction/end",
         '{"type":"compaction/start","seq":112,...}   (no compaction/end before the end of the log)'),
    Rule("DSH327", "warning", "compaction-owner",
         "A compaction with turn N runs inside open turn N, one with turn null between turns; compaction/end "
         "names the start's owner and no turn boundary crosses an open compaction.",
         "write the open turn (or null between turns) and close the compaction before the turn ends",
         '{"type":"compaction/start","seq":112,"time":1,"data":{"compactionId":"c1","turn":null}}   (turn 4 open)'),
    # -- DSH4xx: turns, steps, tool pairing, stream grammar --------------------------------------
    # DSH's runtime invariants (session trace, LLM stream grammar): DSH loads a log that breaks
    # them, so they are warnings; `dsh-audit validate --strict` fails on them.
    Rule("DSH401", "warning", "turn-number", "turn/start numbers run 1, 2, 3, ... within a session.",
         "number each turn one above the previous", '{"type":"turn/start","seq":23,"time":1,"data":{"turn":3}}   (turn 2 came before)'),
    Rule("DSH402", "warning", "turn-nesting", "Turns do not nest: a turn/start needs the previous turn ended, a turn/end its own open turn with no step open.",
         "close the step and the turn before starting the next", '{"type":"turn/start","seq":12,...,"data":{"turn":2}}   (turn 1 still open)'),
    Rule("DSH403", "warning", "step-number", "step/start numbers restart at 1 in each turn and run 1, 2, 3, ...",
         "number each step one above the previous in its turn", '{"type":"step/start","seq":15,"time":1,"data":{"turn":1,"step":3}}   (step 2 missing)'),
    Rule("DSH404", "warning", "step-nesting", "A step/start names the open turn and needs the previous step ended.",
         "write step/end before the next step/start", '{"type":"step/start","seq":15,...,"data":{"turn":1,"step":2}}   (step 1 still open)'),
    Rule("DSH405", "warning", "step-scope",
         "assistant/chunk, assistant/attempt, assistant/message, tool/call, appended tool/result and step/end name the open turn and step.",
         "write turn and step of the step they belong to", '{"type":"assistant/chunk","seq":9,"time":1,"data":{"turn":1,"step":2,...}}   (step 1 open)'),
    Rule("DSH406", "warning", "turn-scope", "todo/write, request/header, request/context and tool/result replacements happen inside an open turn.",
         "write them between turn/start and turn/end", '{"type":"request/context","seq":22,...}   (after turn/end, before turn/start)'),
    Rule("DSH407", "info", "open-tail", "The log ends inside an open turn (a crash or a live session); DSH closes it as interrupted on load.",
         "nothing to fix for a crashed session", '{"type":"step/start","seq":40,...}   (last line)'),
    Rule("DSH410", "warning", "tool-result-dangling", "A tool/result answers a tool/call of the same step (except the TOOL_NOT_STARTED repair)."
         " In a v4 log an error: DSH's v4 relationship checks refuse it (dsh-format-versions.md §9.2);"
         " dsh-audit's reader replays the log anyway.",
         "write the tool/call first, in the same step", '{"type":"tool/result","seq":13,...}   (no tool/call for its callId in this step)',
         refused_from=4),
    Rule("DSH411", "warning", "tool-call-unlogged", "Every tool-call block of an assistant message gets a tool/call in the same step."
         " In a v4 log an error unless DSH's TOOL_NOT_STARTED repair result resolves the call, which stays a warning "
         "(DSH's v4 step/end refuses an unresolved call, §9.2, and any other result for it, DSH410; dsh-audit's reader "
         "replays the log anyway).",
         "log a tool/call per advertised call", "assistant/message with tool-call c1, then step/end without tool/call c1",
         refused_from=4),
    Rule("DSH412", "warning", "tool-result-missing", "Every tool-call block of an assistant message gets a tool/result before step/end."
         " In a v4 log an error: DSH's v4 step/end refuses an unresolved call (dsh-format-versions.md §9.2);"
         " dsh-audit's reader replays the log anyway.",
         "append a tool/result (an error result if the tool failed)", "tool/call c1, then step/end without tool/result c1",
         refused_from=4),
    Rule("DSH413", "warning", "tool-result-order", "Tool results are appended in model order: the order of the assistant's tool-call blocks.",
         "journal results in model order even when tools ran in parallel", "tool-call blocks c1, c2; tool/result c2 before tool/result c1"),
    Rule("DSH414", "warning", "tool-call-unadvertised", "A tool/call answers a tool-call block of its step's assistant message."
         " In a v4 log an error: DSH's v4 tool/call takes an advertised call not yet started (§9.2);"
         " dsh-audit's reader replays the log anyway.",
         "log only calls the model made", '{"type":"tool/call","seq":12,...,"data":{"callId":"c9",...}}   (no block c9)',
         refused_from=4),
    Rule("DSH415", "warning", "tool-call-arguments",
         "A tool/call's arguments is a string, the model's raw argument text (types.ts:283). DSH loads another "
         "value, but its readers JSON.parse it and drop the call's view (api-proxy.ts viewFor, backscanArgs).",
         "write arguments as the JSON text the model sent (JSON.stringify of an object), not the object",
         '{"type":"tool/call","seq":12,"time":1,"data":{"turn":1,"step":1,"callId":"c1","name":"bash",'
         '"arguments":{"command":"ls"}}}'),
    Rule("DSH416", "warning", "tool-call-repeated",
         "A tool/call starts a call once: a second tool/call with the callId of one already started in the step "
         "(and not a second tool-call block of that id) is a repeated start. DSH 0.1.0-rc.8 loads it; in a v4 log "
         "an error: DSH's v4 relationship checks refuse a repeated start (dsh-format-versions.md §9.2); dsh-audit's "
         "reader replays the log anyway.",
         "log one tool/call per tool-call block of the assistant message",
         '{"type":"tool/call","seq":12,...,"data":{"callId":"c1",...}}\n'
         '{"type":"tool/call","seq":13,...,"data":{"callId":"c1",...}}', refused_from=4),
    Rule("DSH420", "warning", "stream-block-start", "A block-start must not reuse the index of a block still open.",
         "give each open block its own index", '{"chunk":{"type":"block-start","index":1,...}} twice without block-end'),
    Rule("DSH421", "warning", "stream-delta", "A delta needs an open block of its type at its index.",
         "emit block-start before the deltas", '{"chunk":{"type":"text-delta","index":2,"text":"x"}}   (no open text block 2)'),
    Rule("DSH422", "warning", "stream-block-end", "A block-end closes an open block of the same type.",
         "close only open blocks, with the block's own type", '{"chunk":{"type":"block-end","index":4,...}}   (block 4 never started)'),
    Rule("DSH423", "warning", "stream-usage", "An attempt's stream carries at most one usage chunk.",
         "emit usage once, before finish", "two {\"type\":\"usage\"} chunks in one attempt"),
    Rule("DSH424", "warning", "stream-after-finish", "Nothing follows a successful finish in a step: only a failed attempt may be retried.",
         "start a new step for more output", '{"chunk":{"type":"finish","reason":{"kind":"stop"}}} then another chunk in the step'),
    Rule("DSH425", "warning", "stream-unfinished", "An attempt's stream ends with a finish chunk before its step ends.",
         "a stream without finish means a cancelled or crashed attempt", "assistant/chunk deltas, then step/end with no finish chunk"),
    Rule("DSH426", "warning", "stream-open-blocks", "A stop or tool-calls finish leaves no block open (a max-tokens cut may).",
         "close every block before finishing", "block-start index 1, then finish {kind:stop} without block-end"),
    # -- DSH5xx: refusals and versions ---------------------------------------------------------------
    Rule("DSH501", "error", "header-delta", "request/header-delta is a retired shape; DSH refuses any log holding one.",
         "rewrite as full request/header snapshots", '{"type":"request/header-delta","seq":12,"time":1,"data":{...}}'),
    Rule("DSH502", "error", "mode-set", "mode/set is a retired event; DSH refuses any log holding one.",
         "use the current plan/mode and permission events", '{"type":"mode/set","seq":12,"time":1,"data":{"mode":"plan"}}'),
    Rule("DSH503", "error", "header-fallback", 'request/header reason "fallback" is retired; DSH refuses it.',
         "write a change header", '{"type":"request/header","seq":12,...,"reason":"fallback"}'),
    Rule("DSH504", "error", "legacy-malformed", "An event looks like a pre-identity legacy shape but is not a complete one.",
         "write the current shape", '{"type":"turn/start","seq":1,"time":1,"data":{"turn":1,"trigger":null}}'),
    Rule("DSH505", "info", "legacy-upgraded", "A legacy shape DSH upgrades in memory (never on disk).",
         "nothing to fix; new writers use the current shape", '{"type":"turn/end","seq":9,"time":1,"data":{"turn":1,"reason":{"kind":"disposed"}}}'),
    Rule("DSH506", "error", "unknown-required-type", "An event type the reader does not know and not marked ignorable: DSH refuses the log.",
         'mark plugin events "ignorable": true, or fix the type name', '{"type":"tool/reslt","seq":13,"time":1,"data":{}}'),
    Rule("DSH507", "info", "unknown-ignorable-type", "An unknown event type marked ignorable: readers skip it.",
         "nothing to fix", '{"type":"acme/note","seq":13,"time":1,"data":{},"ignorable":true}'),
    # -- DSH6xx: lineage --------------------------------------------------------------------------
    Rule("DSH601", "warning", "lineage-incomplete",
         "A child names its parent: seedLength and origin subagent need parentSession, and a subagent has delegationDepth >= 1.",
         "write parentSession, seedLength, origin and delegationDepth together",
         '{"type":"session","version":0,"id":"c1","createdAt":1,"seedLength":44,"delegationDepth":0}'),
    Rule("DSH602", "error", "seed-boundary",
         "The event at seq seedLength is the session/end-seed that closes the inherited events.",
         "set seedLength to the number of events copied from the parent",
         '{"type":"session",...,"seedLength":40,...}   with session/end-seed at seq 44'),
    Rule("DSH603", "error", "seed-prefix", "A child's first seedLength events are the parent's first seedLength events.",
         "copy the parent's events verbatim into the seed", "child seq 12 differs from parent seq 12"),
    # -- DSH7xx: usage ---------------------------------------------------------------------------
    Rule("DSH701", "warning", "usage-counts",
         "A logged usage is an object whose inputTokens and outputTokens are non-negative safe integers "
         "(≤ 2^53 − 1). A step or attempt may log none: DSH writes no usage when the provider reported none, "
         "so a missing usage is no finding (requests shows its counts as ?).",
         "write the provider's counts as integers", '{"chunk":{"type":"usage","usage":{"inputTokens":"12"}}}'),
    Rule("DSH702", "warning", "usage-optional",
         "cacheReadTokens, cacheWriteTokens and reasoningTokens are non-negative safe integers (≤ 2^53 − 1) when present; "
         "reasoningTokens, a part of outputTokens on every route, is at most outputTokens (a request is unpriced "
         "when the usage it is priced from, its attempt's chunk's, else its assistant/message's, breaks this).",
         "omit a bucket the provider did not report, and count reasoning within outputTokens",
         '{"usage":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":-64}}'),
    Rule("DSH703", "warning", "usage-unknown-key", "TokenUsage has only inputTokens, outputTokens and the optional cache and reasoning buckets.",
         "keep provider-specific counts elsewhere", '{"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}'),
    Rule("DSH704", "warning", "usage-mismatch", "assistant/message usage copies its attempt's usage chunk.",
         "write the same usage in both places", "usage chunk inputTokens 10, assistant/message usage inputTokens 11"),
]

RULES: dict[str, Rule] = {rule.id: rule for rule in _ALL}
assert len(RULES) == len(_ALL), "duplicate rule id"

# Rules --lenient turns into warnings: header metadata DSH's oracle adapted for tokenised fixtures.
LENIENT_RULES = frozenset({"DSH203", "DSH209", "DSH212"})
