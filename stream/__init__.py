"""Feedback streaming: Faust app, agents, topics, workers, the embedded runner."""
