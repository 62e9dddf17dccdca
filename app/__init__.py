"""The top floor: the ``nuggetflow`` command line (one parser, subcommands from each
area), the embedded demo, and the one module that wires settings, stores, embedder, roles,
optimizer and engines together (:mod:`app.wiring`). Nothing below imports it (see
docs/architecture.md, "Packages")."""
