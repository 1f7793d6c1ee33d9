"""The engine: the run (:mod:`.engine`), its plan, scheduler, resume, progress, rescore and the
checks said before the first call (:mod:`.before_run`, :mod:`.cache_key`, :mod:`.estimate`).
"""
