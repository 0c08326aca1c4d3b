"""Batch APIs: the requests of a run sent as one OpenAI Batch (half the price, 24 h window).

A batch run writes every request a run would send as one line of the OpenAI Batch JSONL format
(:mod:`.requests_file`), uploads it and creates the batch (:mod:`.client`), records what the
server gave back in the run's batch folder at once (:mod:`.state`), polls it (:mod:`.poll`) and
merges the output through the same reply reading, validation, predictions lines and answer
cache as online requests (:mod:`.merge`). :mod:`.runner` drives the rounds: a kill at any
point and the same command again resumes the recorded batch, never creates a second one.
"""
