"""The prefix-reuse computation (madeval.llm.prefix_reuse) on hand-made prompts, fractions worked out by hand."""

from __future__ import annotations

import pytest

from madeval.llm.prefix_reuse import PrefixReuse, common_prefix_length, prefix_reuse, prompt_tokens


def test_prompt_tokens_render_role_then_words_and_punctuation_in_order():
    messages = [{"role": "system", "content": "Solve: 12+3?"}, {"role": "user", "content": "Let's go."}]
    assert prompt_tokens(messages) == ["<system>", "Solve", ":", "12", "+", "3", "?",
                                       "<user>", "Let", "'", "s", "go", "."]


def test_message_boundaries_are_tokens_so_a_split_message_is_a_different_prompt():
    whole = prompt_tokens([{"role": "user", "content": "a b"}])
    split = prompt_tokens([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert whole == ["<user>", "a", "b"] and split == ["<user>", "a", "<user>", "b"]
    assert common_prefix_length(whole, split) == 2


def test_a_growing_conversation_reuses_its_longest_earlier_prefix():
    first = list("abcd")           # 4 tokens, nothing earlier: 0
    grown = list("abcdef")         # 6 tokens, extends first: 4
    branched = list("abx")         # 3 tokens, shares "ab" with both: 2
    repeated = list("abcdef")      # 6 tokens, equal to grown: 6
    reuse = prefix_reuse([first, grown, branched, repeated])
    assert reuse == PrefixReuse(calls=4, prompt_tokens=19, reusable_tokens=12)
    assert reuse.fraction == pytest.approx(12 / 19)


def test_reuse_is_from_any_earlier_prompt_not_only_the_last_one():
    # The third prompt shares "pq" with the first and nothing with the second.
    assert prefix_reuse([list("pqr"), list("xy"), list("pqs")]) == PrefixReuse(3, 8, 2)


def test_only_earlier_prompts_count():
    # Two identical prompts: the first is computed, the second cached (1 of 2, never 2 of 2).
    assert prefix_reuse([["a"], ["a"]]).fraction == 0.5
    # A moved first token (a counter or a role at the top) defeats the cache entirely.
    assert prefix_reuse([list("1abc"), list("2abc")]) == PrefixReuse(2, 8, 0)


def test_debates_add_up_weighted_by_tokens():
    small = prefix_reuse([list("ab"), list("ab")])           # 2 of 4
    large = prefix_reuse([list("abcdefgh"), list("zzzzzzzz")])  # 0 of 16
    total = small + large
    assert total == PrefixReuse(4, 20, 2) and total.fraction == pytest.approx(0.1)
    assert prefix_reuse([]) == PrefixReuse() and PrefixReuse().fraction == 0.0
