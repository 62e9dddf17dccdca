"""nuggetflow: turn user corrections of a RAG assistant into governed, discoverable nuggets.

Packages: ``query`` (governed index, retrieval, gRPC service), ``optimizer`` (LLM layer,
extraction, INO), ``stream`` (Faust agents). This package holds what they share: settings,
errors, logging, the CLI and the generated wire types (``nuggetflow.v1``).
"""

__version__ = "0.1.0"
