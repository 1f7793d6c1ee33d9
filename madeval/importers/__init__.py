"""Importers: other tools' output read as madeval runs (``madeval import FORMAT FILE...``).

One module per format (:mod:`.mallm`: MALLM's discussion output; :mod:`.lmeval`: lm-eval's
``--log_samples`` files), the contract they follow (:mod:`.base`), finding the task item a record
is about (:mod:`.matching`) and the shared, all-or-nothing writing of the run folder
(:mod:`.writer`). Both formats are registered as a built-in plugin (:mod:`.plugin`) through the
``register_importers`` hook a third-party format uses too.
"""
