"""One debate: the decide loop (:mod:`.loop`), its replay on a stored transcript, the challenge
round, agreement parsing, the debate's LLM session and the published prompts. Imports neither
settings nor tasks.
"""
