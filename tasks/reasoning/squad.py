"""SQuAD 2.0 targets: the answer texts, or "[UNKNOWN]" for an unanswerable question."""

from __future__ import annotations

UNKNOWN = "[UNKNOWN]"  # what the instruction (001 Appendix G) asks for when there is no answer


def answer_texts(doc):
    """The gold answer texts of a row; ``["[UNKNOWN]"]`` when it has none."""
    texts = [str(text) for text in (doc.get("answers") or {}).get("text") or []]
    return texts or [UNKNOWN]
