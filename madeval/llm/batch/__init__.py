"""Debates through a provider's Batch API: the ``batch`` transport.

Every chat call ready at a moment, across all debates in flight, goes into one request file in the
OpenAI batch line format; the file is uploaded and a batch created through the Files and Batches
API (the openai client), polled, and its output and error files hand each reply to its call. A
debate's next calls form the next batch, so a run makes as many batch round trips as its longest
chain of dependent calls, not as many as its calls. Failed lines raise the transport's
``RetryableError``, so the client's retry policy sends them again in a later batch.

- :mod:`.settings`: the options (flush delay, lines and bytes per file, polling) and their parser;
- :mod:`.journal`: the run folder's record of submitted batches, read on resume so that an
  outstanding batch is collected, never submitted (and paid) twice;
- :mod:`.transport`: the transport itself.


The transport module imports the openai client (a second to import), so it is imported only
when a batch transport is built: ``from madeval.llm.batch.transport import BatchTransport``.
"""

from madeval.llm.batch.settings import BatchSettings, attach_run_folder, parse_batch_options

__all__ = ["BatchSettings", "attach_run_folder", "parse_batch_options"]
