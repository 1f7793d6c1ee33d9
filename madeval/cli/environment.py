"""The environment variables madeval reads, for the ``--help`` of ``madeval`` and ``madeval run``."""

from __future__ import annotations

#: Shown after the options; ``\b`` keeps click from re-wrapping the lines.
ENVIRONMENT = """\b
Environment variables:
  MADEVAL_DATA_DIR      folder of local benchmark mirrors (JSONL), read when the
                        Hugging Face hub cannot be
  HF_HUB_OFFLINE=1      never try the Hugging Face hub: read the mirrors only
  HF_TOKEN              Hugging Face access token, for gated datasets
  MADEVAL_API_KEY       API key of --base-url (else OPENAI_API_KEY);
                        MADEVAL_API_KEY_<NAME> for the endpoint NAME
  MADEVAL_CACHE_DIR     folder of madeval's caches (responses, lm-eval's task
                        index, the embedded model as served) [default:
                        ~/.cache/madeval]
  MADEVAL_LOAD_PLUGINS  comma-separated allow-list of third-party plugins
                        ("" loads none)"""
