"""Prompt texts: madeval's own (:mod:`.madeval`) and MALLM's, verbatim (:mod:`.mallm`)."""
