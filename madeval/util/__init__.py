"""Small helpers every stage may use: the event loop (:mod:`.aio`), text shown to a person
(:mod:`.shown_text`), the cache folder (:mod:`.cache_dir`). Imports nothing else of madeval but
:mod:`madeval.errors`.
"""
