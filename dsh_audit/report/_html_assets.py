"""The inline stylesheet and script of the HTML report (no external resources).

The script only ever writes log text with ``textContent`` (``el()`` below); it never assigns
``innerHTML``. Every text and attribute it writes goes through ``inert()``: a control, C1, bidi or other
format character, a lone surrogate (a log may hold one) is shown as its escape (``\\u202e``, ``\\udXXX``),
as :func:`~dsh_audit.report.terminal.terminal_text` shows it, a line break kept only where the page
shows lines (a ``pre``, a tooltip's), while the data it searches stays the log's text. It draws the
timeline :data:`PAGE` requests at a time and assembles a request's messages (from its base request and
its delta, see :mod:`._html`) only when the request is opened or searched. Deep links name the
session: ``#<anchor>/request-N`` and ``#<anchor>/break-N`` (the log's ``anchor``, its session id
URL-escaped, so a link does not depend on the other logs of the page) and ``#<anchor>`` (the log: the
session list and a child's parent link to it; two files of one session are ``#<id>~1`` and ``#<id>~2``);
a page of one log uses ``#request-N`` and ``#break-N``. The
older ``#request-N`` (the one log that has request N), ``#sK-request-N`` and ``#session-K`` (the
K-th log, from 0) still open where they are unambiguous; a link to a log or request the page does
not hold says so in the detail pane and opens nothing else. A page of several logs lists them first
(in ``DATA.order``: failing first, children under their parent; each with its project and short id);
the search box filters that list and the open log's timeline with
plain substring tests on text. The timeline's y axis shows token values, its x axis request numbers;
the axis is as wide as its longest label (a 10-digit count is whole). Every count is written as the CLI's
tables print it (``fmt``: no thousands separator); the data keeps raw numbers.
Only a ``break`` is drawn in a break colour, the legend's wherever it is drawn (its timeline marker,
its link in the break list, its cause in the drill-down): red when it fails (a failing finding of its
request), orange when the policy allows it; a ``cache_safe_change`` has its own. A log that could
not be read shows its error only. A page of no log says so in neutral words and shows nothing else.
A number, date or model cell (``td.num``, ``td.key``, ``.date``) never wraps, and no cell breaks a
word (``header_change``, an id): at phone width a table scrolls sideways in its own box (every
table is one, ``display:block``; the totals' in their ``.scroll`` box too), and a time span wraps
at its dash only. The drill-down says under its Cache table what "counted tokens" are. With
JavaScript off, the page shows its static summary instead (:mod:`._html_static`: the headline, the
totals and the session list), and hides the boxes only the script fills.
"""

from __future__ import annotations

import json

from ._html_static import NO_LOG

__all__ = ["CSS", "PAGE", "SCRIPT"]

PAGE = 200

CSS = """
:root{--fg:#1d2330;--muted:#667085;--bg:#fff;--panel:#f6f7f9;--line:#d0d5dd;--prompt:#c7d2fe;--exp:#60a5fa;
--act:#16a34a;--brk:#dc2626;--warn:#d97706;--safe:#0e7490}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg);min-height:100vh;overflow-wrap:anywhere}
header{padding:10px 16px;border-bottom:1px solid var(--line);display:flex;flex-wrap:wrap;gap:4px 16px;align-items:baseline}
h1{font-size:18px;margin:0}h2{font-size:16px;margin:4px 0 6px}h3{font-size:14px;margin:14px 0 4px}
#search-bar{margin:6px 12px;display:flex;flex-wrap:wrap;gap:4px 8px;align-items:center}
#search{font:inherit;padding:3px 6px;width:22em;max-width:100%}
nav{border-bottom:1px solid var(--line);padding:4px 12px 8px;overflow:auto;max-height:40vh}nav[hidden]{display:none}
nav h2{margin:2px 0 4px}#session-list{list-style:none;margin:0;padding:0}
#session-list li{padding:3px 6px;border-radius:6px;border-left:3px solid transparent;min-width:0}
#session-list li.sel{background:var(--panel)}#session-list li.child{border-left-color:var(--line)}
#session-list li.context{opacity:.6}
#session-list .line{display:flex;gap:6px;align-items:baseline;min-width:0}
#session-list .name{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0;flex:0 1 auto}
#session-list .rel{font-size:12px;color:var(--muted);white-space:nowrap}
#session-list .meta{font-size:12px;color:var(--muted);display:flex;flex-wrap:wrap;gap:0 10px}
#session-list .fail .verdict,#session-list .fail .mark{color:var(--brk)}#session-list .mark{color:var(--act)}
#session-list .warn .verdict{color:var(--warn)}
#session-list .where{font-size:12px;color:var(--muted);display:flex;gap:0 10px;min-width:0}
#session-list .where span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}
#session-list .sid{font-family:ui-monospace,Menlo,Consolas,monospace}
.more{font:inherit;cursor:pointer}
main{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px;padding:8px 12px;min-width:0}
section{min-width:0}#detail{background:var(--panel);border-radius:8px;padding:8px 12px;overflow:auto;
max-height:calc(100vh - 64px)}
.muted{color:var(--muted)}.pass{color:var(--act);font-weight:600}.failed{color:var(--brk);font-weight:600}
#headline.nothing{font-weight:600}#search-bar[hidden],main[hidden]{display:none}#no-log{margin:12px 16px}
.family a{font-weight:600}
.timeline{display:flex;align-items:flex-end;gap:2px;height:320px;border-bottom:1px solid var(--line);
overflow-x:auto;overflow-y:hidden;position:relative}.timeline[hidden]{display:none}
.yaxis{position:sticky;left:0;z-index:2;flex:0 0 58px;height:100%;background:var(--bg);border-right:1px solid var(--line);
font-size:10px;font-variant-numeric:tabular-nums}
.yaxis .tick{position:absolute;right:0;transform:translateY(50%);font-size:10px;line-height:12px;color:var(--muted);
padding-right:6px;white-space:nowrap}
.yaxis .tick::after{content:"";position:absolute;right:0;top:6px;width:4px;border-top:1px solid var(--muted)}
.yaxis .axis-title{position:absolute;top:2px;left:2px;font-size:10px;color:var(--muted)}
.yaxis .xtitle{position:absolute;bottom:0;right:6px;font-size:10px;color:var(--muted)}
.req{position:relative;display:flex;align-items:flex-end;justify-content:center;gap:1px;height:100%;min-width:18px;cursor:pointer;
padding:0 1px 14px;border-radius:3px}
.req:hover,.req.sel{background:#eef2ff}.req .bar{width:4px;min-height:1px}
.bar.prompt{background:var(--prompt)}.bar.expected{background:var(--exp)}.bar.actual{background:var(--act)}
.req.aux{opacity:.6}.req .idx{position:absolute;bottom:0;left:0;font-size:10px;color:var(--muted);white-space:nowrap}
.break-marker{position:absolute;top:2px;left:50%;transform:translateX(-50%);border:0;border-radius:8px;
background:var(--brk);color:#fff;font-size:10px;line-height:14px;padding:4px 1px;cursor:pointer;writing-mode:vertical-rl;
z-index:1;max-height:120px;overflow:hidden}
.break-marker.allowed{background:var(--warn)}
.req.finding::after{content:"";position:absolute;bottom:0;left:0;right:0;height:3px;background:var(--brk)}
#legend{display:flex;flex-wrap:wrap;gap:4px 12px;font-size:12px;color:var(--muted);margin:6px 0}
#legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
#pager{margin:4px 0 6px;display:flex;flex-wrap:wrap;gap:6px;align-items:center}#pager button{font:inherit;cursor:pointer}
#log-findings{margin-top:26px}
#totals{padding:6px 12px 8px;border-bottom:1px solid var(--line)}#totals[hidden]{display:none}#totals h2{margin:2px 0 4px}
#totals .groups{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:flex-start;margin-top:6px}#totals td.num{text-align:right}
.scroll{max-width:100%;min-width:0;overflow-x:auto}#totals .groups th{white-space:normal;overflow-wrap:normal}
td.num,td.key,.date{white-space:nowrap;overflow-wrap:normal}
#totals p{margin:4px 0 0;font-size:12px}#totals table.cache-totals{margin-top:6px}pre.field-diff{max-height:240px}
#overview table{margin:4px 0 8px}#overview th{font-weight:600;background:var(--panel)}
.break-list a{color:var(--brk)}.break-list a.allowed{color:var(--warn)}.break-causes th{white-space:normal;overflow-wrap:normal}.break-causes td.num{text-align:right}
.break-details summary{cursor:pointer;margin:4px 0}.break-list .nothing,.break-list .nothing a{color:var(--muted)}
.link-error{border:1px solid var(--brk);border-radius:6px;padding:6px 8px;background:#fef2f2}
pre{white-space:pre-wrap;word-break:break-word;background:var(--bg);border:1px solid var(--line);border-radius:6px;
padding:6px 8px;margin:4px 0;max-height:360px;overflow:auto;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
.msg{border-left:3px solid var(--line);padding-left:8px;margin:6px 0}.msg.new{border-color:var(--act)}
.msg.gone{border-color:var(--brk)}.msg .role{font-weight:600;font-size:12px}
.cause{font-weight:700}.cause.brk{color:var(--brk)}.cause.allowed{color:var(--warn)}.cause.safe{color:var(--safe)}
.transition.is-safe{color:var(--safe)}table{border-collapse:collapse;font-size:12px;max-width:100%}
td,th{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top;overflow-wrap:normal}
table{display:block;overflow-x:auto}.scroll>table{display:table}td.word{white-space:nowrap}
p.legend{font-size:12px;margin:2px 0 6px}
#static-summary{padding:6px 16px 10px}#static-summary h2{margin:10px 0 4px}#static-summary table{margin:4px 0}#static-summary td.num{text-align:right}
th{white-space:nowrap}
.finding-item{color:var(--brk)}.finding-item.ok{color:var(--muted)}
@media (max-width:800px){main{grid-template-columns:minmax(0,1fr);padding:6px}#detail{max-height:none}
header{padding:8px}#search-bar{margin:6px 8px}nav{padding:4px 8px 8px}}
"""

SCRIPT = r"""
(function(){
"use strict";
var PAGE=__PAGE__,NO_LOG=__NO_LOG__;
var DATA=JSON.parse(document.getElementById("dsh-data").textContent);
var state={session:0,page:0,request:null,filter:null};
// Text as the page shows it, as the CLI shows it (terminal_text, the same categories and escapes):
// a control character (C0, NUL, ESC, DEL, C1), a format character (a bidi override, isolate or mark,
// a zero-width one), a lone surrogate (valid JSON, and DSH logs what it is given), a private-use or
// unassigned code point, a line or paragraph separator as its visible escape (\u202e, \U000e0001; a
// byte that was not UTF-8, U+DC80 to U+DCFF, as \xNN): no bidi override reorders what a reader
// sees, and drawing text that ends in a lone surrogate kills some Chromium builds. A pair (an
// emoji) is one code point to the u flag, so it stays. The data the page searches stays the log's text.
var HIDDEN=/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu;
function hex(n,width){var s=n.toString(16);while(s.length<width){s="0"+s;}return s;}
function escapeChar(c){var n=c.codePointAt(0);
 return n>=0xdc80&&n<=0xdcff?"\\x"+hex(n-0xdc00,2):n<=0xffff?"\\u"+hex(n,4):"\\U"+hex(n,8);}
function inert(text){return String(text).replace(HIDDEN,escapeChar);}
// A pre's text (a message, JSON): each line inert, its line breaks kept, as the CLI prints text of
// several lines a line at a time (fit_lines); a CR or a tab is escaped there too. An attribute given
// as a list (a tooltip of several lines) is its items inert, one a line: a line break in an item is escaped.
function inertLines(text){return String(text).split("\n").map(inert).join("\n");}
function textNode(text){return document.createTextNode(inert(text));}
function el(tag,attrs,text){var e=document.createElement(tag);if(attrs){for(var k in attrs){
 if(k==="cls"){e.className=attrs[k];}else{var v=attrs[k];e.setAttribute(k,Array.isArray(v)?v.map(inert).join("\n"):inert(v));}}}
 if(text!==undefined&&text!==null){e.textContent=tag==="pre"?inertLines(text):inert(text);}return e;}
function add(parent,child){parent.appendChild(child);return child;}
function clear(node){while(node.firstChild){node.removeChild(node.firstChild);}}
function json(v){return JSON.stringify(v,null,2);}
// A count as the CLI's tables print it (table_cell: its digits, no thousands separator), the one
// form of every count on the page, the static summary's too (_html_static._count).
function fmt(v){return String(v);}
// v to d decimals rounded as Python's format rounds (the exact value, a tie to even), where toFixed
// rounds a tie up ($0.03125: "0.0312" in the CLI, "0.0313" by toFixed): the page's money reads as the CLI's.
function fixed(v,d){var a=Math.abs(v);if(!(a<1e21)){return v.toFixed(d);}var s=a.toFixed(100);var dot=s.indexOf(".");
 var n=s.slice(0,dot)+s.slice(dot+1,dot+1+d),rest=s.slice(dot+1+d);
 if(rest.charAt(0)>"5"||(rest.charAt(0)==="5"&&(/[1-9]/.test(rest.slice(1))||n.charCodeAt(n.length-1)%2===1))){var k=n.length-1;
  while(k>=0&&n.charAt(k)==="9"){k--;}n=(k<0?"1":n.slice(0,k)+String(+n.charAt(k)+1))+n.slice(k+1).replace(/9/g,"0");}
 var ip=n.slice(0,n.length-d)||"0";return (v<0?"-":"")+ip+(d?"."+n.slice(n.length-d):"");}
// Money as the CLI shows it (usd_text): 4 decimals, or two significant digits for an amount above 0
// too small for them ("$0.000021"), never "$0.0000" for money that is not 0; "$?" unknown.
function usd(v){if(typeof v!=="number"){return "$?";}var t=fixed(v,4);
 if(v&&!/[1-9]/.test(t)){t=fixed(v,Math.min(1-Math.floor(Math.log10(Math.abs(v))),9));}return "$"+t;}
// An amount of a log's cost (v) by Costs.shown's rule, as the static summary's _cost says it: "n/a" not priced,
// "$?" when no request was (all unpriced, or v unknown), a lower bound "\u2265$x" when some were not, else "$x".
function costUsd(v,c){if(!c){return "n/a";}var u=c.unpriced_requests,n=c.requests;u=typeof u==="number"?u:0;
 if(typeof v!=="number"){return u?"$?":"n/a";}if(u&&u>=(typeof n==="number"?n:0)){return "$?";}
 return (u?"\u2265":"")+usd(v);}
function owedUsd(v,c,k){if(!c){return "n/a";}var n=c[k+"_requests"],u=c[k+"_unpriced"];
 if(typeof n!=="number"||typeof u!=="number"){return costUsd(v,c);}var x=c.lost_unknown_requests;
 var w=x?" ("+fmt(x)+" break(s) lost an unknown amount: cache reads not logged)":"";if(!n){return usd(0)+w;}
 if(typeof v!=="number"){return "$?"+w;}return (u?"\u2265":"")+usd(v)+w;}
// A request that is a break whose cache reads were not logged: what it lost is unknown (lost null).
function lostUnknown(r){return r.lost===null&&r.actual===null&&/^break_/.test(r.cls||"");}
// A hit ratio as the CLI and the static summary show it (Python's ".1f": 1/16 is "6.2%"), not toFixed's "6.3%".
function ratio(v){return typeof v==="number"?fixed(100*v,1)+"%":"n/a";}
function where(r){return r.turn===null?r.kind:(r.kind+" "+r.turn+"/"+r.step+"/"+r.attempt);}
function size(r){return r.prompt!==null&&r.prompt!==undefined?r.prompt:(r.counted||0);}
function isBreak(r){return r.t&&r.t.verdict==="break";}
function fails(r){for(var i=0;i<r.f.length;i++){if(r.f[i].fails){return true;}}return false;}
function textOf(m){var c=m&&m.content;if(typeof c==="string"){return c;}if(!Array.isArray(c)){return json(c);}
 var parts=[];for(var i=0;i<c.length;i++){var b=c[i];if(b&&typeof b.text==="string"){parts.push(b.text);}
 else if(b&&b.type==="tool-call"){var a=b.input||b.args||b.arguments||{};
  parts.push("[tool call "+(b.toolName||b.name||"")+"] "+(typeof a==="string"?a:json(a)));}
 else if(b&&b.type==="tool-result"){var o=b.output!==undefined?b.output:b.content;
  parts.push("[tool result] "+(typeof o==="string"||Array.isArray(o)?textOf({content:o}):json(o===undefined?b:o)));}
 else{parts.push(json(b));}}return parts.join("\n");}

// A request's messages: its base request's list with the runs of its delta written over it.
function patch(list,r,hook){if(list.length>r.n){if(hook){for(var p=r.n;p<list.length;p++){hook(list[p],-1);}}list.length=r.n;}
 for(var i=0;i<r.d.length;i++){var at=r.d[i][0],nums=r.d[i][1];for(var j=0;j<nums.length;j++){
  if(hook){if(at+j<list.length){hook(list[at+j],-1);}hook(nums[j],1);}list[at+j]=nums[j];}}return list;}
// Walk the session's requests in order up to position upto, keeping the loop chain's list:
// visit(k, list, count) gets each request's message numbers (count: matching ones, with match).
function walk(s,upto,visit,match){var chain=[],count=0;
 function hook(n,d){if(match[n]){count+=d;}}
 for(var k=0;k<=upto&&k<s.requests.length;k++){var r=s.requests[k];var list,c;
  if(r.u){if(r.b<0){chain.length=0;count=0;}patch(chain,r,match?hook:null);list=chain;c=count;}
  else{list=patch(r.b<0?[]:chain.slice(),r,null);c=0;if(match){for(var i=0;i<list.length;i++){if(match[list[i]]){c++;}}}}
  if(visit(k,list,c)===false){return;}}}
function messagesOf(s,pos){var out=[];walk(s,pos,function(k,list){if(k===pos){out=list.slice();}},null);return out;}

// The totals of a page of several logs: DATA.totals, what usage --json gives for the same logs (its
// total and its rows by model and by day), each amount as usage shows it (row.shown: $x, a lower
// bound "\u2265$x" when a request that owes it was not priced, "$?" when none was).
var AMOUNTS=[["cost","cost"],["no_cache","without cache"],["off_peak","all off-peak"]];
// p: the reusable cache reads the tokens lost are measured from (lost <= reusable - actual), said beside them;
// null: unknown ("?": no request logged its cache reads), undefined: not given.
function lostText(x,p){return fmt(x.lost_tokens)+(x.lost_unknown_requests?"+?":"")+
 (typeof p==="number"?" of "+fmt(p)+" reusable":p===null?" of ? reusable":"")+" ("+x.shown.lost+")";}
function potText(p){return typeof p==="number"?fmt(p):"?";}  // "?": a break of the sum has no verdict
function totals(){var t=DATA.totals;var box=document.getElementById("totals");clear(box);
 if(DATA.sessions.length<2||!t){box.hidden=true;return;}box.hidden=false;var x=t.total;
 add(box,el("h2",null,"Totals of the "+fmt(t.sessions)+" session(s) read"+(t.logs_failed?"; "+fmt(t.logs_failed)+
  " log(s) not read, left out of every sum (lower bounds)":"")));
 var tb=kv(box,[["requests",fmt(x.requests),"requests"],["cost",x.shown.cost,"cost"],["without cache",x.shown.no_cache,"no-cache"],
  ["all off-peak",x.shown.off_peak,"off-peak"],["lost tokens (cost)",lostText(x,t.cache&&t.cache.reusable),"lost"],["breaks cost",x.shown["break"],"break-cost"],
  ["unpriced requests",fmt(x.unpriced_requests)+(x.unpriced_requests?" ("+Object.keys(t.unpriced).map(function(k){
   return t.unpriced[k]+" "+k;}).join(", ")+")":""),"unpriced"]],true);tb.className="totals";
 var c=t.cache;if(c){cacheTotals(box,c);}
 var groups=add(box,el("div",{cls:"groups"}));
 [["model","by_model"],["day (UTC)","by_day"]].forEach(function(g){
  var table=add(add(groups,el("div",{cls:"scroll"})),el("table",{cls:g[1]}));var h=add(table,el("tr"));
  [g[0],"requests"].concat(AMOUNTS.map(function(a){return a[1];}),["lost tokens (cost)","breaks cost","unpriced"]).forEach(function(c){
   add(h,el("th",null,c));});
  t[g[1]].forEach(function(row){var tr=add(table,el("tr",{"data-key":row.key}));add(tr,el("td",{cls:"key"},row.shown.key));
   add(tr,el("td",{cls:"num"},fmt(row.requests)));AMOUNTS.forEach(function(a){add(tr,el("td",{cls:"num"},row.shown[a[0]]));});
   add(tr,el("td",{cls:"num"},lostText(row,row.reusable_cache_read)));add(tr,el("td",{cls:"num"},row.shown["break"]));
   add(tr,el("td",{cls:"num"},row.unpriced_requests?fmt(row.unpriced_requests):""));});});
 if(c&&c.break_summary.length){breakCauses(groups,c);}
 add(box,el("p",{cls:"muted"},"As dsh-audit usage --json gives them for these logs (--by model, --by day): every request of "+
  "each log on the page, priced at its model's rate on its date and in its window"+(x.unpriced_requests?
  "; \u2265$: a lower bound (unpriced requests left out), $?: no request priced":"")+
  "; the cache hit ratio and the breaks by cause as dsh-audit stats gives them (each log's: cache --json)."));}
// The page-wide cache figures (DATA.totals.cache): the hit ratio over every log's prompt tokens, the breaks by cause.
function causesText(byCause){return Object.keys(byCause).map(function(k){return k+" "+fmt(byCause[k]);}).join(", ");}
function cacheTotals(box,c){var causes=causesText(c.breaks_by_cause);
 kv(box,[["hit ratio",ratio(c.hit_ratio)+" ("+(c.cache_read===null?"?":fmt(c.cache_read))+" of "+
  (c.prompt_tokens===null?"?":fmt(c.prompt_tokens))+" prompt tokens)","hit"],
  ["breaks",fmt(c.breaks)+(causes?" ("+causes+")":""),"breaks"]],true).className="cache-totals";}

// The verdict in words (DATA.headline: what failed, by cause, then what did not); a page of no log
// says so, neither passed nor failed, and shows nothing else.
function overallSummary(){
 document.getElementById("title").textContent="dsh-audit report";
 var s=document.getElementById("summary");clear(s);var h=DATA.headline;var c=DATA.counts;
 add(s,el("span",{id:"headline",cls:{passed:"pass",failed:"failed"}[h.state]||"nothing"},h.text));
 if(!DATA.sessions.length){add(s,el("span",{cls:"muted"}," \u00b7 policy "+DATA.policy+" \u00b7 "+DATA.tool));
  ["search-bar","sessions"].forEach(function(id){document.getElementById(id).hidden=true;});
  document.querySelector("main").hidden=true;
  document.body.insertBefore(el("p",{id:"no-log",cls:"muted"},NO_LOG),document.getElementById("search-bar"));return;}
 add(s,el("span",{cls:"muted"}," \u00b7 "+DATA.sessions.length+" log(s) \u00b7 "+c.error+" error(s), "+
  c.warning+" warning(s), "+c.info+" info, "+c.failing+" failing \u00b7 policy "+DATA.policy+" \u00b7 "+DATA.tool));}

// The session list (pages with several logs): DATA.order is failing-first, children under their parent.
function label(s){return s.overview.title||s.session_id||s.path;}
function relation(s,withParent){var f=s.family;if(!f){return "";}
 return f.relation+(withParent?" of "+f.parent_id:"")+(f.seed!==null?" at seq "+f.seed:"");}
function sessionText(k){var s=DATA.sessions[k];return [s.overview.title||"",s.session_id||"",s.project||"",s.path,s.verdict,relation(s,true)].join("\n").toLowerCase();}
function lowMessages(k){return lowered[k]||(lowered[k]=DATA.sessions[k].messages.map(function(m){return textOf(m).toLowerCase();}));}
function sessionMatches(k,q){if(sessionText(k).indexOf(q)>=0){return true;}var low=lowMessages(k);
 for(var i=0;i<low.length;i++){if(low[i].indexOf(q)>=0){return true;}}return false;}
// Which entries of DATA.order to show for query q: 1 matches, 2 only a child of it matches (context), 0 hidden.
function listShown(q){var shown=[];if(!q){DATA.order.forEach(function(){shown.push(1);});return shown;}var stack=[];
 DATA.order.forEach(function(o,at){var depth=o[1];stack.length=Math.min(stack.length,depth);
  var hit=sessionMatches(o[0],q);shown.push(hit?1:0);
  if(hit){stack.forEach(function(a){if(!shown[a]){shown[a]=2;}});}stack.push(at);});return shown;}
function entry(list,k,depth,how){var s=DATA.sessions[k];var o=s.overview;
 var cls=(k===state.session?"sel ":"")+(s.failed?"fail ":s.unexplained||unread(s)?"warn ":"")+(depth?"child ":"")+(how===2?"context":"");
 var li=add(list,el("li",{cls:cls.trim(),"data-session":String(k),"data-depth":String(depth),
  style:depth?"margin-left:"+(14*Math.min(depth,6))+"px":""}));
 var line=add(li,el("div",{cls:"line"}));add(line,el("span",{cls:"mark"},s.failed?"\u2716":unread(s)?"\u26a0":"\u2714"));
 add(line,el("a",{cls:"name",href:sessionHash(k),title:[label(s),s.session_id||"",s.path]},label(s)));
 if(s.family){add(line,el("span",{cls:"rel"},relation(s,s.family.parent===null)));}
 var at=add(li,el("div",{cls:"where"}));add(at,el("span",{cls:"project",title:"project (the log's cwd)"},s.project||"no project"));
 add(at,el("span",{cls:"sid",title:s.session_id||""},s.short_id||"no id"));
 var meta=add(li,el("div",{cls:"meta"}));var total=o.cost&&o.cost.cost_usd?o.cost.cost_usd.total:null;
 if(unread(s)){add(meta,el("span",{cls:"unread"},s.unreadable?"could not be read":"refused"));add(meta,el("span",{cls:"verdict"},s.verdict));return;}
 spanOf(add(meta,el("span",{cls:"when"})),s.activity[0],s.activity[1],"no timestamps");
 add(meta,el("span",{cls:"count"},o.requests+" request(s)"));
 add(meta,el("span",{cls:"breaks"},o.break_details.length+" break(s)"+(s.unexplained?" ("+s.unexplained+" unexplained)":"")));
 add(meta,el("span",{cls:"cost"},costUsd(total,o.cost)));add(meta,el("span",{cls:"verdict"},s.verdict));}

function nav(){var n=document.getElementById("sessions");clear(n);var many=DATA.sessions.length>1;n.hidden=!many;
 var count=document.getElementById("session-count");count.textContent="";if(!many){return;}
 var q=query();var shown=listShown(q);var matching=0,visible=0;shown.forEach(function(v){if(v===1){matching++;}if(v){visible++;}});
 if(q){count.textContent=matching+" of "+DATA.sessions.length+" session(s) match";}
 add(n,el("h2",null,"Sessions ("+DATA.sessions.length+")"));var list=add(n,el("ol",{id:"session-list"}));
 var limit=state.navLimit||PAGE;var drawn=0;
 for(var at=0;at<DATA.order.length&&drawn<limit;at++){if(shown[at]){entry(list,DATA.order[at][0],DATA.order[at][1],shown[at]);drawn++;}}
 if(drawn<visible){var more=add(n,el("button",{cls:"more"},"show "+(visible-drawn)+" more"));
  more.addEventListener("click",function(){state.navLimit=limit+PAGE;nav();});}}

function legend(){var l=document.getElementById("legend");clear(l);
 [["prompt","prompt tokens"],["expected","expected cache read"],["actual","actual cache read"]].forEach(function(p){
  var s=add(l,el("span"));add(s,el("i",{cls:"bar "+p[0]}));add(s,textNode(p[1]));});
 [["var(--warn)","break the policy allows"],["var(--brk)","break or request that fails"]].forEach(function(p){
  var b=add(l,el("span"));add(b,el("i",{style:"background:"+p[0]}));add(b,textNode(p[1]));});}

function prefix(){return state.session?"s"+state.session+"-":"";}
// The link to request (or break) i of the k-th log: #request-i on a page of one log, else
// #<anchor>/request-i, the anchor being the log's session id (URL-escaped; DATA.sessions[k].anchor),
// so a link does not change when the page lists other logs.
// The link to the k-th log itself: #<anchor> (its session id, URL-escaped; a copy of a session
// #<id>~N), so a link copied from one report opens the same log in another; #session-K (the
// page's own form, which fromHash still maps) only for an id no URL can hold (a lone surrogate).
// The escape keeps ":" and "@" as they are (a fragment may hold them, an id such as "fork:review"
// reads as itself); "/", "%", "#", spaces and the rest are percent-escaped (fromHash decodes them).
function anchorOf(k){return encodeURIComponent(DATA.sessions[k].anchor).replace(/%3A/g,":").replace(/%40/g,"@");}
function sessionHash(k){try{return "#"+anchorOf(k);}catch(e){return "#session-"+k;}}
function hashFor(k,kind,i){if(DATA.sessions.length<2){return "#"+kind+"-"+i;}
 try{return "#"+anchorOf(k)+"/"+kind+"-"+i;}
 catch(e){return "#s"+k+"-"+kind+"-"+i;}}  // an id no URL can hold (a lone surrogate): the page's own form
// A log that could not be read: its error is all there is to show (no chart, no n/a table).
function unread(s){return !!s.error&&!s.requests.length;}
function positions(){var s=DATA.sessions[state.session];if(state.filter){return state.filter;}
 var all=[];for(var k=0;k<s.requests.length;k++){all.push(k);}return all;}

// Tick values of the y axis: 0 and multiples of a 1-2-2.5-5 step (a whole number), at most five up to max.
function ticks(max){var raw=max/4;var p=Math.pow(10,Math.floor(Math.log(raw)/Math.LN10));var m=raw/p;
 var step=Math.max(1,Math.ceil((m<=1?1:m<=2?2:m<=2.5?2.5:m<=5?5:10)*p));var out=[];for(var v=0;v<=max;v+=step){out.push(v);}return out;}
// The axis is as wide as its longest label (in ch of its 10px tabular digits, plus the tick mark's
// room), so a label of any magnitude is whole: a fixed gutter cut "10000000" at the chart's edge.
function axis(t,max,height){var values=ticks(max),widest=0;
 values.forEach(function(v){widest=Math.max(widest,fmt(v).length);});
 var a=add(t,el("div",{cls:"yaxis","aria-hidden":"true",style:"flex-basis:max(58px,calc("+widest+"ch + 12px))"}));
 add(a,el("span",{cls:"axis-title"},"tokens"));add(a,el("span",{cls:"xtitle"},"request"));
 values.forEach(function(v){add(a,el("span",{cls:"tick","data-value":String(v),style:"bottom:"+(14+height*v/max)+"px"},fmt(v)));});}
function timeline(){var s=DATA.sessions[state.session];var t=document.getElementById("timeline");clear(t);
 var list=positions();var pages=Math.max(1,Math.ceil(list.length/PAGE));if(state.page>=pages){state.page=pages-1;}
 var pager=document.getElementById("pager");clear(pager);
 if(pages>1){var prev=add(pager,el("button",{id:"prev-page"},"\u2190 earlier"));prev.disabled=state.page===0;
  prev.addEventListener("click",function(){state.page--;timeline();});
  add(pager,el("span",{cls:"muted"},"requests "+(state.page*PAGE+1)+"\u2013"+Math.min(list.length,(state.page+1)*PAGE)+" of "+list.length));
  var next=add(pager,el("button",{id:"next-page"},"later \u2192"));next.disabled=state.page===pages-1;
  next.addEventListener("click",function(){state.page++;timeline();});}
 var slice=list.slice(state.page*PAGE,(state.page+1)*PAGE);var max=1;
 slice.forEach(function(pos){max=Math.max(max,size(s.requests[pos]));});axis(t,max,170);
 var last=slice.length?s.requests[slice[slice.length-1]].i:0;
 var every=slice.length<=40?(last<100?1:2):slice.length<=100?5:10;
 slice.forEach(function(pos){var r=s.requests[pos];
  var col=add(t,el("div",{cls:"req"+(r.kind!=="loop"?" aux":"")+(fails(r)?" finding":"")+(state.request===pos?" sel":""),
   role:"listitem",id:prefix()+"request-"+r.i,"data-request":String(r.i),title:"request "+r.i+" ("+where(r)+"): prompt "+fmt(size(r))+
   ", expected "+(r.expected===null?"?":fmt(r.expected))+", actual "+(r.actual===null?"?":fmt(r.actual))+(r.cls?", "+r.cls:"")}));
  [["prompt",size(r)],["expected",r.expected||0],["actual",r.actual||0]].forEach(function(p){
   add(col,el("div",{cls:"bar "+p[0],style:"height:"+Math.max(1,Math.round(170*p[1]/max))+"px"}));});
  add(col,el("span",{cls:"idx"},r.i%every===0?String(r.i):""));
  col.addEventListener("click",function(){open(pos,false);});
  if(isBreak(r)){var ok=!fails(r);var m=add(col,el("button",{cls:"break-marker"+(ok?" allowed":""),id:prefix()+"break-"+r.i,
    "data-request":String(r.i),title:"break: "+r.t.cause},"\u26a1"+(r.t.cause||"")));
   m.addEventListener("click",function(ev){ev.stopPropagation();open(pos,true);});}});}

function findingList(parent,items){items.forEach(function(f){add(parent,el("div",{cls:"finding-item"+(f.fails?"":" ok")},
 f.rule+" "+f.severity+(f.fails?" (fails)":f.baselined?" (baselined)":"")+": "+f.message+(f.hint?" (hint: "+f.hint+")":"")+(f.line?"  ["+f.path+":"+f.line+(f.seq!==null?" seq "+f.seq:"")+"]":"")));});}

// A table of [key, value(, data-key)] rows; a value that is a function fills its cell (a time span: spanOf).
// What the drill-down's two prompt sizes are (said under its Cache table).
var COUNTED="prompt tokens: the prompt size the log's usage gives (input + cache read + cache write); counted tokens: "+
 "dsh-audit's own count of the rebuilt prompt (DeepSeek V4 tokenizer, else UTF-8 bytes / 4), which the cache analysis "+
 "scales onto the logged size.";
// A cell of text: one word of up to 40 characters (a model, "header_change", "claude-sonnet-4-5")
// is kept on one line, not broken at its hyphens: its table scrolls sideways instead.
function cell(text){text=text===undefined?"":String(text);
 return el("td",/\s/.test(text)||text.length>40?null:{cls:"word"},text);}
function kv(parent,rows,keyed){var tb=add(parent,el("table"));rows.forEach(function(r){if(r[1]===undefined){return;}
 var tr=add(tb,el("tr",keyed&&r[2]?{"data-key":r[2]}:null));add(tr,el("th",null,r[0]));
 if(typeof r[1]==="function"){r[1](add(tr,el("td")));}else{add(tr,cell(r[1]===null?"-":String(r[1])));}});return tb;}
// A time span "a \u2013 b" (or none), each date-time kept on one line: a narrow page wraps it at the dash only.
function spanOf(parent,a,b,none){if(!a){add(parent,textNode(none));return parent;}
 add(parent,el("span",{cls:"date"},a));add(parent,textNode(" \u2013 "));add(parent,el("span",{cls:"date"},b));
 return parent;}

function overview(){var s=DATA.sessions[state.session];var o=s.overview;var box=document.getElementById("overview");clear(box);
 if(unread(s)){return;}
 var cost=o.cost||null;var total=cost&&cost.cost_usd?cost.cost_usd.total:null;
 var causes=causesText(o.breaks_by_cause);
 var unpriced=cost&&cost.unpriced?Object.keys(cost.unpriced).map(function(k){return cost.unpriced[k]+" "+k;}).join(", "):"";
 var tb=kv(box,[["title",o.title===null?"-":o.title,"title"],
  ["model(s)",o.models.length?o.models.join(", "):"-","models"],["requests",o.requests,"requests"],
  ["breaks",o.break_details.length+(causes?" ("+causes+")":""),"breaks"],
  ["hit ratio",ratio(o.hit_ratio)+(o.prompt_tokens!==null?" ("+fmt(o.cache_read)+" of "+fmt(o.prompt_tokens)+" prompt tokens)":""),"hit"],
  ["cost",costUsd(total,cost)+(unpriced?" (unpriced: "+unpriced+")":""),"cost"],
  ["breaks cost",owedUsd(cost&&cost.break_cost_usd,cost,"break"),"break-cost"],
  ["without cache",costUsd(cost&&cost.no_cache_cost_usd,cost),"no-cache"],
  ["requests sent",function(td){spanOf(td,o.first,o.last,"-");},"span"]],true);
 // what the same requests would have cost in the off-peak window (the ledger's off_peak_cost_usd,
 // as usage --json gives it; one-rate requests at their cost): a figure row of its own (data-figure),
 // after the keyed rows, in every log's summary
 var row=add(tb,el("tr",{"data-figure":"off-peak"}));
 add(row,el("th",null,"all off-peak"));add(row,el("td",null,costUsd(cost&&cost.off_peak_cost_usd,cost)));
 if(o.break_details.length){if(o.break_details.length>LIST_OPEN||o.break_summary.length>1){breakCauses(box,o);}breakList(box,o);}}
// The breaks by cause (when the list is collapsed or has several causes; the page's totals: every log's):
// how many, the reusable cache reads of those that lost tokens to the cause (what the tokens are measured
// from: a break's whole base under each cause it lost to, as stats' breaks by cause sums it; its header
// says so), the tokens, what they cost, how many lost nothing (the totals: a count).
function breakCauses(box,o){var tb=add(add(box,el("div",{cls:"scroll"})),el("table",{cls:"break-causes"}));var h=add(tb,el("tr"));
 ["break cause","breaks","reusable of breaks that lost","tokens lost","cost","lost nothing"].forEach(function(c){add(h,el("th",null,c));});
 o.break_summary.forEach(function(c){var tr=add(tb,el("tr",{"data-cause":c.cause}));add(tr,el("td",null,c.cause));
  add(tr,el("td",{cls:"num"},fmt(c.count)));add(tr,el("td",{cls:"num"},potText(c.pot)));
  add(tr,el("td",{cls:"num"},fmt(c.lost)+(c.unknown?" + ? ("+c.unknown+" unknown)":"")));
  var none=typeof c.nothing==="number"?c.nothing:c.nothing.length,u=c.unpriced+c.unknown;
  add(tr,el("td",{cls:"num"},u&&u>=c.count-none?"$?":(u?"\u2265":"")+usd(c.cost)));add(tr,el("td",{cls:"num"},fmt(none)));});}
// Every break, one a line while they are few; past LIST_OPEN, a collapsed list where the breaks that
// lost tokens are one a line and those that lost nothing are one line per cause.
var LIST_OPEN=10,LIST_MAX=200;
// A break is drawn in the legend's colours, as its marker: red when it fails, orange when the policy allows it.
function breakItem(ul,b){var li=add(ul,el("li"));
 add(li,el("a",{href:hashFor(state.session,"break",b.i),cls:b.fails?"fails":"allowed"},"break at request "+b.i));
 add(li,textNode(": "+(b.cause||"?")+", lost "+(b.lost===null?"?":b.lost)+(typeof b.pot==="number"?" of "+fmt(b.pot)+
  " reusable":"")+" token(s), "+usd(b.cost)));}
function breakList(box,o){if(o.break_details.length<=LIST_OPEN){var ul=add(box,el("ul",{cls:"break-list"}));
  o.break_details.forEach(function(b){breakItem(ul,b);});return;}
 var losing=o.break_details.filter(function(b){return b.lost!==0;});var nothing=o.break_details.length-losing.length;
 var det=add(box,el("details",{cls:"break-details"}));
 var unknown=losing.filter(function(b){return b.lost===null;}).length;
 add(det,el("summary",null,"all "+fmt(o.break_details.length)+" breaks: "+fmt(losing.length-unknown)+" lost tokens, "+
  (unknown?fmt(unknown)+" lost an unknown amount, ":"")+fmt(nothing)+" lost nothing (one line per cause)"));var list=add(det,el("ul",{cls:"break-list"}));
 losing.slice(0,LIST_MAX).forEach(function(b){breakItem(list,b);});
 if(losing.length>LIST_MAX){add(list,el("li",{cls:"muted"},(losing.length-LIST_MAX)+" more: see the timeline's markers"));}
 o.break_summary.forEach(function(c){if(!c.nothing.length){return;}var li=add(list,el("li",{cls:"nothing","data-cause":c.cause}));
  add(li,textNode(c.cause+": "+fmt(c.nothing.length)+" break(s) lost nothing, at request(s) "));
  c.nothing.slice(0,LIST_MAX).forEach(function(i,at){if(at){add(li,textNode(", "));}
   add(li,el("a",{href:hashFor(state.session,"break",i)},String(i)));});
  if(c.nothing.length>LIST_MAX){add(li,textNode(" and "+(c.nothing.length-LIST_MAX)+" more"));}});}

function familyLine(info,s){var f=s.family;if(!f){return;}var p=add(info,el("p",{cls:"family"}));
 add(p,textNode(f.relation+" of "));
 if(f.parent!==null){var ps=DATA.sessions[f.parent];
  add(p,el("a",{href:sessionHash(f.parent)},ps.overview.title?ps.overview.title+" ("+f.parent_id+")":f.parent_id));}
 else{add(p,el("span",{cls:"parent"},f.parent_id));}
 if(f.seed!==null){add(p,textNode(" at seq "+f.seed));}
 if(f.parent===null){add(p,textNode("; the parent session is not in this report"));}}

function sessionInfo(){var s=DATA.sessions[state.session];
 document.getElementById("session-title").textContent=inert(label(s));
 var section=document.getElementById("session");section.setAttribute("data-session",String(state.session));
 var info=document.getElementById("session-info");clear(info);add(info,el("span",{id:"session-"+state.session,cls:"anchor","data-anchor":s.anchor}));
 familyLine(info,s);
 add(info,el("div",{cls:"verdict "+(s.failed?"failed":unread(s)?"muted":"pass")},s.verdict));
 if(!unread(s)){spanOf(add(info,el("div",{cls:"muted"},"activity: ")),s.activity[0],s.activity[1],"no timestamps");}
 add(info,el("div",{cls:"muted ident"},(s.project?"project "+s.project+" \u00b7 ":"")+(s.session_id||"")+" \u00b7 "+s.path));
 if(!unread(s)){add(info,el("div",{cls:"muted"},"capture: "+(s.capture||"none")+" \u00b7 "+s.requests.length+" request(s)"));}
 if(s.error){add(info,el("div",{cls:"failed error"},s.error));}
 var lf=document.getElementById("log-findings");clear(lf);
 if(s.findings.length){add(lf,el("h3",null,"Findings about the log"));findingList(lf,s.findings);}
 if(state.session===0&&DATA.unattached.length){add(lf,el("h3",null,"Captures no log explains"));findingList(lf,DATA.unattached);}}

function messageBlock(parent,s,n,cls){var m=s.messages[n];var d=add(parent,el("div",{cls:"msg"+(cls?" "+cls:"")}));
 add(d,el("div",{cls:"role"},((m&&m.role)||"?")+(s.mseq[n]!==null?" \u00b7 seq "+s.mseq[n]:"")));
 add(d,el("pre",{cls:"text"},textOf(m)));}

function messages(parent,s,list,limit){var box=add(parent,el("div",{cls:"messages"}));
 var start=Math.max(0,list.length-limit);if(start>0){var more=add(box,el("button",{cls:"more"},"show the "+start+" earlier message(s)"));
  more.addEventListener("click",function(){clear(box);list.forEach(function(n){messageBlock(box,s,n);});});}
 list.slice(start).forEach(function(n){messageBlock(box,s,n);});}

function previousOf(s,r){if(!r.t||r.t.previous===null||r.t.previous===undefined){return -1;}
 if(r.t.previous_session_id&&r.t.previous_session_id!==s.session_id){return -1;}
 for(var i=0;i<s.requests.length;i++){if(s.requests[i].i===r.t.previous){return i;}}return -1;}

function diffPrevious(parent,s,pos,b){var r=s.requests[pos];var p=previousOf(s,r);add(parent,el("h3",null,"Against the previous request"));
 if(!r.t){add(parent,el("p",{cls:"muted"},"no attribution"));return;}
 if(p<0){add(parent,el("p",{cls:"muted"},r.t.previous===null?"first request of its conversation":
  "compared with request "+r.t.previous+" of session "+r.t.previous_session_id));}
 if(r.t.fields.length){var tb=add(parent,el("table",{cls:"fields"}));var h=add(tb,el("tr"));
  ["field","before","after","prompt-affecting"].forEach(function(c){add(h,el("th",null,c));});
  r.t.fields.forEach(function(f){var tr=add(tb,el("tr"));add(tr,cell(f.field));add(tr,cell(JSON.stringify(f.before)));
   add(tr,cell(JSON.stringify(f.after)));add(tr,el("td",null,f.prompt_affecting?"yes":"no"));});
  // what changed, as dsh-audit explain says it (a system prompt: its changed lines, not only its length)
  if(r.t.explain&&r.t.explain.length){add(parent,el("div",{cls:"muted"},"the change, as dsh-audit explain says it:"));
   add(parent,el("pre",{cls:"field-diff"},r.t.explain.join("\n")));}}
 if(p<0){return;}var a=messagesOf(s,p);var k=0;while(k<a.length&&k<b.length&&a[k]===b[k]){k++;}
 add(parent,el("p",null,k+" leading message(s) shared; "+(a.length-k)+" removed, "+(b.length-k)+" added"+
  (s.requests[p].h!==r.h?"; header differs":"")));
 var box=add(parent,el("div",{cls:"msgdiff"}));
 a.slice(k,k+20).forEach(function(n){messageBlock(box,s,n,"gone");});
 b.slice(k,k+20).forEach(function(n){messageBlock(box,s,n,"new");});}

function capture(parent,r){add(parent,el("h3",null,"Against the capture"));var c=r.cap;
 if(!c){add(parent,el("p",{cls:"muted"},"no captured body for this request"));return;}
 kv(parent,[["verdict",c.verdict],["capture",c.where],["first differing byte",c.first_offset],["note",c.note],
  ["equivalence",c.equivalence.length?c.equivalence.join(", "):undefined]]);
 if(c.expected_context!==null){add(parent,el("div",{cls:"muted"},"rebuilt:"));add(parent,el("pre",null,c.expected_context));
  add(parent,el("div",{cls:"muted"},"captured:"));add(parent,el("pre",null,c.actual_context));}
 c.differences.forEach(function(d){add(parent,el("div",null,d.path+" ("+d.change+"): "+d.summary));});
 if(c.more_differences){add(parent,el("div",{cls:"muted"},c.more_differences+" more difference(s)"));}}

// A transition's verdict in words (attribution's VERDICTS); only a break is drawn as one.
var VERDICTS={first:"first request",extension:"extends the previous request",cache_safe_change:"cache-safe change",
 "break":"cache break"};
function setHash(h){try{history.replaceState(null,"",h);}catch(e){/* a page opened from a sandbox: no deep link */}}

function open(pos,asBreak){state.request=pos;var s=DATA.sessions[state.session];var r=s.requests[pos];
 var cols=document.querySelectorAll("#timeline .req");for(var i=0;i<cols.length;i++){cols[i].classList.toggle("sel",
  cols[i].getAttribute("data-request")===String(r.i));}
 setHash(hashFor(state.session,asBreak&&isBreak(r)?"break":"request",r.i));
 var d=document.getElementById("detail");clear(d);
 add(d,el("h2",null,"Request "+r.i+" \u00b7 "+where(r)));
 if(r.t){var brk=r.t.verdict==="break";var line=add(d,el("p",{cls:"transition "+(brk?"is-break":"is-safe")}));
  add(line,textNode((VERDICTS[r.t.verdict]||r.t.verdict)+" ("+r.t.relation+")"));
  if(r.t.cause){add(line,textNode(brk?" \u00b7 cause ":" \u00b7 "));add(line,el("span",{cls:"cause "+(brk?(fails(r)?"brk":"allowed"):"safe")},r.t.cause));
   if(r.t.verdict==="cache_safe_change"){add(line,textNode(" \u00b7 the prompt prefix is intact: no cache read lost"));}}
  if(r.t.other_causes.length){add(line,textNode(" + "+r.t.other_causes.join(", ")));}
  if(r.t.detail){add(d,el("p",{cls:"detail"},r.t.detail));}
  if(r.t.divergence){add(d,el("p",{cls:"muted"},"first divergence: "+r.t.divergence.segment+
   (r.t.divergence.message_index!==null?" message "+r.t.divergence.message_index:"")+
   (r.t.divergence.offset!==null?" byte "+r.t.divergence.offset:"")));}
  if(r.t.evidence.length){add(d,el("h3",null,"Evidence events"));var ul=add(d,el("ul",{cls:"evidence"}));
   r.t.evidence.forEach(function(e){var li=add(ul,el("li"));add(li,el("b",null,"seq "+e.seq+" "+e.type));
    add(li,el("pre",null,json(e.data)));});}
  r.t.notes.forEach(function(n){add(d,el("p",{cls:"muted"},n));});}
 if(r.f.length){add(d,el("h3",null,"Findings"));findingList(d,r.f);}
 add(d,el("h3",null,"Cost"));var c=kv(d,[["model",r.model+(r.billed&&r.billed!==r.model?" (billed as "+r.billed+")":""),"model"],
  ["window",r.window,"window"],["sent",r.sent,"sent"],
  ["cost",r.cost?usd(r.cost.total):"unpriced: "+r.unpriced,"cost"],
  ["break cost",lostUnknown(r)?"$? (cache reads not logged: what it lost of the cache is unknown)":
   r.lcost!==null?usd(r.lcost)+" ("+r.lost+" lost of "+r.pot+" reusable token(s))":
   r.lost&&r.unpriced&&/^break_/.test(r.cls||"")?"$? ("+r.lost+" lost of "+r.pot+" reusable token(s), unpriced: "+r.unpriced+")":
   undefined,"break-cost"]],true);
 c.className="cost";
 add(d,el("h3",null,"Cache"));kv(d,[["prompt tokens",r.prompt],["counted tokens",r.counted],["expected cache read",r.expected],
  ["actual cache read",r.actual],["reusable",r.pot],["lost",lostUnknown(r)?"?":r.lost],["classification",r.cls],["reason",r.ccause]]);
 add(d,el("p",{cls:"muted legend"},COUNTED));
 var list=messagesOf(s,pos);
 capture(d,r);diffPrevious(d,s,pos,list);
 add(d,el("h3",null,"Header"));kv(d,[["header seq",r.hseq],["reason",r.hreason],["first chunk seq",r.seq]]);
 add(d,el("pre",{cls:"header"},r.h===null?"none":json(s.headers[r.h])));
 add(d,el("h3",null,"Messages ("+list.length+")"));messages(d,s,list,30);
 if(r.usage){add(d,el("h3",null,"Usage"));add(d,el("pre",null,json(r.usage)));}}

// Search: the distinct messages are matched once; a request matches when its list holds one.
// The one search box also filters the session list (title, id, path, verdict, messages): plain
// lower-case substring tests on text, never markup, a pattern or code.
var lowered={};
function query(){return document.getElementById("search").value.trim().toLowerCase();}
function search(query){var s=DATA.sessions[state.session];var q=query.trim().toLowerCase();var count=document.getElementById("search-count");
 if(unread(s)){return;}
 if(!q){state.filter=null;count.textContent="";state.page=0;timeline();return;}
 var low=lowMessages(state.session);
 var match=low.map(function(t){return t.indexOf(q)>=0;});var found=[];
 walk(s,s.requests.length-1,function(k,list,c){if(c>0){found.push(k);}},match);
 state.filter=found;state.page=0;count.textContent=found.length+" of "+s.requests.length+" request(s) match";timeline();}

function select(i){state.session=i;state.page=0;state.request=null;state.filter=null;}

function render(){nav();sessionInfo();overview();var d=document.getElementById("detail");clear(d);
 var shown=DATA.sessions[state.session];if(unread(shown)){["legend","pager","timeline"].forEach(function(id){clear(document.getElementById(id));});
  document.getElementById("timeline").hidden=true;document.getElementById("search-count").textContent="";
  add(d,el("p",{cls:"muted"},(shown.unreadable?"This log could not be read":"DSH refuses this log")+
   ": no request to show."));return;}
 document.getElementById("timeline").hidden=false;legend();var q=query();if(q){search(q);}else{
 document.getElementById("search-count").textContent="";timeline();}
 add(d,el("p",{cls:"muted"},"Click a request or a break marker."));}

function openIndex(i,asBreak){var s=DATA.sessions[state.session];for(var k=0;k<s.requests.length;k++){
 if(s.requests[k].i===i){if(asBreak&&!isBreak(s.requests[k])){return false;}var list=positions();var at=list.indexOf(k);
  if(at<0){state.filter=null;document.getElementById("search").value="";document.getElementById("search-count").textContent="";
   list=positions();at=k;nav();}
  state.page=Math.floor(at/PAGE);timeline();open(k,asBreak);
  var target=document.getElementById(prefix()+(asBreak?"break-":"request-")+i);
  if(target&&target.scrollIntoView){target.scrollIntoView({block:"nearest",inline:"center"});}return true;}}return false;}

function showSession(k){if(k!==state.session){select(k);render();}var top=document.getElementById("session");
 if(top.scrollIntoView){top.scrollIntoView({block:"start"});}}

// Deep links: #<anchor>/request-N and #<anchor>/break-N (the log's session id, URL-escaped), #<anchor>
// (a log); the older forms #request-N / #break-N (the one log that has request N), #sK-request-N and
// #session-K (the K-th log, from 0). A link naming no log or request of this page says so in the
// detail pane; it never opens another one.
function linkError(words,candidates,kind,i){var d=document.getElementById("detail");clear(d);
 var p=add(d,el("p",{cls:"failed link-error"},words));
 if(candidates&&candidates.length){add(p,textNode(" Open it in: "));candidates.slice(0,20).forEach(function(k,at){
  if(at){add(p,textNode(", "));}
  add(p,el("a",{href:hashFor(k,kind,i)},label(DATA.sessions[k])+" ("+(DATA.sessions[k].project?DATA.sessions[k].project+", ":"")+
   (DATA.sessions[k].short_id||DATA.sessions[k].anchor)+")"));});}
 return true;}
function byAnchor(key){if(key===null){return -1;}for(var k=0;k<DATA.sessions.length;k++){if(DATA.sessions[k].anchor===key){return k;}}
 var found=-1;for(k=0;k<DATA.sessions.length;k++){if(DATA.sessions[k].session_id===key){if(found>=0){return -1;}found=k;}}return found;}
function decoded(t){try{return decodeURIComponent(t);}catch(e){return null;}}
function hasRequest(s,i,asBreak){for(var k=0;k<s.requests.length;k++){if(s.requests[k].i===i){return !asBreak||isBreak(s.requests[k]);}}
 return false;}
function openIn(si,kind,i){if(si!==state.session){select(si);render();}
 if(!openIndex(i,kind==="break")){linkError("no "+kind+" "+i+" in this log");}return true;}
function fromHash(){var h=location.hash;if(!h||h==="#"){return false;}
 var m=/^#(.+)\/(request|break)-(\d+)$/.exec(h);
 if(m){var key=decoded(m[1]);var k=byAnchor(key);
  if(k<0){return linkError("no session \u201c"+(key===null?m[1]:key)+"\u201d in this report: the link "+h+" opens nothing here.");}
  return openIn(k,m[2],parseInt(m[3],10));}
 var whole=byAnchor(decoded(h.slice(1)));if(whole>=0){showSession(whole);return true;}
 var one=/^#session-(\d+)$/.exec(h);
 if(one){var n=parseInt(one[1],10);if(n<DATA.sessions.length){showSession(n);return true;}
  return linkError("no session "+n+" in this report (it lists "+DATA.sessions.length+").");}
 var old=/^#(?:s(\d+)-)?(request|break)-(\d+)$/.exec(h);
 if(old){var i=parseInt(old[3],10);
  if(old[1]!==undefined){var si=parseInt(old[1],10);if(si>=DATA.sessions.length){return linkError("no session "+si+" in this report.");}
   return openIn(si,old[2],i);}
  var having=[];for(var c=0;c<DATA.sessions.length;c++){if(hasRequest(DATA.sessions[c],i,old[2]==="break")){having.push(c);}}
  if(having.length===1||DATA.sessions.length===1){return openIn(having.length?having[0]:0,old[2],i);}
  if(!having.length){return linkError("no "+old[2]+" "+i+" in this report.");}
  return linkError("the link "+h+" names no session, and "+having.length+" sessions of this report have "+old[2]+" "+i+".",
   having,old[2],i);}
 if(document.getElementById(h.slice(1))){return false;}
 return linkError("the link "+h+" names no session or request of this report.");}

overallSummary();totals();
if(DATA.sessions.length){state.session=DATA.order[0][0];render();fromHash();
 document.getElementById("search").addEventListener("input",function(ev){search(ev.target.value);nav();});
 window.addEventListener("hashchange",fromHash);}
window.dshReport={open:function(i){return openIndex(i,false);},session:function(i){select(i);render();},
 messages:function(pos){return messagesOf(DATA.sessions[state.session],pos);}};
})();
""".replace("__PAGE__", str(PAGE)).replace("__NO_LOG__", json.dumps(NO_LOG))
