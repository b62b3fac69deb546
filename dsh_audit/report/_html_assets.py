"""The inline stylesheet and script of the HTML report (no external resources).

The script only ever writes log text with ``textContent`` (``el()`` below); it never assigns
``innerHTML``. It draws the timeline :data:`PAGE` requests at a time and a request's messages
only when the request is opened.
"""

from __future__ import annotations

__all__ = ["CSS", "PAGE", "SCRIPT"]

PAGE = 200

CSS = """
:root{--fg:#1d2330;--muted:#667085;--bg:#fff;--panel:#f6f7f9;--line:#d0d5dd;--prompt:#c7d2fe;--exp:#60a5fa;
--act:#16a34a;--brk:#dc2626;--warn:#d97706}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg);display:grid;grid-template-columns:260px 1fr;grid-template-rows:auto 1fr;min-height:100vh}
header{grid-column:1/3;padding:10px 16px;border-bottom:1px solid var(--line);display:flex;gap:16px;align-items:baseline}
h1{font-size:18px;margin:0}h2{font-size:16px;margin:4px 0 6px}h3{font-size:14px;margin:14px 0 4px}
nav{border-right:1px solid var(--line);padding:8px;overflow:auto;max-height:calc(100vh - 48px)}
nav button{display:block;width:100%;text-align:left;border:0;background:none;padding:6px;border-radius:6px;
cursor:pointer;font:inherit;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
nav button.sel{background:var(--panel);font-weight:600}nav .fail{color:var(--brk)}
main{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px;padding:8px 12px;min-width:0}
section{min-width:0}#detail{background:var(--panel);border-radius:8px;padding:8px 12px;overflow:auto;
max-height:calc(100vh - 64px)}
.muted{color:var(--muted)}.pass{color:var(--act);font-weight:600}.failed{color:var(--brk);font-weight:600}
.timeline{display:flex;align-items:flex-end;gap:2px;height:320px;border-bottom:1px solid var(--line);
overflow-x:auto;overflow-y:hidden;position:relative}
.req{position:relative;display:flex;align-items:flex-end;justify-content:center;gap:1px;height:100%;min-width:18px;cursor:pointer;
padding:0 1px 14px;border-radius:3px}
.req:hover,.req.sel{background:#eef2ff}.req .bar{width:4px;min-height:1px}
.bar.prompt{background:var(--prompt)}.bar.expected{background:var(--exp)}.bar.actual{background:var(--act)}
.req.aux{opacity:.6}.req .idx{position:absolute;bottom:0;left:0;font-size:10px;color:var(--muted)}
.break-marker{position:absolute;top:2px;left:50%;transform:translateX(-50%);border:0;border-radius:8px;
background:var(--brk);color:#fff;font-size:10px;line-height:14px;padding:4px 1px;cursor:pointer;writing-mode:vertical-rl;
z-index:1;max-height:120px;overflow:hidden}
.break-marker.allowed{background:var(--warn)}
.req.finding::after{content:"";position:absolute;bottom:0;left:0;right:0;height:3px;background:var(--brk)}
#legend{display:flex;gap:12px;font-size:12px;color:var(--muted);margin:6px 0}
#legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
#pager{margin:4px 0 6px;display:flex;gap:6px;align-items:center}#pager button,.more{font:inherit;cursor:pointer}
#log-findings{margin-top:26px}
pre{white-space:pre-wrap;word-break:break-word;background:var(--bg);border:1px solid var(--line);border-radius:6px;
padding:6px 8px;margin:4px 0;max-height:360px;overflow:auto;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
.msg{border-left:3px solid var(--line);padding-left:8px;margin:6px 0}.msg.new{border-color:var(--act)}
.msg.gone{border-color:var(--brk)}.msg .role{font-weight:600;font-size:12px}
.cause{font-weight:700;color:var(--brk)}table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top}
.finding-item{color:var(--brk)}.finding-item.ok{color:var(--muted)}
"""

SCRIPT = r"""
(function(){
"use strict";
var PAGE=__PAGE__;
var DATA=JSON.parse(document.getElementById("dsh-data").textContent);
var state={session:0,page:0,request:null};
function el(tag,attrs,text){var e=document.createElement(tag);if(attrs){for(var k in attrs){
 if(k==="cls"){e.className=attrs[k];}else{e.setAttribute(k,attrs[k]);}}}
 if(text!==undefined&&text!==null){e.textContent=String(text);}return e;}
function add(parent,child){parent.appendChild(child);return child;}
function clear(node){while(node.firstChild){node.removeChild(node.firstChild);}}
function json(v){return JSON.stringify(v,null,2);}
function pct(a,b){return b?(100*a/b).toFixed(1)+"%":"n/a";}
function where(r){return r.turn===null?r.kind:(r.kind+" "+r.turn+"/"+r.step+"/"+r.attempt);}
function ids(runs){var out=[];for(var i=0;i<runs.length;i++){for(var n=runs[i][0];n<runs[i][1];n++){out.push(n);}}return out;}
function size(r){return r.prompt!==null&&r.prompt!==undefined?r.prompt:(r.counted||0);}
function isBreak(r){return r.t&&r.t.verdict==="break";}
function fails(r){for(var i=0;i<r.f.length;i++){if(r.f[i].fails){return true;}}return false;}
function textOf(m){var c=m&&m.content;if(typeof c==="string"){return c;}if(!Array.isArray(c)){return json(c);}
 var parts=[];for(var i=0;i<c.length;i++){var b=c[i];if(b&&typeof b.text==="string"){parts.push(b.text);}
 else if(b&&b.type==="tool-call"){parts.push("[tool call "+(b.toolName||b.name||"")+"] "+json(b.input||b.args||{}));}
 else if(b&&b.type==="tool-result"){parts.push("[tool result] "+(typeof b.output==="string"?b.output:json(b.output||b.content||b)));}
 else{parts.push(json(b));}}return parts.join("\n");}

function summary(){
 document.getElementById("title").textContent="dsh-audit report";
 var s=document.getElementById("summary");clear(s);
 add(s,el("span",{cls:DATA.passed?"pass":"failed"},DATA.passed?"check passed":"check failed"));
 var c=DATA.counts;add(s,el("span",{cls:"muted"}," \u00b7 "+DATA.sessions.length+" log(s) \u00b7 "+c.error+" error(s), "+
  c.warning+" warning(s), "+c.info+" info, "+c.failing+" failing \u00b7 policy "+DATA.policy+" \u00b7 "+DATA.tool));}

function nav(){var n=document.getElementById("sessions");clear(n);
 var limit=Math.min(DATA.sessions.length,state.navLimit||PAGE);
 for(var i=0;i<limit;i++){(function(i){var s=DATA.sessions[i];
  var b=add(n,el("button",{cls:(i===state.session?"sel ":"")+(s.failed?"fail":""),title:s.path},
   (s.failed?"\u2716 ":"\u2714 ")+(s.session_id||s.path)));
  b.addEventListener("click",function(){state.session=i;state.page=0;state.request=null;render();});})(i);}
 if(limit<DATA.sessions.length){var more=add(n,el("button",{cls:"more"},"show "+(DATA.sessions.length-limit)+" more"));
  more.addEventListener("click",function(){state.navLimit=(state.navLimit||PAGE)+PAGE;nav();});}}

function legend(){var l=document.getElementById("legend");clear(l);
 [["prompt","prompt tokens"],["expected","expected cache read"],["actual","actual cache read"]].forEach(function(p){
  var s=add(l,el("span"));add(s,el("i",{cls:"bar "+p[0]}));add(s,document.createTextNode(p[1]));});
 [["#d97706","break the policy allows"],["#dc2626","break or request that fails"]].forEach(function(p){
  var b=add(l,el("span"));add(b,el("i",{style:"background:"+p[0]}));add(b,document.createTextNode(p[1]));});}

function timeline(){var s=DATA.sessions[state.session];var t=document.getElementById("timeline");clear(t);
 var reqs=s.requests;var pages=Math.max(1,Math.ceil(reqs.length/PAGE));if(state.page>=pages){state.page=pages-1;}
 var pager=document.getElementById("pager");clear(pager);
 if(pages>1){var prev=add(pager,el("button",{id:"prev-page"},"\u2190 earlier"));prev.disabled=state.page===0;
  prev.addEventListener("click",function(){state.page--;timeline();});
  add(pager,el("span",{cls:"muted"},"requests "+(state.page*PAGE)+"\u2013"+(Math.min(reqs.length,(state.page+1)*PAGE)-1)+" of "+reqs.length));
  var next=add(pager,el("button",{id:"next-page"},"later \u2192"));next.disabled=state.page===pages-1;
  next.addEventListener("click",function(){state.page++;timeline();});}
 var slice=reqs.slice(state.page*PAGE,(state.page+1)*PAGE);var max=1;
 slice.forEach(function(r){max=Math.max(max,size(r));});
 slice.forEach(function(r,k){var pos=state.page*PAGE+k;
  var col=add(t,el("div",{cls:"req"+(r.kind!=="loop"?" aux":"")+(fails(r)?" finding":"")+(state.request===pos?" sel":""),
   role:"listitem","data-request":String(r.i),title:"request "+r.i+" ("+where(r)+"): prompt "+size(r)+
   ", expected "+(r.expected===null?"?":r.expected)+", actual "+(r.actual===null?"?":r.actual)+(r.cls?", "+r.cls:"")}));
  [["prompt",size(r)],["expected",r.expected||0],["actual",r.actual||0]].forEach(function(p){
   add(col,el("div",{cls:"bar "+p[0],style:"height:"+Math.max(1,Math.round(170*p[1]/max))+"px"}));});
  add(col,el("span",{cls:"idx"},r.i%10===0?String(r.i):""));
  col.addEventListener("click",function(){open(pos);});
  if(isBreak(r)){var ok=!fails(r);var m=add(col,el("button",{cls:"break-marker"+(ok?" allowed":""),"data-request":String(r.i),
    title:"break: "+r.t.cause},"\u26a1"+(r.t.cause||"")));
   m.addEventListener("click",function(ev){ev.stopPropagation();open(pos);});}});}

function findingList(parent,items){items.forEach(function(f){add(parent,el("div",{cls:"finding-item"+(f.fails?"":" ok")},
 f.rule+" "+f.severity+(f.fails?" (fails)":"")+": "+f.message+(f.line?"  ["+f.path+":"+f.line+(f.seq!==null?" seq "+f.seq:"")+"]":"")));});}

function sessionInfo(){var s=DATA.sessions[state.session];
 document.getElementById("session-title").textContent=s.session_id||s.path;
 var info=document.getElementById("session-info");clear(info);
 add(info,el("div",{cls:"muted"},s.path));
 add(info,el("div",{cls:"muted"},"capture: "+(s.capture||"none")+" \u00b7 "+s.requests.length+" request(s)"));
 if(s.error){add(info,el("div",{cls:"failed"},s.error));}
 var lf=document.getElementById("log-findings");clear(lf);
 if(s.findings.length){add(lf,el("h3",null,"Findings about the log"));findingList(lf,s.findings);}
 if(state.session===0&&DATA.unattached.length){add(lf,el("h3",null,"Captures no log explains"));findingList(lf,DATA.unattached);}}

function kv(parent,rows){var tb=add(parent,el("table"));rows.forEach(function(r){if(r[1]===undefined){return;}
 var tr=add(tb,el("tr"));add(tr,el("th",null,r[0]));add(tr,el("td",null,r[1]===null?"-":String(r[1])));});}

function messageBlock(parent,m,cls){var d=add(parent,el("div",{cls:"msg"+(cls?" "+cls:"")}));
 add(d,el("div",{cls:"role"},(m&&m.role)||"?"));add(d,el("pre",{cls:"text"},textOf(m)));}

function messages(parent,s,list,limit){var box=add(parent,el("div",{cls:"messages"}));
 var start=Math.max(0,list.length-limit);if(start>0){var more=add(box,el("button",{cls:"more"},"show the "+start+" earlier message(s)"));
  more.addEventListener("click",function(){clear(box);list.forEach(function(n){messageBlock(box,s.messages[n]);});});}
 list.slice(start).forEach(function(n){messageBlock(box,s.messages[n]);});}

function previousOf(s,r){if(!r.t||r.t.previous===null||r.t.previous===undefined){return null;}
 if(r.t.previous_session_id&&r.t.previous_session_id!==s.session_id){return null;}
 for(var i=0;i<s.requests.length;i++){if(s.requests[i].i===r.t.previous){return s.requests[i];}}return null;}

function diffPrevious(parent,s,r){var p=previousOf(s,r);add(parent,el("h3",null,"Against the previous request"));
 if(!r.t){add(parent,el("p",{cls:"muted"},"no attribution"));return;}
 if(!p){add(parent,el("p",{cls:"muted"},r.t.previous===null?"first request of its conversation":
  "compared with request "+r.t.previous+" of session "+r.t.previous_session_id));}
 if(r.t.fields.length){var tb=add(parent,el("table",{cls:"fields"}));var h=add(tb,el("tr"));
  ["field","before","after","prompt-affecting"].forEach(function(c){add(h,el("th",null,c));});
  r.t.fields.forEach(function(f){var tr=add(tb,el("tr"));add(tr,el("td",null,f.field));add(tr,el("td",null,json(f.before)));
   add(tr,el("td",null,json(f.after)));add(tr,el("td",null,f.prompt_affecting?"yes":"no"));});}
 if(!p){return;}var a=ids(p.m),b=ids(r.m);var k=0;while(k<a.length&&k<b.length&&a[k]===b[k]){k++;}
 add(parent,el("p",null,k+" leading message(s) shared; "+(a.length-k)+" removed, "+(b.length-k)+" added"+
  (p.h!==r.h?"; header differs":"")));
 var box=add(parent,el("div",{cls:"msgdiff"}));
 a.slice(k,k+20).forEach(function(n){messageBlock(box,s.messages[n],"gone");});
 b.slice(k,k+20).forEach(function(n){messageBlock(box,s.messages[n],"new");});}

function capture(parent,r){add(parent,el("h3",null,"Against the capture"));var c=r.cap;
 if(!c){add(parent,el("p",{cls:"muted"},"no captured body for this request"));return;}
 kv(parent,[["verdict",c.verdict],["capture",c.where],["first differing byte",c.first_offset],["note",c.note],
  ["equivalence",c.equivalence.length?c.equivalence.join(", "):undefined]]);
 if(c.expected_context!==null){add(parent,el("div",{cls:"muted"},"rebuilt:"));add(parent,el("pre",null,c.expected_context));
  add(parent,el("div",{cls:"muted"},"captured:"));add(parent,el("pre",null,c.actual_context));}
 c.differences.forEach(function(d){add(parent,el("div",null,d.path+" ("+d.change+"): "+d.summary));});
 if(c.more_differences){add(parent,el("div",{cls:"muted"},c.more_differences+" more difference(s)"));}}

function open(pos){state.request=pos;var s=DATA.sessions[state.session];var r=s.requests[pos];
 var cols=document.querySelectorAll("#timeline .req");for(var i=0;i<cols.length;i++){cols[i].classList.toggle("sel",
  cols[i].getAttribute("data-request")===String(r.i));}
 var d=document.getElementById("detail");clear(d);
 add(d,el("h2",null,"Request "+r.i+" \u00b7 "+where(r)));
 if(r.t){var line=add(d,el("p",{cls:"transition"}));add(line,document.createTextNode(r.t.verdict+" ("+r.t.relation+")"));
  if(r.t.cause){add(line,document.createTextNode(" \u00b7 cause "));add(line,el("span",{cls:"cause"},r.t.cause));}
  if(r.t.other_causes.length){add(line,document.createTextNode(" + "+r.t.other_causes.join(", ")));}
  if(r.t.detail){add(d,el("p",{cls:"detail"},r.t.detail));}
  if(r.t.divergence){add(d,el("p",{cls:"muted"},"first divergence: "+r.t.divergence.segment+
   (r.t.divergence.message_index!==null?" message "+r.t.divergence.message_index:"")+
   (r.t.divergence.offset!==null?" byte "+r.t.divergence.offset:"")));}
  if(r.t.evidence.length){add(d,el("h3",null,"Evidence events"));var ul=add(d,el("ul",{cls:"evidence"}));
   r.t.evidence.forEach(function(e){var li=add(ul,el("li"));add(li,el("b",null,"seq "+e.seq+" "+e.type));
    add(li,el("pre",null,json(e.data)));});}
  r.t.notes.forEach(function(n){add(d,el("p",{cls:"muted"},n));});}
 if(r.f.length){add(d,el("h3",null,"Findings"));findingList(d,r.f);}
 add(d,el("h3",null,"Cache"));kv(d,[["prompt tokens",r.prompt],["counted tokens",r.counted],["expected cache read",r.expected],
  ["actual cache read",r.actual],["classification",r.cls],["reason",r.ccause]]);
 capture(d,r);diffPrevious(d,s,r);
 add(d,el("h3",null,"Header"));kv(d,[["header seq",r.hseq],["reason",r.hreason],["first chunk seq",r.seq]]);
 add(d,el("pre",{cls:"header"},r.h===null?"none":json(s.headers[r.h])));
 var list=ids(r.m);add(d,el("h3",null,"Messages ("+list.length+")"));messages(d,s,list,30);
 if(r.usage){add(d,el("h3",null,"Usage"));add(d,el("pre",null,json(r.usage)));}}

function render(){nav();sessionInfo();legend();timeline();var d=document.getElementById("detail");clear(d);
 add(d,el("p",{cls:"muted"},"Click a request or a break marker."));}
summary();if(DATA.sessions.length){render();}
window.dshReport={open:function(i){var s=DATA.sessions[state.session];for(var k=0;k<s.requests.length;k++){
 if(s.requests[k].i===i){state.page=Math.floor(k/PAGE);timeline();open(k);return true;}}return false;},
 session:function(i){state.session=i;state.page=0;render();}};
})();
""".replace("__PAGE__", str(PAGE))
