"""Gold answers of math tasks that need parsing."""

from __future__ import annotations


def gsm8k_answer(doc):
    """GSM8K's final number: what follows "####" in the worked answer, without separators."""
    return doc["answer"].split("####")[-1].strip().replace(",", "")
