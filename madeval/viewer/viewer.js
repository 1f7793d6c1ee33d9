// madeval's debate viewer. Every text that comes from a run (model replies, personas, labels,
// item ids) is put into the page as a text node (textContent / createTextNode), never as markup.
// The list reads a small index; a debate is unpacked (gzip, base64) only when it is opened.
(function () {
  'use strict';
  var PAGE = 50;       // rows of the list per page
  var PREVIEW = 160;   // characters of a message shown before it is opened
  var root = document.documentElement;
  var index = JSON.parse(document.getElementById('madeval-index').textContent);
  var rows = index.debates;
  var shown = [];
  var page = 0;

  function el(tag, attributes) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      if (name === 'text') node.textContent = attributes.text;
      else node.setAttribute(name, attributes[name]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }
  function str(value) { return value === null || value === undefined ? '' : String(value); }
  // A score as the board writes it: at most three decimals (an F1 of 2/3 is 0.667, not 0.6666666666666666).
  function score(value) { return typeof value === 'number' ? String(Number(value.toFixed(3))) : str(value); }
  function mark(right) { return right === true ? 'right' : right === false ? 'wrong' : 'muted'; }
  function tick(right) { return right === true ? ' \u2713' : right === false ? ' \u2717' : ''; }
  function yes(flag) { return flag === true ? 'yes' : flag === false ? 'no' : '\u2013'; }
  function badge(text, right) { return el('span', {'class': 'badge ' + mark(right), text: text}); }
  function $(id) { return document.getElementById(id); }
  // A run's text inside a line of the page's own: a right-to-left override in it cannot reorder
  // what follows (the style isolates every cell, message and badge the same way).
  function isolated(text) { return el('bdi', {text: str(text)}); }

  // ---- the list ----------------------------------------------------------------------------
  function fill(select, names) {
    names.forEach(function (name, i) { select.appendChild(el('option', {value: String(i), text: name})); });
  }
  function keep(row) {
    var config = $('f-config').value, task = $('f-task').value, outcome = $('f-outcome').value;
    var search = $('f-item').value.trim().toLowerCase();
    if (config !== '' && row.c !== Number(config)) return false;
    if (task !== '' && row.t !== Number(task)) return false;
    if (outcome === 'right' && row.right !== true) return false;
    if (outcome === 'wrong' && row.right !== false) return false;
    if (outcome === 'unscored' && row.right !== null) return false;
    if ($('f-lost').checked && !(row.first === true && row.right === false)) return false;
    if ($('f-drift').checked && row.drift !== true) return false;
    if ($('f-unparsed').checked && !(row.unparsed > 0)) return false;
    if (search && str(row.item).toLowerCase().indexOf(search) < 0) return false;
    return true;
  }
  function filter() {
    shown = [];
    for (var n = 0; n < rows.length; n++) if (keep(rows[n])) shown.push(n);
    page = 0;
    order();
    draw();
  }

  // ---- sorting by a column -------------------------------------------------------------------
  // Each column's value to sort by; null (no score, no vote, no answer read) sorts last either way.
  var SORT_KEYS = {
    n: function (row, n) { return n; },
    config: function (row) { return index.configs[row.c]; },
    task: function (row) { return index.tasks[row.t]; },
    item: function (row) { return str(row.item); },
    repeat: function (row) { return typeof row.repeat === 'number' ? row.repeat : null; },
    answer: function (row) { return row.answer === null || row.answer === undefined ? null : str(row.answer); },
    score: function (row) { return typeof row.score === 'number' ? row.score : null; },
    first: function (row) { return typeof row.first === 'boolean' ? Number(row.first) : null; },
    drift: function (row) { return typeof row.drift === 'boolean' ? Number(row.drift) : null; },
    unparsed: function (row) { return typeof row.unparsed === 'number' ? row.unparsed : null; },
    turns: function (row) { return typeof row.turns === 'number' ? row.turns : null; }
  };
  var sorting = {key: 'n', descending: false};
  var words = typeof Intl !== 'undefined' ? new Intl.Collator(undefined, {numeric: true}) : null;  // item 10 after item 9
  function compare(a, b) {
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return words ? words.compare(String(a), String(b)) : (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);
  }
  function order() {
    var value = SORT_KEYS[sorting.key], sign = sorting.descending ? -1 : 1;
    var keys = {};
    shown.forEach(function (n) { keys[n] = value(rows[n], n); });
    shown.sort(function (m, n) {
      var a = keys[m], b = keys[n];
      if (a === null || b === null) return a === b ? m - n : a === null ? 1 : -1;
      return sign * compare(a, b) || m - n;  // ties keep the order read
    });
  }
  function sortBy(key) {  // a column's first press sorts it ascending, the next descending, and so on
    sorting = {key: key, descending: sorting.key === key && !sorting.descending};
    Array.prototype.forEach.call(document.querySelectorAll('#debates th[data-sort]'), function (th) {
      var mine = th.getAttribute('data-sort') === key;
      th.setAttribute('aria-sort', mine ? (sorting.descending ? 'descending' : 'ascending') : 'none');
    });
    page = 0;
    order();
    draw();
  }
  function draw() {
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    var body = $('debates').tBodies[0];
    body.textContent = '';
    shown.slice(page * PAGE, (page + 1) * PAGE).forEach(function (n) {
      var row = rows[n];
      var line = el('tr', {'data-n': String(n)},
        el('td', {}, el('a', {href: '#debate=' + (n + 1), text: String(n + 1)})),  // a link: reached and opened by keyboard
        el('td', {text: index.configs[row.c], title: index.configs[row.c]}),
        el('td', {text: index.tasks[row.t]}),
        el('td', {text: str(row.item), title: str(row.item)}),
        el('td', {text: str(row.repeat)}),
        el('td', {'class': mark(row.right), text: row.answer === null ? 'unparsed' : str(row.answer)}),
        el('td', {'class': mark(row.right), text: row.right === null ? score(row.score) : (row.right ? 'right' : 'wrong')}),
        el('td', {'class': mark(row.first), text: row.first === null ? '\u2013' : (row.first ? 'right' : 'wrong')}),
        el('td', {text: yes(row.drift)}),
        el('td', {text: str(row.unparsed)}),
        el('td', {text: str(row.turns)}));
      if (String(n) === root.getAttribute('data-opened')) line.className = 'current';
      line.addEventListener('click', function (event) {
        if (event.ctrlKey || event.metaKey || event.shiftKey) return;  // the number's link in a new tab or window
        event.preventDefault();  // the number's link too: one way to open
        if (location.hash === '#debate=' + (n + 1)) open(n);  // already the address: no hashchange comes
        else location.hash = 'debate=' + (n + 1);
      });
      body.appendChild(line);
    });
    $('count').textContent = shown.length + ' of ' + rows.length + ' debates' + tally();
    $('page').textContent = 'page ' + (page + 1) + ' of ' + pages;
    $('prev').disabled = page === 0;
    $('next').disabled = page >= pages - 1;
    root.setAttribute('data-shown', String(shown.length));
  }

  function tally() {  // how the debates shown ended: the first thing a reader asks of a filter
    var right = 0, wrong = 0;
    shown.forEach(function (n) { if (rows[n].right === true) right++; else if (rows[n].right === false) wrong++; });
    var other = shown.length - right - wrong;
    return shown.length ? ': ' + right + ' right, ' + wrong + ' wrong' + (other ? ', ' + other + ' not 0/1' : '') : '';
  }

  // ---- one debate --------------------------------------------------------------------------
  function unpack(n) {
    var packed = $('d' + n);
    if (!packed && document.readyState === 'loading') {  // the debates follow the list: still being read
      return new Promise(function (read) { document.addEventListener('DOMContentLoaded', read); })
        .then(function () { return unpack(n); });
    }
    if (!packed) return Promise.reject(new Error('no debate ' + (n + 1)));
    if (typeof DecompressionStream === 'undefined') {
      return Promise.reject(new Error('this browser cannot unpack the debates (it lacks DecompressionStream)'));
    }
    var binary = atob(packed.textContent.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text().then(JSON.parse);
  }
  function open(n) {
    var view = $('debate');
    view.hidden = false;
    view.textContent = '';
    view.appendChild(el('p', {'class': 'muted', text: 'unpacking debate ' + (n + 1) + '\u2026'}));
    unpack(n).then(function (debate) {
      view.textContent = '';
      render(view, rows[n], debate, n);
      root.setAttribute('data-opened', String(n));
      Array.prototype.forEach.call(document.querySelectorAll('#debates tr.current'), function (tr) { tr.className = ''; });
      var current = document.querySelector('#debates tr[data-n="' + n + '"]');
      if (current) current.className = 'current';
      view.scrollIntoView();
      var heading = view.querySelector('h2');  // the keyboard goes on from the debate, not from the list
      heading.setAttribute('tabindex', '-1');
      heading.focus({preventScroll: true});
    }).catch(function (error) {
      view.textContent = '';
      view.appendChild(el('p', {'class': 'wrong', text: 'Cannot show debate ' + (n + 1) + ': ' + error.message}));
      root.setAttribute('data-opened', 'error');
    });
  }
  function agentName(agent) {
    return str(agent.name) || ('agent ' + agent.index);
  }
  function answerBadge(message) {
    if (message.answer === null || message.answer === undefined) {
      return message.proposes ? badge('unparsed', false) : null;
    }
    return badge('answer ' + message.answer + tick(message.right), message.right);
  }
  function messageBox(message, byId) {
    var head = el('summary', {},
      el('span', {'class': 'badge', text: '#' + message.id + ' ' + str(message.stage)}),
      answerBadge(message),
      message.agreement === true ? badge('agrees', null) : message.agreement === false ? badge('disagrees', null) : null,
      message.backs !== null && message.backs !== undefined && message.backs !== message.id
        ? badge('backs #' + message.backs + (byId[message.backs] !== undefined ? ' (' + byId[message.backs] + ')' : ''), null) : null,
      message.confidence !== null && message.confidence !== undefined ? badge('confidence ' + message.confidence, null) : null,
      el('span', {'class': 'preview', text: preview(message.text)}));
    var box = el('details', {'class': 'msg', 'data-message': String(message.id)}, head,
      el('div', {'class': 'text', text: str(message.text)}));
    if (message.solution !== undefined && message.solution !== null) {
      box.appendChild(el('div', {}, el('b', {text: 'solution: '})));
      box.appendChild(el('div', {'class': 'text', text: str(message.solution)}));
    }
    if (message.parse_notes && message.parse_notes.length) {
      box.appendChild(el('div', {'class': 'muted', text: 'parse notes: ' + message.parse_notes.join('; ')}));
    }
    return box;
  }
  // The start of a message, its whitespace collapsed, cut to PREVIEW characters. The text is read a
  // chunk at a time only until the preview is known (a reply may be 16 MB: collapsing all of it to
  // keep 160 characters would be slow and hold a second copy), and never more than PREVIEW_SCAN
  // characters of it (a reply of megabytes of blanks ends its preview there, with an ellipsis).
  var PREVIEW_CHUNK = 1024, PREVIEW_SCAN = 65536;
  function preview(text) {
    text = str(text);
    var shown = '', read = 0;
    // PREVIEW + 2 collapsed characters hold at most one trailing blank: the cut is then certain.
    while (read < text.length && read < PREVIEW_SCAN && shown.length < PREVIEW + 2) {
      shown = (shown + text.slice(read, read + PREVIEW_CHUNK)).replace(/\s+/g, ' ').replace(/^ /, '');
      read += PREVIEW_CHUNK;
    }
    if (read >= text.length) shown = shown.trim();
    else if (shown.length <= PREVIEW) return shown.replace(/ $/, '') + '\u2026';  // the scan's end, inside a long run of blanks
    return shown.length > PREVIEW ? shown.slice(0, PREVIEW - 1) + '\u2026' : shown;
  }
  function eventText(event) {
    var copy = {};
    Object.keys(event).forEach(function (key) { if (key !== 'kind' && key !== 'turn') copy[key] = event[key]; });
    return str(event.kind) + ' ' + JSON.stringify(copy, null, 1);  // a key a line: readable in the narrow vote column
  }
  function render(view, row, debate, n) {
    var facts = debate.facts;
    var decision = debate.decision || {};
    view.appendChild(el('div', {'class': 'pager'},
      el('h2', {}, 'Debate ' + (n + 1) + ': ', isolated(index.configs[row.c]), ' \u00b7 ', isolated(index.tasks[row.t]),
         ' \u00b7 item ', isolated(row.item), ' \u00b7 repeat ' + str(row.repeat)),
      el('a', {href: '#debates', text: 'back to the list'}),
      button('open every message', function () { toggleAll(view, true); }),
      button('close every message', function () { toggleAll(view, false); })));
    var flags = el('div', {'class': 'facts'});
    flags.appendChild(badge('final ' + (row.right === null ? score(row.score) : row.right ? 'right' : 'wrong') + tick(row.right), row.right));
    if (facts) {
      flags.appendChild(badge('turn-1 vote ' + (facts.first_turn_vote_right ? 'right' : 'wrong') + tick(facts.first_turn_vote_right), facts.first_turn_vote_right));
      flags.appendChild(badge(facts.drift ? 'drift' + (facts.recovered ? ', recovered' : '') : 'no drift',
                              facts.drift ? facts.recovered : null));
      if (facts.oracle_gap) flags.appendChild(badge('oracle gap: an agent held the right answer', false));
      flags.appendChild(badge(facts.unparsed + ' unparsed answer' + (facts.unparsed === 1 ? '' : 's'), facts.unparsed ? false : null));
      var moves = facts.transitions || {};
      flags.appendChild(badge('agents right\u2192wrong ' + str(moves.correct_to_wrong) + ', wrong\u2192right ' + str(moves.wrong_to_correct), null));
    } else {
      flags.appendChild(el('span', {'class': 'muted', text: 'No turn-by-turn facts: ' + str(debate.no_facts)}));
    }
    if (debate.oracle) flags.appendChild(badge('oracle ordering (uses the gold answer)', false));
    view.appendChild(flags);
    view.appendChild(costs(debate));

    var question = el('details', {'open': ''}, el('summary', {}, el('b', {text: 'Question'})),
      el('div', {'class': 'text', text: debate.question === null ? '(not available)' : str(debate.question)}));
    view.appendChild(question);
    view.appendChild(el('p', {}, el('b', {text: 'Gold answer: '}), typeof debate.target === 'string'
      ? debate.target : JSON.stringify(debate.target)));

    var box = el('div', {'class': 'decision', 'data-outcome': mark(row.right)},  // not .right/.wrong: they colour all text
      el('div', {}, el('b', {text: 'Decision: '}),
        debate.prediction === null ? el('span', {'class': 'wrong', text: 'no answer read'})
          : el('span', {'class': mark(row.right), text: str(debate.prediction) + tick(row.right)}),
        ' \u2014 ' + str(decision.decider) + ', ' + str(decision.reason) + ', turn ' + str(decision.turn) +
        (decision.success === false ? ' (no decision reached: fallback)' : '')),
      el('details', {}, el('summary', {text: 'decided text and details'}),
        el('div', {'class': 'text', text: str(decision.answer)}),
        el('div', {'class': 'text code', text: JSON.stringify(decision.details || {}, null, 1)})));
    var scores = Object.keys(debate.metrics || {}).map(function (k) { return k + ' ' + score(debate.metrics[k]); });
    box.appendChild(el('div', {'class': 'muted', text: 'scores: ' + scores.join(', ') +
      (debate.scoring_errors.length ? '; scoring errors: ' + debate.scoring_errors.join('; ') : '')}));
    view.appendChild(box);
    view.appendChild(grid(debate, facts, decision));
    root.setAttribute('data-messages', String(debate.messages.length));
  }
  // What the debate cost and what could not be read: calls, tokens and parse failures as the record
  // counts them. An imported debate's calls and tokens were never counted: "not recorded", not 0.
  function costs(debate) {
    function counted(value) { return typeof value === 'number' ? value.toLocaleString('en-US') : 'not recorded'; }
    var tokens = debate.tokens && typeof debate.tokens === 'object' ? debate.tokens : null;
    var used = debate.recorded === false || !tokens ? 'not recorded' : counted(tokens.total) +
      ' (prompt ' + counted(tokens.prompt) + ', completion ' + counted(tokens.completion) + ')';
    var failures = debate.parse_failures && typeof debate.parse_failures === 'object' ? debate.parse_failures : {};
    var kinds = Object.keys(failures).map(function (kind) { return kind.replace(/_/g, ' ') + ' ' + str(failures[kind]); });
    return el('p', {'class': 'costs muted'},
      el('b', {text: 'calls '}), debate.recorded === false ? 'not recorded' : counted(debate.calls),
      ' \u00b7 ', el('b', {text: 'tokens '}), used,
      ' \u00b7 ', el('b', {text: 'parse failures '}), kinds.length ? isolated(kinds.join(', ')) : 'none recorded');
  }
  function button(text, action) {
    var b = el('button', {type: 'button', text: text});
    b.addEventListener('click', action);
    return b;
  }
  function toggleAll(view, opened) {
    Array.prototype.forEach.call(view.querySelectorAll('details.msg'), function (d) { d.open = opened; });
  }
  function grid(debate, facts, decision) {
    var agents = debate.agents;
    var byId = {}, turns = 0;
    var names = {};
    agents.forEach(function (agent) { names[agent.index] = agentName(agent); });
    debate.messages.forEach(function (m) { byId[m.id] = names[m.agent]; turns = Math.max(turns, m.turn); });
    if (facts) turns = Math.max(turns, facts.votes.length);
    var head = el('tr', {}, el('th', {'class': 'turn', text: 'turn'}), el('th', {'class': 'vote', text: 'vote of the turn'}));
    agents.forEach(function (agent) {
      head.appendChild(el('th', {title: str(agent.description)}, agentName(agent),
        el('div', {'class': 'muted', text: str(agent.model) + (agent.neutral ? ' (neutral: no vote)' : '')})));
    });
    var body = el('tbody');
    for (var turn = 1; turn <= turns; turn++) {
      var line = el('tr', {'data-turn': String(turn)}, el('td', {'class': 'turn', text: String(turn)}),
                    voteCell(debate, facts, turn, decision));  // beside the turn: seen first, also when narrow
      if (turn === decision.turn) line.className = 'decided';
      agents.forEach(function (agent) {
        var cell = el('td');
        debate.messages.forEach(function (m) {
          if (m.turn === turn && m.agent === agent.index) cell.appendChild(messageBox(m, byId));
        });
        line.appendChild(cell);
      });
      body.appendChild(line);
    }
    var table = el('table', {'class': 'grid'}, el('thead', {}, head), body);
    table.style.width = 'max(100%, ' + (16 + 16 * agents.length) + 'em)';  // narrow windows scroll the grid
    return el('div', {'class': 'scroll'}, table);
  }
  function voteCell(debate, facts, turn, decision) {
    var cell = el('td', {'class': 'vote'});
    if (facts && turn <= facts.votes.length) {
      var vote = facts.votes[turn - 1], right = facts.vote_right[turn - 1];
      var answers = facts.answers[turn - 1];
      var backing = answers.filter(function (a) { return a !== null && a === vote; }).length;
      cell.appendChild(vote === null ? badge('no parsed answer', false)
        : badge(vote + tick(right) + ' (' + backing + ' of ' + answers.length + ')', right));
      if (facts.unanimous[turn - 1]) cell.appendChild(badge('unanimous', null));
    }
    debate.events.forEach(function (event) {
      if (event.turn === turn) cell.appendChild(el('details', {}, el('summary', {text: str(event.kind)}),
        el('div', {'class': 'text code', text: eventText(event)})));
    });
    if (turn === decision.turn) cell.appendChild(el('div', {}, el('b', {text: 'decided: '}), str(decision.reason)));
    return cell;
  }

  // ---- wiring ------------------------------------------------------------------------------
  function route() {
    var found = /debate=(\d+)/.exec(location.hash);
    if (found) {
      var n = Number(found[1]) - 1;
      if (n >= 0 && n < rows.length) open(n);
    }
  }
  index.notes.forEach(function (note) { $('notes').appendChild(el('p', {'class': 'note', text: note})); });
  fill($('f-config'), index.configs);
  fill($('f-task'), index.tasks);
  ['f-config', 'f-task', 'f-outcome', 'f-lost', 'f-drift', 'f-unparsed'].forEach(function (id) {
    $(id).addEventListener('change', filter);
  });
  $('f-item').addEventListener('input', filter);
  Array.prototype.forEach.call(document.querySelectorAll('#debates th[data-sort]'), function (th) {
    th.querySelector('button').addEventListener('click', function () { sortBy(th.getAttribute('data-sort')); });
  });
  $('prev').addEventListener('click', function () { page -= 1; draw(); });
  $('next').addEventListener('click', function () { page += 1; draw(); });
  window.addEventListener('hashchange', route);
  filter();
  route();
  root.setAttribute('data-viewer', 'ready');
  if (performance.mark) performance.mark('madeval-viewer-ready');  // python -m bench viewer reads it
})();
