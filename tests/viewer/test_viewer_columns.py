"""The viewer's list and a debate's header, in headless Chromium: the list sorts by any column
(each heading a button, so from the keyboard too, with ``aria-sort``), a debate's header shows its
calls, tokens and parse failures ("not recorded" for an imported debate, never 0), and a message's
preview is the start of its text, whitespace collapsed, read only as far as needed."""

from __future__ import annotations

import json

from test_viewer import attribute, chromium_dom, with_probe

from debates_by_hand import hand_record
from madeval.viewer.debates import view_debate
from madeval.viewer.page import write_page

HOSTILE_KIND = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"

#: Message texts whose previews are compared with collapsing the whole text (the old way).
TEXTS = {(1, 0): "  lead  \n\n" + "word " * 40 + " " * 3000 + "tail",
         (1, 1): "x" * 159 + "   \n",
         (1, 2): "y" * 160 + " \t ",
         (2, 0): "\t".join(["a"] * 200),
         (2, 1): "Final Solution: A. " + "z " * 1_000_000,
         (2, 2): " " * 1023 + "\u00e9\U0001F600" + " " * 2000 + "end of a short text"}


def records() -> list[tuple[dict, bool]]:
    """Four debates, each with whether its calls and tokens were recorded (False: imported)."""
    lost = hand_record("item 10", "cfg b", [["B", "B", "A"], ["A", "A", "A"]], "A", texts=TEXTS)
    lost.update(calls=6, tokens={"prompt": 1200, "completion": 345, "total": 1545},
                parse_failures={"vote_abstentions": 1, "unparseable_solutions": 0})
    won = hand_record("item 9", "cfg a", [["A", "A", "B"], ["B", "B", "B"]], "B")  # imported: zeros not recorded
    unparsed = hand_record("item 2", "cfg c", [[None, "B", "B"]], "B")
    unparsed["parse_failures"] = {HOSTILE_KIND: 2}
    unscored = {**hand_record("item 5", "cfg c", [[None, "B", "B"]], "B"), "metrics": {"no_such_metric": 0.5}}
    return [(lost, True), (won, False), (unparsed, True), (unscored, True)]


PROBE = """
(function () {
  var root = document.documentElement, out = {sorted: {}};
  function items() {
    return Array.prototype.map.call(document.querySelectorAll('#debates tbody tr td:nth-child(4)'), function (td) { return td.textContent; });
  }
  function press(key) { document.querySelector('#debates th[data-sort="' + key + '"] button').click(); }  // Enter's effect
  out.sorted.read = items();
  [['item', 'item'], ['item', 'item again'], ['unparsed', 'unparsed'], ['unparsed', 'unparsed again'],
   ['first', 'first'], ['turns', 'turns']].forEach(function (step) { press(step[0]); out.sorted[step[1]] = items(); });
  press('first');
  var outcome = document.getElementById('f-outcome');
  outcome.value = 'right'; outcome.dispatchEvent(new Event('change'));
  out.sorted['first, right only'] = items();
  out.aria = Array.prototype.map.call(document.querySelectorAll('#debates th'), function (th) { return th.getAttribute('aria-sort'); });
  var button = document.querySelector('#debates th[data-sort="score"] button');
  button.focus();
  out.focusable = document.activeElement === button && button.tagName === 'BUTTON';
  outcome.value = ''; outcome.dispatchEvent(new Event('change'));
  var opened = [];
  function open(number, then) {
    root.removeAttribute('data-opened');
    location.hash = 'debate=' + number;
    (function wait() {
      if (root.getAttribute('data-opened') !== String(number - 1)) return setTimeout(wait, 20);
      var view = document.getElementById('debate');
      opened.push({costs: view.querySelector('p.costs').textContent,
                   previews: Array.prototype.map.call(view.querySelectorAll('details.msg'), function (d) {
                     var text = d.querySelector('div.text').textContent;
                     var old = text.replace(/\\s+/g, ' ').trim();  // what the preview was: the whole text collapsed
                     old = old.length > 160 ? old.slice(0, 159) + '\\u2026' : old;
                     return [d.querySelector('.preview').textContent, old];
                   })});
      then();
    })();
  }
  open(1, function () { open(2, function () { open(3, function () {
    out.opened = opened;
    root.setAttribute('data-probe', JSON.stringify(out));
  }); }); });
})();
"""  # noqa: E501 - embedded JavaScript


def test_the_list_sorts_by_each_column_and_a_debate_shows_its_costs_and_previews(tmp_path):
    page = tmp_path / "page.html"
    write_page(page, "columns",
               [view_debate(record, "q", recorded=recorded) for record, recorded in records()], lambda: [])
    dom = chromium_dom(with_probe(page, PROBE, tmp_path / "probe.html"), tmp_path / "profile")
    assert attribute(dom, "data-pwned") is None
    seen = json.loads(attribute(dom, "data-probe"))
    assert seen["sorted"] == {
        "read": ["item 10", "item 9", "item 2", "item 5"],
        "item": ["item 2", "item 5", "item 9", "item 10"],  # numbers in ids in their order, not "10" < "2"
        "item again": ["item 10", "item 9", "item 5", "item 2"],
        "unparsed": ["item 10", "item 9", "item 2", "item 5"],  # 0, 0, 1, 1: ties keep the order read
        "unparsed again": ["item 2", "item 5", "item 10", "item 9"],
        "first": ["item 9", "item 10", "item 2", "item 5"],  # wrong, right, right, then no vote scored (last)
        "turns": ["item 2", "item 5", "item 10", "item 9"],  # 1, 1, 2, 2
        "first, right only": ["item 9", "item 2"],  # a filter keeps the sorting
    }
    assert seen["aria"] == ["none"] * 7 + ["ascending"] + ["none"] * 3  # the turn-1 vote column sorts it
    assert seen["focusable"]
    lost, won, unparsed = seen["opened"]
    assert lost["costs"] == "calls 6 \u00b7 tokens 1,545 (prompt 1,200, completion 345) \u00b7 " \
                            "parse failures vote abstentions 1, unparseable solutions 0"
    assert won["costs"] == "calls not recorded \u00b7 tokens not recorded \u00b7 parse failures none recorded"
    assert unparsed["costs"] == (f"calls 3 \u00b7 tokens 0 (prompt 0, completion 0) \u00b7 "
                                 f"parse failures {HOSTILE_KIND.replace('_', ' ')} 2")
    previews = lost["previews"]
    assert len(previews) == 6 and all(new == old for new, old in previews), previews
    assert previews[0][0].startswith("lead word word") and previews[0][0].endswith("\u2026")
    assert previews[1][0] == "x" * 159 and previews[2][0] == "y" * 160  # 160 characters are not cut
    assert previews[5][0] == "\u00e9\U0001F600 end of a short text"
