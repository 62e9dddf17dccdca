"""Stand-ins for servers in unit tests (never in the tests that claim an integration)."""
