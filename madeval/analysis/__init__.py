"""Reading finished runs: a run's data (:mod:`.run_data`), the facts of each debate
(:mod:`.debate_facts`), statistics (:mod:`.stats`), power (:mod:`.power`) and pairwise comparisons
(:mod:`.compare`). Every reader of a finished run (board, dynamics, viewer, export, rescore) looks down here.
"""
