"""The governed nugget index: record model, governance rules, stores, hybrid retrieval."""
