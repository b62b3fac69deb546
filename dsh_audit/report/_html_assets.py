"""The inline stylesheet and script of the HTML report (no external resources).

The script only ever writes log text with ``textContent`` (``el()`` below); it never assigns
``innerHTML``. It draws the timeline :data:`PAGE` requests at a time and assembles a request's
messages (from its base request and its delta, see :mod:`._html`) only when the request is
opened or searched. ``#request-N`` and ``#break-N`` (``#sK-request-N`` for the K-th log, from 0)
open request N of the page's log when the page is loaded or the hash changes.
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
#overview table{margin:4px 0 8px}#overview th{font-weight:600;background:var(--panel)}
#search-bar{margin:6px 0;display:flex;gap:8px;align-items:center}#search{font:inherit;padding:3px 6px;width:22em;max-width:100%}
.break-list a{color:var(--brk)}
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
var state={session:0,page:0,request:null,filter:null};
function el(tag,attrs,text){var e=document.createElement(tag);if(attrs){for(var k in attrs){
 if(k==="cls"){e.className=attrs[k];}else{e.setAttribute(k,attrs[k]);}}}
 if(text!==undefined&&text!==null){e.textContent=String(text);}return e;}
function add(parent,child){parent.appendChild(child);return child;}
function clear(node){while(node.firstChild){node.removeChild(node.firstChild);}}
function json(v){return JSON.stringify(v,null,2);}
function usd(v,digits){return typeof v==="number"?"$"+v.toFixed(digits||4):"n/a";}
function ratio(v){return typeof v==="number"?(100*v).toFixed(1)+"%":"n/a";}
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

function overallSummary(){
 document.getElementById("title").textContent="dsh-audit report";
 var s=document.getElementById("summary");clear(s);var breaks=0;
 DATA.sessions.forEach(function(x){breaks+=x.overview.breaks.length;});
 add(s,el("span",{cls:DATA.passed?"pass":"failed"},(DATA.passed?"check passed":"check failed")+
  (breaks?": "+breaks+" break(s)"+(DATA.passed?" the policy allows":""):"")));
 var c=DATA.counts;add(s,el("span",{cls:"muted"}," \u00b7 "+DATA.sessions.length+" log(s) \u00b7 "+c.error+" error(s), "+
  c.warning+" warning(s), "+c.info+" info, "+c.failing+" failing \u00b7 policy "+DATA.policy+" \u00b7 "+DATA.tool));}

function nav(){var n=document.getElementById("sessions");clear(n);
 var limit=Math.min(DATA.sessions.length,state.navLimit||PAGE);
 for(var i=0;i<limit;i++){(function(i){var s=DATA.sessions[i];
  var b=add(n,el("button",{cls:(i===state.session?"sel ":"")+(s.failed?"fail":""),title:s.path},
   (s.failed?"\u2716 ":"\u2714 ")+(s.overview.title||s.session_id||s.path)));
  b.addEventListener("click",function(){select(i);render();});})(i);}
 if(limit<DATA.sessions.length){var more=add(n,el("button",{cls:"more"},"show "+(DATA.sessions.length-limit)+" more"));
  more.addEventListener("click",function(){state.navLimit=(state.navLimit||PAGE)+PAGE;nav();});}}

function legend(){var l=document.getElementById("legend");clear(l);
 [["prompt","prompt tokens"],["expected","expected cache read"],["actual","actual cache read"]].forEach(function(p){
  var s=add(l,el("span"));add(s,el("i",{cls:"bar "+p[0]}));add(s,document.createTextNode(p[1]));});
 [["#d97706","break the policy allows"],["#dc2626","break or request that fails"]].forEach(function(p){
  var b=add(l,el("span"));add(b,el("i",{style:"background:"+p[0]}));add(b,document.createTextNode(p[1]));});}

function prefix(){return state.session?"s"+state.session+"-":"";}
function positions(){var s=DATA.sessions[state.session];if(state.filter){return state.filter;}
 var all=[];for(var k=0;k<s.requests.length;k++){all.push(k);}return all;}

function timeline(){var s=DATA.sessions[state.session];var t=document.getElementById("timeline");clear(t);
 var list=positions();var pages=Math.max(1,Math.ceil(list.length/PAGE));if(state.page>=pages){state.page=pages-1;}
 var pager=document.getElementById("pager");clear(pager);
 if(pages>1){var prev=add(pager,el("button",{id:"prev-page"},"\u2190 earlier"));prev.disabled=state.page===0;
  prev.addEventListener("click",function(){state.page--;timeline();});
  add(pager,el("span",{cls:"muted"},"requests "+(state.page*PAGE+1)+"\u2013"+Math.min(list.length,(state.page+1)*PAGE)+" of "+list.length));
  var next=add(pager,el("button",{id:"next-page"},"later \u2192"));next.disabled=state.page===pages-1;
  next.addEventListener("click",function(){state.page++;timeline();});}
 var slice=list.slice(state.page*PAGE,(state.page+1)*PAGE);var max=1;
 slice.forEach(function(pos){max=Math.max(max,size(s.requests[pos]));});
 slice.forEach(function(pos){var r=s.requests[pos];
  var col=add(t,el("div",{cls:"req"+(r.kind!=="loop"?" aux":"")+(fails(r)?" finding":"")+(state.request===pos?" sel":""),
   role:"listitem",id:prefix()+"request-"+r.i,"data-request":String(r.i),title:"request "+r.i+" ("+where(r)+"): prompt "+size(r)+
   ", expected "+(r.expected===null?"?":r.expected)+", actual "+(r.actual===null?"?":r.actual)+(r.cls?", "+r.cls:"")}));
  [["prompt",size(r)],["expected",r.expected||0],["actual",r.actual||0]].forEach(function(p){
   add(col,el("div",{cls:"bar "+p[0],style:"height:"+Math.max(1,Math.round(170*p[1]/max))+"px"}));});
  add(col,el("span",{cls:"idx"},r.i%10===0?String(r.i):""));
  col.addEventListener("click",function(){open(pos,false);});
  if(isBreak(r)){var ok=!fails(r);var m=add(col,el("button",{cls:"break-marker"+(ok?" allowed":""),id:prefix()+"break-"+r.i,
    "data-request":String(r.i),title:"break: "+r.t.cause},"\u26a1"+(r.t.cause||"")));
   m.addEventListener("click",function(ev){ev.stopPropagation();open(pos,true);});}});}

function findingList(parent,items){items.forEach(function(f){add(parent,el("div",{cls:"finding-item"+(f.fails?"":" ok")},
 f.rule+" "+f.severity+(f.fails?" (fails)":"")+": "+f.message+(f.line?"  ["+f.path+":"+f.line+(f.seq!==null?" seq "+f.seq:"")+"]":"")));});}

function kv(parent,rows,keyed){var tb=add(parent,el("table"));rows.forEach(function(r){if(r[1]===undefined){return;}
 var tr=add(tb,el("tr",keyed&&r[2]?{"data-key":r[2]}:null));add(tr,el("th",null,r[0]));
 add(tr,el("td",null,r[1]===null?"-":String(r[1])));});return tb;}

function overview(){var s=DATA.sessions[state.session];var o=s.overview;var box=document.getElementById("overview");clear(box);
 var cost=o.cost||null;var total=cost&&cost.cost_usd?cost.cost_usd.total:null;
 var causes=Object.keys(o.breaks_by_cause).map(function(k){return k+" "+o.breaks_by_cause[k];}).join(", ");
 var unpriced=cost&&cost.unpriced?Object.keys(cost.unpriced).map(function(k){return cost.unpriced[k]+" "+k;}).join(", "):"";
 kv(box,[["title",o.title===null?"-":o.title,"title"],
  ["model(s)",o.models.length?o.models.join(", "):"-","models"],["requests",o.requests,"requests"],
  ["breaks",o.breaks.length+(causes?" ("+causes+")":""),"breaks"],
  ["cache hit",ratio(o.hit_ratio)+(o.prompt_tokens!==null?" ("+o.cache_read+" of "+o.prompt_tokens+" prompt tokens)":""),"hit"],
  ["cost",usd(total)+(unpriced?" (unpriced: "+unpriced+")":""),"cost"],
  ["breaks cost",cost?usd(cost.break_cost_usd):"n/a","break-cost"],
  ["without cache",cost?usd(cost.no_cache_cost_usd):"n/a","no-cache"],
  ["requests sent",o.first?o.first+" \u2013 "+o.last:"-","span"]],true);
 if(o.breaks.length){var ul=add(box,el("ul",{cls:"break-list"}));o.breaks.forEach(function(b){var li=add(ul,el("li"));
  add(li,el("a",{href:"#"+prefix()+"break-"+b.i},"break at request "+b.i));
  add(li,document.createTextNode(": "+(b.cause||"?")+", lost "+(b.lost===null?"?":b.lost)+" token(s), "+usd(b.cost)));});}}

function sessionInfo(){var s=DATA.sessions[state.session];
 document.getElementById("session-title").textContent=s.overview.title||s.session_id||s.path;
 var info=document.getElementById("session-info");clear(info);
 add(info,el("div",{cls:"muted"},(s.session_id||"")+" \u00b7 "+s.path));
 add(info,el("div",{cls:"muted"},"capture: "+(s.capture||"none")+" \u00b7 "+s.requests.length+" request(s)"));
 if(s.error){add(info,el("div",{cls:"failed"},s.error));}
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
  r.t.fields.forEach(function(f){var tr=add(tb,el("tr"));add(tr,el("td",null,f.field));add(tr,el("td",null,json(f.before)));
   add(tr,el("td",null,json(f.after)));add(tr,el("td",null,f.prompt_affecting?"yes":"no"));});}
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

function setHash(h){try{history.replaceState(null,"",h);}catch(e){/* a page opened from a sandbox: no deep link */}}

function open(pos,asBreak){state.request=pos;var s=DATA.sessions[state.session];var r=s.requests[pos];
 var cols=document.querySelectorAll("#timeline .req");for(var i=0;i<cols.length;i++){cols[i].classList.toggle("sel",
  cols[i].getAttribute("data-request")===String(r.i));}
 setHash("#"+prefix()+(asBreak&&isBreak(r)?"break-":"request-")+r.i);
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
 add(d,el("h3",null,"Cost"));var c=kv(d,[["model",r.model+(r.billed&&r.billed!==r.model?" (billed as "+r.billed+")":""),"model"],
  ["window",r.window,"window"],["sent",r.sent,"sent"],
  ["cost",r.cost?usd(r.cost.total,6):"unpriced: "+r.unpriced,"cost"],
  ["break cost",r.lcost===null?undefined:usd(r.lcost,6)+" ("+r.lost+" lost of "+r.pot+" reusable token(s))","break-cost"]],true);
 c.className="cost";
 add(d,el("h3",null,"Cache"));kv(d,[["prompt tokens",r.prompt],["counted tokens",r.counted],["expected cache read",r.expected],
  ["actual cache read",r.actual],["reusable",r.pot],["lost",r.lost],["classification",r.cls],["reason",r.ccause]]);
 var list=messagesOf(s,pos);
 capture(d,r);diffPrevious(d,s,pos,list);
 add(d,el("h3",null,"Header"));kv(d,[["header seq",r.hseq],["reason",r.hreason],["first chunk seq",r.seq]]);
 add(d,el("pre",{cls:"header"},r.h===null?"none":json(s.headers[r.h])));
 add(d,el("h3",null,"Messages ("+list.length+")"));messages(d,s,list,30);
 if(r.usage){add(d,el("h3",null,"Usage"));add(d,el("pre",null,json(r.usage)));}}

// Search: the distinct messages are matched once; a request matches when its list holds one.
var lowered={};
function search(query){var s=DATA.sessions[state.session];var q=query.trim().toLowerCase();var count=document.getElementById("search-count");
 if(!q){state.filter=null;count.textContent="";state.page=0;timeline();return;}
 var low=lowered[state.session]||(lowered[state.session]=s.messages.map(function(m){return textOf(m).toLowerCase();}));
 var match=low.map(function(t){return t.indexOf(q)>=0;});var found=[];
 walk(s,s.requests.length-1,function(k,list,c){if(c>0){found.push(k);}},match);
 state.filter=found;state.page=0;count.textContent=found.length+" of "+s.requests.length+" request(s) match";timeline();}

function select(i){state.session=i;state.page=0;state.request=null;state.filter=null;
 var box=document.getElementById("search");box.value="";document.getElementById("search-count").textContent="";}

function render(){nav();sessionInfo();overview();legend();timeline();var d=document.getElementById("detail");clear(d);
 add(d,el("p",{cls:"muted"},"Click a request or a break marker."));}

function openIndex(i,asBreak){var s=DATA.sessions[state.session];for(var k=0;k<s.requests.length;k++){
 if(s.requests[k].i===i){if(asBreak&&!isBreak(s.requests[k])){return false;}var list=positions();var at=list.indexOf(k);
  if(at<0){state.filter=null;document.getElementById("search").value="";document.getElementById("search-count").textContent="";
   list=positions();at=k;}
  state.page=Math.floor(at/PAGE);timeline();open(k,asBreak);
  var target=document.getElementById(prefix()+(asBreak?"break-":"request-")+i);
  if(target&&target.scrollIntoView){target.scrollIntoView({block:"nearest",inline:"center"});}return true;}}return false;}

function fromHash(){var m=/^#(?:s(\d+)-)?(request|break)-(\d+)$/.exec(location.hash);if(!m){return false;}
 var si=m[1]===undefined?0:parseInt(m[1],10);if(si>=DATA.sessions.length){return false;}
 if(si!==state.session){select(si);render();}
 if(!openIndex(parseInt(m[3],10),m[2]==="break")){var d=document.getElementById("detail");clear(d);
  add(d,el("p",{cls:"failed"},"no "+m[2]+" "+m[3]+" in this log"));}return true;}

overallSummary();
if(DATA.sessions.length){render();fromHash();
 document.getElementById("search").addEventListener("input",function(ev){search(ev.target.value);});
 window.addEventListener("hashchange",fromHash);}
window.dshReport={open:function(i){return openIndex(i,false);},session:function(i){select(i);render();},
 messages:function(pos){return messagesOf(DATA.sessions[state.session],pos);}};
})();
""".replace("__PAGE__", str(PAGE))
