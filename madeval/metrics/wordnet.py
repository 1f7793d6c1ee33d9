"""WordNet for METEOR, offline: NLTK's own copy when present, else Debian's ``wordnet-base``.

NLTK's METEOR matches synonyms through WordNet 3.0. ``nltk.download("wordnet")`` needs the
network, so madeval also reads the WordNet 3.0 database that Debian's ``wordnet-base`` package
installs in ``/usr/share/wordnet`` (``make install`` installs it). That folder lacks one small
file NLTK's reader wants, ``lexnames`` (the 45 lexicographer file names, listed in the
``lexnames(5WN)`` manual page), so madeval's reader serves it from memory. ``$WNSEARCHDIR``
(WordNet's own variable) overrides the Debian location.
"""

from __future__ import annotations

import functools
import io
import os
import warnings
from pathlib import Path

from madeval.errors import UsageError

DEBIAN_WORDNET = Path("/usr/share/wordnet")
REQUIRED_FILES = ("data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb",
                  "index.adj", "index.adv", "noun.exc", "verb.exc", "adj.exc", "adv.exc")

# lexnames(5WN), WordNet 3.0: file number (the line index), name, syntactic category
# (1 noun, 2 verb, 3 adjective, 4 adverb).
LEXICOGRAPHER_FILES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
MISSING = (
    "METEOR needs the WordNet database offline: install Debian's wordnet-base "
    "(apt-get install wordnet-base; 'make install' does it) or run nltk.download('wordnet')"
)


def lexnames_text() -> str:
    """The content of WordNet 3.0's ``lexnames`` file."""
    return "".join(
        f"{number:02d}\t{name}\t{CATEGORY[name.split('.')[0]]}\n" for number, name in enumerate(LEXICOGRAPHER_FILES)
    )


def debian_folder() -> Path | None:
    """The WordNet 3.0 database folder (``$WNSEARCHDIR`` or Debian's), if it is complete."""
    folder = Path(os.environ.get("WNSEARCHDIR") or DEBIAN_WORDNET)
    return folder if all((folder / name).is_file() for name in REQUIRED_FILES) else None


@functools.lru_cache(maxsize=1)
def wordnet():
    """An NLTK WordNet reader that works offline, or a UsageError saying how to get one."""
    import nltk  # heavy, optional: loaded on first use

    try:
        nltk.data.find("corpora/wordnet")
        from nltk.corpus import wordnet as nltk_wordnet

        nltk_wordnet.ensure_loaded()
        return nltk_wordnet
    except LookupError:
        pass
    source = debian_folder()
    if source is None:
        raise UsageError(MISSING)
    # NLTK reads corpora only below its data paths: allow the Debian folder.
    if str(source) not in nltk.data.path:
        nltk.data.path.append(str(source))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": not needed
        return _reader_class()(str(source), None)


@functools.lru_cache(maxsize=1)
def _reader_class():
    """NLTK's WordNet reader, serving ``lexnames`` from memory (the Debian folder lacks it)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader  # nltk: on first use, as above

    class DebianWordNetReader(WordNetCorpusReader):
        """WordNet 3.0 read from Debian's database folder."""

        def open(self, file):
            if file == "lexnames":
                return io.StringIO(lexnames_text())
            return super().open(file)

        def map_wn(self, version="wordnet"):
            # This is WordNet 3.0 itself: there is no other version to map synsets from.
            return None

    return DebianWordNetReader
