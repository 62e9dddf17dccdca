"""Feedback streaming: Kafka topics, Faust agents, dead letters and the embedded runner.

The processing steps live in :mod:`stream.steps` as plain async functions over bytes;
the Faust agents (:mod:`stream.agents`) and the embedded runner (:mod:`stream.runner`)
are thin wrappers that move records between those steps, so both run the same code.
"""
