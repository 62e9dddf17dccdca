"""Per-tenant bearer tokens: authentication, authorization, configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from query.auth import AuthenticationError, PermissionDeniedError, TokenAuth

TOKEN = "tok-acme-0123456789abcdef"


def test_token_maps_to_its_tenants_only() -> None:
    auth = TokenAuth({TOKEN: ["acme", "acme-eu"]})
    who = auth.authenticate([("authorization", f"Bearer {TOKEN}")])
    auth.authorize(who, "acme")
    auth.authorize(who, "acme-eu")
    with pytest.raises(PermissionDeniedError) as err:
        auth.authorize(who, "globex")
    assert err.value.field == "tenant" and TOKEN not in str(err.value)
    assert (auth.token_count, auth.tenant_count, auth.open) == (1, 2, False)


@pytest.mark.parametrize("metadata", [
    [], [("user-agent", "x")], [("authorization", TOKEN)],
    [("authorization", f"Basic {TOKEN}")], [("authorization", "Bearer ")],
    [("authorization", "Bearer wrong-token-0123456789")],
])
def test_missing_malformed_or_unknown_tokens_fail(metadata: list[tuple[str, str]]) -> None:
    with pytest.raises(AuthenticationError) as err:
        TokenAuth({TOKEN: ["acme"]}).authenticate(metadata)
    assert TOKEN not in str(err.value)


def test_scheme_is_case_insensitive_and_bytes_accepted() -> None:
    auth = TokenAuth({TOKEN: ["acme"]})
    assert auth.authenticate([("authorization", f"bearer {TOKEN}")]).tenants == {"acme"}
    assert auth.authenticate([("authorization", f"Bearer {TOKEN}".encode())]).may_use("acme")


def test_open_mode_without_configuration(tmp_path: Path) -> None:
    auth = TokenAuth.from_settings(Settings.from_env({}))
    assert auth.open
    who = auth.authenticate([])
    auth.authorize(who, "anyone")
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({TOKEN: ["acme"]}))
    from_file = TokenAuth.from_settings(
        Settings.from_env({"NUGGETFLOW_AUTH_TOKENS_FILE": str(path)}))
    assert not from_file.open
    assert from_file.authenticate([("authorization", f"Bearer {TOKEN}")]).may_use("acme")
    from_env = TokenAuth.from_settings(
        Settings.from_env({"NUGGETFLOW_AUTH_TOKENS": path.read_text()}))
    with pytest.raises(AuthenticationError):
        from_env.authenticate([])
