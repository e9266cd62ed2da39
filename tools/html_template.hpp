#pragma once
// The page `agentcore export` writes: one self-contained HTML file (no network, no external
// assets). The session arrives as JSON in <script type="application/json" id="session-data">;
// the script below draws it with textContent only, so conversation text is never parsed as HTML.

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
#search { margin: 8px; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--text); font: inherit; }
#search-status { margin: 0 8px 6px; color: var(--muted); font-size: 12px; min-height: 1em; }
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
    <input id="search" type="search" placeholder="Search entries…" autocomplete="off" aria-label="Search entries">
    <div id="search-status"></div>
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
  var searchText = new Map();
  entries.forEach(function (e) {
    searchText.set(e.id, (kindOf(e) + ' ' + (entryText(e) || '') + ' ' + (labels.get(e.id) || '')).toLowerCase());
  });
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
    if (typeof content === 'string') { parent.appendChild(el('div', 'text-block', content)); return; }
    (content || []).forEach(function (b) {
      if (!b) return;
      if (b.type === 'text') parent.appendChild(el('div', 'text-block', b.text));
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
        t.appendChild(el('div', 'text-block', b.thinking));
        parent.appendChild(t);
      } else if (b.type === 'tool_call') {
        var d = el('details', 'tool-call');
        d.appendChild(el('summary', null, 'Tool call: ' + b.name + (b.id ? ' (' + b.id + ')' : '')));
        d.appendChild(el('pre', null, JSON.stringify(b.arguments, null, 2)));
        parent.appendChild(d);
      } else parent.appendChild(el('pre', null, JSON.stringify(b, null, 2)));
    });
  }
  function cardHead(card, role, e, extra) {
    var head = el('div', 'card-head');
    head.appendChild(el('span', 'role', role.replace(/_/g, ' ')));
    if (extra) head.appendChild(el('span', null, extra));
    if (e) {
      head.appendChild(el('span', null, e.timestamp));
      head.appendChild(el('span', 'id', e.id));
      if (labels.get(e.id)) head.appendChild(el('span', 'badge', labels.get(e.id)));
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
      d.appendChild(el('summary', null, 'Result of ' + m.tool_name + (m.tool_call_id ? ' (' + m.tool_call_id + ')' : '')));
      appendContent(d, m.content);
      card.appendChild(d);
    } else if (role === 'bash_execution') {
      cardHead(card, 'bash', e, m.exit_code !== undefined && m.exit_code !== null ? 'exit ' + m.exit_code : '');
      var b = el('details');
      b.appendChild(el('summary', null, '$ ' + m.command));
      b.appendChild(el('pre', null, m.output));
      card.appendChild(b);
    } else if (role === 'branch_summary' || role === 'compaction_summary') {
      cardHead(card, role, e);
      card.appendChild(el('div', 'text-block', m.summary));
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
        c.appendChild(el('div', 'text-block', e.summary));
        if (Array.isArray(e.retained_tail) && e.retained_tail.length) {
          var tail = el('details');
          tail.appendChild(el('summary', null, 'Retained tail (' + e.retained_tail.length + ' messages)'));
          e.retained_tail.forEach(function (m) { tail.appendChild(messageCard(m, null)); });
          c.appendChild(tail);
        }
        return c;
      }
      case 'branch_summary': {
        var bs = el('article', 'card branch_summary');
        cardHead(bs, 'branch summary', e, 'from ' + e.from_id);
        bs.appendChild(el('div', 'text-block', e.summary));
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
        cardHead(ev, String(e.type), e, oneLine(entryText(e), 200));
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
    applySearch();
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
  var search = document.getElementById('search');
  var status = document.getElementById('search-status');
  function applySearch() {
    var q = search.value.trim().toLowerCase();
    var matches = 0;
    rows.forEach(function (row, id) {
      var hit = !q || searchText.get(id).indexOf(q) >= 0;
      row.classList.toggle('hidden', !hit);
      if (hit && q) matches++;
    });
    Array.prototype.forEach.call(messagesBox.children, function (card) {
      var id = card.dataset.id;
      card.classList.toggle('hidden', !!q && !(searchText.get(id) || '').includes(q));
    });
    status.textContent = q ? matches + (matches === 1 ? ' matching entry' : ' matching entries') : '';
  }
  search.addEventListener('input', applySearch);

  if (leafNode) select(leafNode);
  else messagesBox.appendChild(el('p', 'note', entries.length ? 'The leaf is before the first entry: pick an entry in the tree.' : 'This session has no entries.'));
})();
</script>
</body>
</html>
)HTML";

}  // namespace agentcore::tool::html
