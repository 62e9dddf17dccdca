"""``python -m app``: the ``nuggetflow`` command."""

from app.cli import main

raise SystemExit(main())
