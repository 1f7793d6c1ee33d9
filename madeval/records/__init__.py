"""The run folder's format: its files (:mod:`.folder`), the lock that keeps one writer
(:mod:`.lock`) and the one safe way to open, write and replace a file in it (:mod:`.safe_files`).
The run and the importers write it; analysis, the viewer and the board read it.
"""
