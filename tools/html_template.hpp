#pragma once
// The page `agentcore export` writes: one self-contained HTML file (no network, no external
// assets). The session arrives as JSON in <script type="application/json" id="session-data">;
// the script below draws it with textContent only, so conversation text is never parsed as HTML.
// Its search box speaks the query language of <agentcore/search.hpp> (docs/search.md, "The HTML
// viewer"): the parser, the folding and the text each entry offers are ports of that header's.

#include <string_view>

namespace agentcore::tool::html {

/// Everything before the session JSON.
inline constexpr std::string_view page_head = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="generator" content="agentcore export">
<title>agentcore session</title>
<style>
:root { --bg: #f7f7f8; --panel: #fff; --text: #1d1d1f; --muted: #6e6e73; --line: #dcdce0;
        --user: #e8f0fe; --assistant: #fff; --tool: #f3f3f5; --accent: #0b63ce; --path: #e3f6e8;
        --warn: #fff4d6; --error: #fde8e8; --summary: #f5ecff; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #1b1b1d; --panel: #232326; --text: #ececf0; --muted: #a0a0a8; --line: #3a3a40;
          --user: #1f2c44; --assistant: #26262a; --tool: #2c2c31; --accent: #6aa8ff; --path: #1f3526;
          --warn: #3b3420; --error: #442424; --summary: #33284a; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--text);
       display: flex; flex-direction: column; height: 100vh; }
header { padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--panel); }
header h1 { margin: 0 0 4px; font-size: 18px; }
.meta { color: var(--muted); font-size: 12px; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.meta b { color: var(--text); font-weight: 600; }
main { flex: 1; display: flex; min-height: 0; }
#side { width: 380px; min-width: 240px; border-right: 1px solid var(--line); background: var(--panel); display: flex; flex-direction: column; }
#search-bar { display: flex; gap: 4px; margin: 8px 8px 4px; }
#search { flex: 1; min-width: 0; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--text); font: inherit; }
#search-bar button { flex: none; width: 30px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--text); font: inherit; cursor: pointer; }
#search-bar button:disabled { color: var(--muted); cursor: default; }
#search-options { margin: 0 8px 2px; color: var(--muted); font-size: 12px; display: flex; gap: 12px; }
#search-status { margin: 0 8px 6px; color: var(--muted); font-size: 12px; min-height: 1em; }
#search-status.invalid { color: #c62828; }
mark.hit-mark { background: #ffe066; color: #1d1d1f; border-radius: 2px; }
mark.hit-mark.current { background: #ff9f1a; }
.card.current-hit { outline: 2px solid var(--accent); outline-offset: 1px; }
.node.current-hit { outline: 1px solid var(--accent); }
#tree { flex: 1; overflow: auto; padding: 0 0 12px; font-size: 13px; }
.node { display: flex; gap: 6px; align-items: baseline; padding: 2px 8px; cursor: pointer; white-space: nowrap; border-left: 3px solid transparent; }
.node:hover { background: var(--tool); }
.node.on-path { background: var(--path); }
.node.selected { border-left-color: var(--accent); font-weight: 600; }
.node .bullet { color: var(--muted); flex: none; }
.node.on-path .bullet { color: #2e9d4f; }
.node .kind { flex: none; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .02em; }
.node .text { overflow: hidden; text-overflow: ellipsis; }
.node.kind-user .kind { color: var(--accent); }
.badge { flex: none; background: #f0c64a; color: #3a2c00; border-radius: 8px; padding: 0 6px; font-size: 11px; font-weight: 600; }
.leaf-mark { flex: none; color: #2e9d4f; font-size: 11px; font-weight: 600; }
#messages { flex: 1; overflow: auto; padding: 16px 24px 48px; }
.card { background: var(--assistant); border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; margin: 0 0 10px; max-width: 980px; }
.card.user { background: var(--user); }
.card.tool_result, .card.bash_execution { background: var(--tool); }
.card.tool_result.error { background: var(--error); }
.card.compaction, .card.branch_summary, .card.compaction_summary { background: var(--summary); }
.card.compacted { opacity: .55; }
.card.event { background: transparent; border-style: dashed; color: var(--muted); padding: 4px 12px; font-size: 12px; }
.card-head { display: flex; gap: 8px; align-items: baseline; font-size: 12px; color: var(--muted); margin-bottom: 4px; flex-wrap: wrap; }
.card-head .role { font-weight: 700; color: var(--text); text-transform: capitalize; }
.card-head .id { font-family: ui-monospace, monospace; }
.text-block { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; padding: 6px 8px; background: var(--bg); border-radius: 6px; font: 12px/1.4 ui-monospace, monospace; }
details { margin: 4px 0; }
details > summary { cursor: pointer; color: var(--muted); }
details.thinking > div { color: var(--muted); font-style: italic; }
img.content-image { max-width: 100%; max-height: 480px; border: 1px solid var(--line); border-radius: 6px; display: block; margin: 4px 0; }
.note { color: var(--muted); font-size: 12px; }
.error-text { color: #c62828; }
.hidden { display: none !important; }
</style>
</head>
<body>
<header>
  <h1 id="title">Session</h1>
  <div class="meta" id="meta"></div>
</header>
<main>
  <nav id="side" aria-label="Session tree">
    <div id="search-bar">
      <input id="search" type="search" placeholder="Search: word &quot;a phrase&quot; pre* -not" autocomplete="off" aria-label="Search entries">
      <button id="search-prev" type="button" title="Previous hit (Shift+Enter)" aria-label="Previous hit" disabled>&#8593;</button>
      <button id="search-next" type="button" title="Next hit (Enter)" aria-label="Next hit" disabled>&#8595;</button>
    </div>
    <div id="search-options">
      <label><input id="search-substring" type="checkbox"> substring</label>
      <label><input id="search-thinking" type="checkbox"> thinking</label>
    </div>
    <div id="search-status" role="status"></div>
    <div id="tree" role="tree"></div>
  </nav>
  <section id="messages" aria-live="polite"></section>
</main>
<script type="application/json" id="session-data">)HTML";

/// Everything after the session JSON: the script that draws the page.
inline constexpr std::string_view page_tail = R"HTML(</script>
<script>
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('session-data').textContent);
  var entries = data.entries || [];
  // Ids come from the file: kept in Maps (never as keys of plain objects, where '__proto__' or
  // 'constructor' would find Object.prototype's members instead of a label).
  var labels = new Map();
  var labelData = data.labels || {};
  Object.keys(labelData).forEach(function (id) { labels.set(id, labelData[id]); });
  var byId = new Map();
  entries.forEach(function (e) { byId.set(e.id, e); });

  // Elements are only ever built with textContent: conversation text is never parsed as HTML.
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function kindOf(e) { return e.type === 'message' && e.message ? String(e.message.role) : String(e.type); }
  function blocksText(content) {
    if (typeof content === 'string') return content;
    if (!Array.isArray(content)) return '';
    return content.map(function (b) {
      if (!b) return '';
      if (b.type === 'text') return b.text;
      if (b.type === 'thinking') return b.thinking;
      if (b.type === 'tool_call') return b.name + ' ' + JSON.stringify(b.arguments);
      if (b.type === 'image') return '[image]';
      return '';
    }).join('\n');
  }
  function messageText(m) {
    if (!m) return '';
    switch (m.role) {
      case 'user': case 'custom': case 'assistant': case 'tool_result': return blocksText(m.content);
      case 'bash_execution': return '$ ' + m.command + '\n' + (m.output || '');
      case 'branch_summary': case 'compaction_summary': return m.summary;
      default: return JSON.stringify(m);
    }
  }
  function entryText(e) {
    switch (e.type) {
      case 'message': return messageText(e.message);
      case 'compaction': case 'branch_summary': return e.summary;
      case 'custom_message': return e.custom_type + ': ' + blocksText(e.content);
      case 'model_change': return e.provider + '/' + e.model_id;
      case 'thinking_level_change': return e.thinking_level;
      case 'active_tools_change': return (e.active_tool_names || []).join(', ');
      case 'session_info': return e.name || '';
      case 'custom': return e.custom_type;
      case 'label': return e.target_id + ' = ' + (e.label || '');
      case 'leaf': return '→ ' + (e.target_id || 'before the first entry');
      default: return '';
    }
  }
  function oneLine(text, max) {
    var s = String(text || '').replace(/\s+/g, ' ').trim();
    return s.length > max ? s.slice(0, max - 1) + '…' : s;
  }
  function ancestry(id) {
    var path = [];
    var guard = entries.length + 1;
    while (id && byId.has(id) && guard-- > 0) { path.push(id); id = byId.get(id).parent_id; }
    return path.reverse();
  }

  // ---- header -------------------------------------------------------------------------------
  var s = data.session || {};
  var stats = data.stats || {};
  var title = s.name || s.id || 'Session';
  document.title = title + ' — agentcore';
  document.getElementById('title').textContent = title;
  var meta = document.getElementById('meta');
  function metaItem(label, value) {
    if (value === undefined || value === null || value === '') return;
    var span = el('span', null, label + ' ');
    span.appendChild(el('b', null, value));
    meta.appendChild(span);
  }
  metaItem('id', s.id);
  metaItem('created', s.created);
  metaItem('cwd', s.cwd);
  metaItem('forked from', s.parent_session);
  metaItem('dialect', s.dialect + ', v' + s.version);
  metaItem('entries', entries.length);
  metaItem('messages', stats.message_count);
  metaItem('tokens', stats.total_tokens + ' (' + stats.cached_tokens + ' cached, ' + stats.uncached_tokens + ' uncached)');
  metaItem('cost', '$' + Number(stats.cost_total || 0).toFixed(4));

  // ---- tree ---------------------------------------------------------------------------------
  // Labels and leaf moves are bookkeeping: hidden; their children hang from the nearest shown ancestor.
  function shown(e) { return e.type !== 'label' && e.type !== 'leaf'; }
  var shownAs = new Map();
  var kids = new Map();
  var roots = [];
  entries.forEach(function (e) {
    var anchor = e.parent_id && shownAs.has(e.parent_id) ? shownAs.get(e.parent_id) : null;
    if (!shown(e)) { shownAs.set(e.id, anchor); return; }
    shownAs.set(e.id, e.id);
    if (anchor) { if (!kids.has(anchor)) kids.set(anchor, []); kids.get(anchor).push(e); } else roots.push(e);
  });
  var leafNode = data.leaf && shownAs.has(data.leaf) ? shownAs.get(data.leaf) : null;
  var treeBox = document.getElementById('tree');
  var rows = new Map();
  (function drawTree() {
    // An explicit stack: a linear run stays at its depth, each branch point indents its children.
    var stack = [];
    for (var i = roots.length - 1; i >= 0; i--) stack.push({ e: roots[i], depth: 0, branchStart: roots.length > 1 });
    var fragment = document.createDocumentFragment();
    while (stack.length) {
      var item = stack.pop();
      var e = item.e;
      var row = el('div', 'node kind-' + kindOf(e));
      row.setAttribute('role', 'treeitem');
      row.tabIndex = 0;
      row.dataset.id = e.id;
      row.style.paddingLeft = (8 + item.depth * 14) + 'px';
      row.appendChild(el('span', 'bullet', item.branchStart ? '↳' : '•'));
      row.appendChild(el('span', 'kind', kindOf(e)));
      row.appendChild(el('span', 'text', oneLine(entryText(e), 90)));
      if (labels.get(e.id)) row.appendChild(el('span', 'badge', labels.get(e.id)));
      if (leafNode === e.id) row.appendChild(el('span', 'leaf-mark', '← leaf'));
      row.title = e.id + ' · ' + e.timestamp;
      rows.set(e.id, row);
      fragment.appendChild(row);
      var children = kids.get(e.id) || [];
      var depth = children.length > 1 ? item.depth + 1 : item.depth;
      for (var j = children.length - 1; j >= 0; j--) stack.push({ e: children[j], depth: depth, branchStart: children.length > 1 });
    }
    treeBox.appendChild(fragment);
  })();

  // ---- messages -----------------------------------------------------------------------------
  var messagesBox = document.getElementById('messages');
  function appendContent(parent, content) {
    if (typeof content === 'string') { parent.appendChild(el('div', 'text-block sx', content)); return; }
    (content || []).forEach(function (b) {
      if (!b) return;
      if (b.type === 'text') parent.appendChild(el('div', 'text-block sx', b.text));
      else if (b.type === 'image') {
        var mime = String(b.mime_type || '');
        if (/^image\/[A-Za-z0-9.+-]+$/.test(mime) && typeof b.data === 'string') {
          var img = el('img', 'content-image');
          img.alt = 'image (' + mime + ')';
          img.src = 'data:' + mime + ';base64,' + b.data;
          parent.appendChild(img);
        } else parent.appendChild(el('div', 'note', '[image of unsupported type]'));
      } else if (b.type === 'thinking') {
        var t = el('details', 'thinking');
        t.appendChild(el('summary', null, 'Thinking'));
        t.appendChild(el('div', 'text-block sx-thinking', b.thinking));
        parent.appendChild(t);
      } else if (b.type === 'tool_call') {
        var d = el('details', 'tool-call');
        var call = el('summary', null, 'Tool call: ');
        call.appendChild(el('span', 'sx', b.name));
        if (b.id) call.appendChild(document.createTextNode(' (' + b.id + ')'));
        d.appendChild(call);
        d.appendChild(el('pre', 'sx', JSON.stringify(b.arguments, null, 2)));
        parent.appendChild(d);
      } else parent.appendChild(el('pre', null, JSON.stringify(b, null, 2)));
    });
  }
  function cardHead(card, role, e, extra, extraClass) {
    var head = el('div', 'card-head');
    head.appendChild(el('span', 'role', role.replace(/_/g, ' ')));
    if (extra) head.appendChild(el('span', extraClass || null, extra));
    if (e) {
      head.appendChild(el('span', null, e.timestamp));
      head.appendChild(el('span', 'id', e.id));
      if (labels.get(e.id)) head.appendChild(el('span', 'badge sx-label', labels.get(e.id)));
    }
    card.appendChild(head);
  }
  function messageCard(m, e) {
    var role = String(m.role);
    var card = el('article', 'card ' + role);
    if (role === 'assistant') {
      var model = [m.provider, m.model].filter(Boolean).join('/');
      var u = m.usage || {};
      cardHead(card, role, e, model + (u.total_tokens ? ' · ' + u.total_tokens + ' tokens' : ''));
      appendContent(card, m.content);
      if (m.error_message) card.appendChild(el('div', 'error-text', 'Error: ' + m.error_message));
    } else if (role === 'tool_result') {
      if (m.is_error) card.classList.add('error');
      cardHead(card, 'tool result', e, m.tool_name + (m.is_error ? ' · error' : ''));
      var d = el('details');
      var result = el('summary', null, 'Result of ');
      result.appendChild(el('span', 'sx', m.tool_name));
      if (m.tool_call_id) result.appendChild(document.createTextNode(' (' + m.tool_call_id + ')'));
      d.appendChild(result);
      appendContent(d, m.content);
      card.appendChild(d);
    } else if (role === 'bash_execution') {
      cardHead(card, 'bash', e, m.exit_code !== undefined && m.exit_code !== null ? 'exit ' + m.exit_code : '');
      var b = el('details');
      var command = el('summary', null, '$ ');
      command.appendChild(el('span', 'sx', m.command));
      b.appendChild(command);
      b.appendChild(el('pre', 'sx', m.output));
      card.appendChild(b);
    } else if (role === 'branch_summary' || role === 'compaction_summary') {
      cardHead(card, role, e);
      card.appendChild(el('div', 'text-block sx', m.summary));
    } else if (role === 'user' || role === 'custom') {
      cardHead(card, role === 'custom' ? 'custom · ' + m.custom_type : role, e);
      appendContent(card, m.content);
    } else {
      cardHead(card, role, e);
      card.appendChild(el('pre', null, JSON.stringify(m, null, 2)));
    }
    return card;
  }
  function entryCard(e) {
    switch (e.type) {
      case 'message': return messageCard(e.message || {}, e);
      case 'compaction': {
        var c = el('article', 'card compaction');
        cardHead(c, 'compaction', e, 'summarised ' + e.tokens_before + ' tokens');
        c.appendChild(el('div', 'text-block sx', e.summary));
        if (Array.isArray(e.retained_tail) && e.retained_tail.length) {
          // Not the compaction's searched text: its messages are never marked.
          var tail = el('details', 'retained');
          tail.appendChild(el('summary', null, 'Retained tail (' + e.retained_tail.length + ' messages)'));
          e.retained_tail.forEach(function (m) { tail.appendChild(messageCard(m, null)); });
          c.appendChild(tail);
        }
        return c;
      }
      case 'branch_summary': {
        var bs = el('article', 'card branch_summary');
        cardHead(bs, 'branch summary', e, 'from ' + e.from_id);
        bs.appendChild(el('div', 'text-block sx', e.summary));
        return bs;
      }
      case 'custom_message': {
        var cm = el('article', 'card custom');
        cardHead(cm, 'custom · ' + e.custom_type, e);
        appendContent(cm, e.content);
        return cm;
      }
      default: {
        var ev = el('article', 'card event');
        cardHead(ev, String(e.type), e, oneLine(entryText(e), 200), e.type === 'session_info' ? 'sx' : null);
        return ev;
      }
    }
  }
  // The entries the newest compaction on the path summarised (shown dimmed).
  function compactedIds(path) {
    var out = new Set();
    for (var i = path.length - 1; i >= 0; i--) {
      var c = byId.get(path[i]);
      if (c.type !== 'compaction') continue;
      var keepFrom = i;
      if (!c.retained_tail && c.first_kept_entry_id) {
        var k = path.indexOf(c.first_kept_entry_id);
        if (k >= 0 && k < i) keepFrom = k;
      }
      for (var j = 0; j < keepFrom; j++) out.add(path[j]);
      break;
    }
    return out;
  }

  var selected = null;
  function select(id) {
    selected = id;
    var path = ancestry(id);
    var onPath = new Set(path);
    rows.forEach(function (row, rid) {
      row.classList.toggle('on-path', onPath.has(rid));
      row.classList.toggle('selected', rid === id);
      row.setAttribute('aria-selected', rid === id ? 'true' : 'false');
    });
    var compacted = compactedIds(path);
    messagesBox.textContent = '';
    var fragment = document.createDocumentFragment();
    path.forEach(function (pid) {
      var e = byId.get(pid);
      if (!shown(e)) return;
      var card = entryCard(e);
      card.dataset.id = pid;
      if (compacted.has(pid)) { card.classList.add('compacted'); card.title = 'summarised by a later compaction'; }
      fragment.appendChild(card);
    });
    messagesBox.appendChild(fragment);
    markShown();
    var row = rows.get(id);
    if (row && row.scrollIntoView) row.scrollIntoView({ block: 'nearest' });
  }
  treeBox.addEventListener('click', function (ev) {
    var row = ev.target.closest('.node');
    if (row) select(row.dataset.id);
  });
  treeBox.addEventListener('keydown', function (ev) {
    var row = ev.target.closest('.node');
    if (row && (ev.key === 'Enter' || ev.key === ' ')) { ev.preventDefault(); select(row.dataset.id); }
  });

  // ---- search -------------------------------------------------------------------------------
  // The query language of <agentcore/search.hpp>, judged on the text the library searches in
  // each entry (search_text_of with its default options, thinking when asked): words,
  // "phrases", prefix*, -excluded, or substrings; case and diacritics folded exactly as the
  // library folds them (its tables arrive with the session in view.folding). Every entry that
  // matches is a hit; the terms are marked in the hits' shown text.
  var view = data.view || {};
  var folding = view.folding || {};
  var latin1Bases = typeof folding.latin1_bases === 'string' && folding.latin1_bases.length === 64 ? folding.latin1_bases : '';
  var latinABases = typeof folding.latin_a_bases === 'string' && folding.latin_a_bases.length === 128 ? folding.latin_a_bases : '';
  function fromTable(c, self) {
    switch (c) {
      case '*': return String.fromCodePoint(self);
      case 'A': return 'ae';
      case 'S': return 'ss';
      case 'I': return 'ij';
      case 'O': return 'oe';
      default: return c;
    }
  }
  // detail::append_folded: lower case, without diacritics (Latin, Greek, Cyrillic).
  function foldCp(cp) {
    if (cp < 0x80) return String.fromCharCode(cp >= 65 && cp <= 90 ? cp + 32 : cp);
    if (cp >= 0x300 && cp <= 0x36F) return '';
    if (cp >= 0xC0 && cp <= 0xFF && latin1Bases) return fromTable(latin1Bases[cp - 0xC0], cp === 0xDE ? 0xFE : cp);
    if (cp >= 0x100 && cp <= 0x17F && latinABases) return fromTable(latinABases[cp - 0x100], cp);
    var r = cp;
    if (cp >= 0x391 && cp <= 0x3A9) r = cp + 0x20;
    else if (cp >= 0x386 && cp <= 0x3CE) {
      switch (cp) {
        case 0x386: case 0x3AC: r = 0x3B1; break;
        case 0x388: case 0x3AD: r = 0x3B5; break;
        case 0x389: case 0x3AE: r = 0x3B7; break;
        case 0x38A: case 0x3AF: case 0x390: case 0x3AA: case 0x3CA: r = 0x3B9; break;
        case 0x38C: case 0x3CC: r = 0x3BF; break;
        case 0x38E: case 0x3CD: case 0x3B0: case 0x3AB: case 0x3CB: r = 0x3C5; break;
        case 0x38F: case 0x3CE: r = 0x3C9; break;
        case 0x3C2: r = 0x3C3; break;
        default: break;
      }
    } else if (cp >= 0x400 && cp <= 0x40F) r = cp + 0x50;
    else if (cp >= 0x410 && cp <= 0x42F) r = cp + 0x20;
    else if ((cp >= 0x460 && cp <= 0x481) || (cp >= 0x48A && cp <= 0x4BF)) r = cp | 1;
    switch (r) {
      case 0x450: case 0x451: r = 0x435; break;
      case 0x453: r = 0x433; break;
      case 0x45C: r = 0x43A; break;
      case 0x45D: r = 0x438; break;
      case 0x45E: r = 0x443; break;
      case 0x457: r = 0x456; break;
      default: break;
    }
    return String.fromCodePoint(r);
  }
  function isWordChar(cp) {
    if (cp < 0x80) return (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57);
    if (cp <= 0xBF) return cp === 0xAA || cp === 0xB5 || cp === 0xBA;
    if (cp === 0xD7 || cp === 0xF7) return false;
    if (cp >= 0x2000 && cp <= 0x2BFF) return false;
    if (cp >= 0x3000 && cp <= 0x303F) return false;
    if (cp >= 0xFE30 && cp <= 0xFE4F) return false;
    if (cp >= 0xFF00 && cp <= 0xFF0F) return false;
    if (cp >= 0x1F000 && cp <= 0x1FAFF) return false;
    if (cp === 0xFFFD || cp === 0xFEFF) return false;
    return !(cp >= 0xD800 && cp <= 0xDFFF);  // a lone surrogate: what invalid UTF-8 is there
  }
  function isSingleCharWord(cp) {
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x9FFF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FFFF);
  }
  // detail::tokenize_for_search; begin and end are indexes of the JavaScript string.
  function tokenize(text) {
    var out = [];
    var inWord = false;
    for (var i = 0; i < text.length;) {
      var at = i;
      var cp = text.codePointAt(i);
      i += cp > 0xFFFF ? 2 : 1;
      var combining = cp >= 0x300 && cp <= 0x36F;
      if (combining && inWord) { out[out.length - 1].end = i; continue; }
      if (!isWordChar(cp) || combining) { inWord = false; continue; }
      var single = isSingleCharWord(cp);
      if (!inWord || single) out.push({ norm: '', begin: at, end: at });
      var token = out[out.length - 1];
      token.norm += foldCp(cp);
      token.end = i;
      inWord = !single;
    }
    return out;
  }
  // detail::fold_for_substring: every character folded, with the index it came from.
  function foldForSubstring(text) {
    var folded = '';
    var origin = [];
    for (var i = 0; i < text.length;) {
      var at = i;
      var cp = text.codePointAt(i);
      i += cp > 0xFFFF ? 2 : 1;
      var f = foldCp(cp === 0xFFFD || (cp >= 0xD800 && cp <= 0xDFFF) ? 32 : cp);
      for (var k = 0; k < f.length; k++) origin.push(at);
      folded += f;
    }
    origin.push(text.length);
    return { text: folded, origin: origin };
  }

  // parse_search_query: the same terms, limits and errors.
  function badQuery(what) { throw new Error(what); }
  function quotedTerm(raw) { return "'" + (raw.length > 40 ? raw.slice(0, 40) + "...'" : raw + "'"); }
  function parseQuery(text, substring) {
    if (new TextEncoder().encode(text).length > 1024) badQuery('longer than 1024 bytes');
    if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)) badQuery('not valid UTF-8');
    if (text.indexOf('\u0000') >= 0) badQuery('holds a NUL character');
    if (/[\u0001-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(text)) badQuery('holds a control character');
    function space(c) { return c === ' ' || c === '\t' || c === '\n' || c === '\r'; }
    var terms = [];
    var any = false;
    var punctuation = '';
    var i = 0;
    while (i < text.length) {
      while (i < text.length && space(text[i])) i++;
      if (i === text.length) break;
      any = true;
      var start = i;
      var term = { tokens: [], prefix: false, excluded: false };
      if (text[i] === '-' && i + 1 < text.length && !space(text[i + 1])) { term.excluded = true; i++; }
      var body;
      if (text[i] === '"') {
        var close = text.indexOf('"', i + 1);
        if (close < 0) badQuery('the phrase starting at character ' + i + ' has no closing "');
        body = text.slice(i + 1, close);
        i = close + 1;
        if (!substring && text[i] === '*') { term.prefix = true; i++; }
        while (i < text.length && !space(text[i])) i++;
      } else {
        var begin = i;
        while (i < text.length && !space(text[i])) i++;
        body = text.slice(begin, i);
        if (!substring && body.charAt(body.length - 1) === '*') {
          term.prefix = true;
          body = body.replace(/\*+$/, '');
        }
      }
      var raw = text.slice(start, i);
      if (terms.length === 16) badQuery('more than 16 terms');
      if (!substring) {
        term.tokens = tokenize(body).map(function (t) { return t.norm; });
        if (!term.tokens.length) { punctuation = quotedTerm(raw); continue; }
      } else {
        var folded = foldForSubstring(body).text;
        if (Array.from(folded).length < 3) badQuery('the substring term ' + quotedTerm(raw) + ' is shorter than 3 characters');
        term.tokens = [folded];
      }
      terms.push(term);
    }
    if (!any) badQuery('empty');
    if (!terms.length) badQuery('no term has a letter or digit (' + punctuation + ' is punctuation only)');
    if (!terms.some(function (t) { return !t.excluded; })) badQuery('only excluded terms; give at least one term to find');
    return { substring: substring, terms: terms };
  }

  // Where a term occurs in a text, as [begin, end) index pairs (detail::word_term_spans and
  // detail::substring_term_spans); `subject` is what prepare() made of the text.
  function prepare(q, text) { return q.substring ? foldForSubstring(text) : tokenize(text); }
  function termSpans(q, term, subject) {
    var out = [];
    if (q.substring) {
      var want = term.tokens[0];
      for (var from = 0; ;) {
        var at = subject.text.indexOf(want, from);
        if (at < 0) break;
        out.push([subject.origin[at], subject.origin[at + want.length]]);
        from = at + 1;
      }
      return out;
    }
    var n = term.tokens.length;
    for (var i = 0; i + n <= subject.length; i++) {
      var ok = true;
      for (var k = 0; k < n && ok; k++) {
        var have = subject[i + k].norm;
        ok = k + 1 === n && term.prefix ? have.startsWith(term.tokens[k]) : have === term.tokens[k];
      }
      if (ok) out.push([subject[i].begin, subject[i + n - 1].end]);
    }
    return out;
  }
  function matches(q, text) {
    if (!text) return false;
    var subject = prepare(q, text);
    return q.terms.every(function (term) { return (termSpans(q, term, subject).length > 0) !== term.excluded; });
  }

  // search_text_of with SearchTextOptions{.thinking = thinking}: parts joined by newlines,
  // tool output capped at 4096 bytes (cut at a character).
  function capped(text, cap) {
    var bytes = new TextEncoder().encode(text);
    if (bytes.length <= cap) return text;
    var n = cap;
    while (n > 0 && (bytes[n] & 0xC0) === 0x80) n--;
    return new TextDecoder().decode(bytes.subarray(0, n));
  }
  function searchTextOf(e, thinking) {
    function add(parts, s) { if (typeof s === 'string' && s !== '') parts.push(s); }
    function jsonStrings(parts, v, depth) {
      if (depth > 64 || v === null || typeof v !== 'object') { if (typeof v === 'string') add(parts, v); return; }
      (Array.isArray(v) ? v : Object.keys(v).map(function (k) { return v[k]; }))
        .forEach(function (x) { jsonStrings(parts, x, depth + 1); });
    }
    function blocks(parts, list, thinkingAllowed) {
      (Array.isArray(list) ? list : []).forEach(function (b) {
        if (!b) return;
        if (b.type === 'text') add(parts, b.text);
        else if (b.type === 'thinking') { if (thinkingAllowed && thinking) add(parts, b.thinking); }
        else if (b.type === 'tool_call') { add(parts, b.name); jsonStrings(parts, b.arguments, 0); }
      });
    }
    function content(parts, c) { if (typeof c === 'string') add(parts, c); else blocks(parts, c, false); }
    var parts = [];
    var m = e.message;
    if (e.type === 'message' && m) {
      if (m.role === 'user' || m.role === 'custom') content(parts, m.content);
      else if (m.role === 'assistant') blocks(parts, m.content, true);
      else if (m.role === 'tool_result') {
        add(parts, m.tool_name);
        var body = [];
        blocks(body, m.content, false);
        add(parts, capped(body.join('\n'), 4096));
      } else if (m.role === 'bash_execution') {
        add(parts, m.command);
        add(parts, capped(typeof m.output === 'string' ? m.output : '', 4096));
      } else if (m.role === 'branch_summary' || m.role === 'compaction_summary') add(parts, m.summary);
    } else if (e.type === 'compaction' || e.type === 'branch_summary') add(parts, e.summary);
    else if (e.type === 'custom_message') content(parts, e.content);
    else if (e.type === 'label') add(parts, e.label);
    else if (e.type === 'session_info') add(parts, e.name);
    return parts.join('\n');
  }

  var search = document.getElementById('search');
  var status = document.getElementById('search-status');
  var prevButton = document.getElementById('search-prev');
  var nextButton = document.getElementById('search-next');
  var substringBox = document.getElementById('search-substring');
  var thinkingBox = document.getElementById('search-thinking');
  var query = null;        // the parsed query, null when the box is empty or invalid
  var hitIds = [];         // the entries that match, in the tree's order
  var hitSet = new Set();
  var current = -1;        // the hit navigated to, an index of hitIds
  var textCache = new Map();

  function entryMatches(e, q) {
    var key = e.id + (thinkingBox.checked ? '\u0001t' : '\u0001');
    if (!textCache.has(key)) textCache.set(key, searchTextOf(e, thinkingBox.checked));
    return matches(q, textCache.get(key));
  }
  function runSearch() {
    var text = search.value;
    query = null;
    hitIds = [];
    hitSet = new Set();
    current = -1;
    status.classList.remove('invalid');
    if (text.trim()) {
      try {
        query = parseQuery(text, substringBox.checked);
      } catch (err) {
        status.classList.add('invalid');
        status.textContent = 'invalid query: ' + err.message;
      }
    }
    if (query) {
      var q = query;
      entries.forEach(function (e) {
        if (!entryMatches(e, q)) return;
        // A label is found on the entry it labels, where the page shows it.
        var id = e.type === 'label' ? e.target_id : e.id;
        if (rows.has(id)) hitSet.add(id);
      });
      rows.forEach(function (row, id) { if (hitSet.has(id)) hitIds.push(id); });
    }
    rows.forEach(function (row, id) {
      row.classList.toggle('hidden', !!query && !hitSet.has(id));
      row.classList.toggle('search-hit', hitSet.has(id));
      row.classList.remove('current-hit');
    });
    markShown();
    showStatus();
  }
  function showStatus() {
    prevButton.disabled = nextButton.disabled = hitIds.length === 0;
    if (!query) { if (!status.classList.contains('invalid')) status.textContent = ''; return; }
    var n = hitIds.length;
    status.textContent = n === 0 ? 'no matching entries'
      : (current >= 0 ? (current + 1) + ' of ' : '') + n + (n === 1 ? ' matching entry' : ' matching entries');
  }

  // Marks: <mark> elements around the terms in the shown text of the hits' cards; the text is
  // split into text nodes, never parsed.
  function unmark() {
    Array.prototype.forEach.call(messagesBox.querySelectorAll('mark.hit-mark'), function (m) {
      var parent = m.parentNode;
      parent.replaceChild(document.createTextNode(m.textContent), m);
      parent.normalize();
    });
    Array.prototype.forEach.call(messagesBox.querySelectorAll('.search-hit, .current-hit'), function (c) {
      c.classList.remove('search-hit', 'current-hit');
    });
  }
  function markText(node, q) {
    var text = node.nodeValue;
    var subject = prepare(q, text);
    var spans = [];
    q.terms.forEach(function (term) { if (!term.excluded) spans = spans.concat(termSpans(q, term, subject)); });
    if (!spans.length) return;
    spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var fragment = document.createDocumentFragment();
    var at = 0;
    spans.forEach(function (span) {
      if (span[0] < at) { if (span[1] <= at) return; span = [at, span[1]]; }
      if (span[0] > at) fragment.appendChild(document.createTextNode(text.slice(at, span[0])));
      fragment.appendChild(el('mark', 'hit-mark', text.slice(span[0], span[1])));
      at = span[1];
    });
    if (at < text.length) fragment.appendChild(document.createTextNode(text.slice(at)));
    node.parentNode.replaceChild(fragment, node);
  }
  function markCard(card, q) {
    var selector = '.sx, .sx-label' + (thinkingBox.checked ? ', .sx-thinking' : '');
    Array.prototype.forEach.call(card.querySelectorAll(selector), function (part) {
      if (part.closest('.retained')) return;
      var walker = document.createTreeWalker(part, NodeFilter.SHOW_TEXT);
      var nodes = [];
      while (walker.nextNode()) nodes.push(walker.currentNode);
      nodes.forEach(function (node) { markText(node, q); });
    });
  }
  function cardOf(id) {
    for (var card = messagesBox.firstElementChild; card; card = card.nextElementSibling)
      if (card.dataset.id === id) return card;
    return null;
  }
  function markShown() {
    unmark();
    if (!query) return;
    for (var card = messagesBox.firstElementChild; card; card = card.nextElementSibling) {
      if (!hitSet.has(card.dataset.id)) continue;
      card.classList.add('search-hit');
      markCard(card, query);
    }
    if (current >= 0) {
      var shownHit = cardOf(hitIds[current]);
      if (shownHit) shownHit.classList.add('current-hit');
    }
  }
  // Shows the current hit: its branch when another one is shown, its collapsed parts that hold
  // a mark opened, scrolled into view.
  function showHit() {
    var id = hitIds[current];
    var card = cardOf(id);
    if (!card) { select(id); card = cardOf(id); }
    rows.forEach(function (row, rid) { row.classList.toggle('current-hit', rid === id); });
    Array.prototype.forEach.call(messagesBox.querySelectorAll('.current-hit, mark.current'), function (x) {
      x.classList.remove('current-hit', 'current');
    });
    if (card) {
      card.classList.add('current-hit');
      var marks = card.querySelectorAll('mark.hit-mark');
      Array.prototype.forEach.call(marks, function (m) {
        for (var d = m.closest('details'); d && card.contains(d); d = d.parentElement.closest('details')) d.open = true;
      });
      if (marks.length) marks[0].classList.add('current');
      var target = marks.length ? marks[0] : card;
      if (target.scrollIntoView) target.scrollIntoView({ block: 'center' });
    }
    var row = rows.get(id);
    if (row && row.scrollIntoView) row.scrollIntoView({ block: 'nearest' });
    showStatus();
  }
  function step(delta) {
    if (!hitIds.length) return;
    current = current < 0 ? (delta > 0 ? 0 : hitIds.length - 1) : (current + delta + hitIds.length) % hitIds.length;
    showHit();
  }
  search.addEventListener('input', runSearch);
  substringBox.addEventListener('change', function () { runSearch(); });
  thinkingBox.addEventListener('change', function () { runSearch(); });
  nextButton.addEventListener('click', function () { step(1); });
  prevButton.addEventListener('click', function () { step(-1); });
  search.addEventListener('keydown', function (ev) {
    if (ev.key === 'Enter') { ev.preventDefault(); step(ev.shiftKey ? -1 : 1); }
    else if (ev.key === 'Escape') { ev.preventDefault(); search.value = ''; runSearch(); }
  });

  // The view the page was exported with (`agentcore export --entry ID --search QUERY`): the
  // entry's branch, the query in the box and the entry as the current hit (without an entry,
  // the first hit).
  var focus = null;
  if (typeof view.entry === 'string' && byId.has(view.entry)) {
    var focusEntry = byId.get(view.entry);
    focus = focusEntry.type === 'label' && rows.has(focusEntry.target_id) ? focusEntry.target_id : shownAs.get(view.entry) || null;
  }
  if (focus) select(focus);
  else if (leafNode) select(leafNode);
  else messagesBox.appendChild(el('p', 'note', entries.length ? 'The leaf is before the first entry: pick an entry in the tree.' : 'This session has no entries.'));
  if (typeof view.query === 'string' && view.query) {
    substringBox.checked = !!view.substring;
    thinkingBox.checked = !!view.thinking;
    search.value = view.query;
    runSearch();
    // At the entry asked for when it is a hit; when it is not, the page stays at its branch.
    if (focus ? hitSet.has(focus) : hitIds.length > 0) {
      current = focus ? hitIds.indexOf(focus) : 0;
      showHit();
    }
  }
})();
</script>
</body>
</html>
)HTML";

}  // namespace agentcore::tool::html
