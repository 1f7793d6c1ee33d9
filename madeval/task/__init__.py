"""Tasks: the task definition (:mod:`.definition`), task files (:mod:`.files`), data sources,
local mirrors and task groups.
"""
