"""Callers are tenants, identified by their API key (hashed; never stored)."""

from __future__ import annotations

import hashlib
import hmac

from proxy.errors import ProxyError

ANONYMOUS_TENANT = "anonymous"


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def tenant_id_for(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class Authenticator:
    def __init__(self, api_keys: list[str], admin_key: str | None) -> None:
        self._keys = [k.encode() for k in api_keys]
        self._admin = admin_key.encode() if admin_key else None

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    @staticmethod
    def _matches(candidate: bytes, keys: list[bytes]) -> bool:
        # Compare against every key, without short-circuit, in constant time each.
        found = False
        for key in keys:
            found |= hmac.compare_digest(candidate, key)
        return found

    def tenant(self, authorization: str | None) -> str:
        """The caller's tenant id, or 401."""
        token = bearer_token(authorization)
        if not self._keys:
            return tenant_id_for(token) if token else ANONYMOUS_TENANT
        if token is None or not self._matches(token.encode(), self._keys):
            raise ProxyError(
                401,
                "Incorrect or missing API key. Send 'Authorization: Bearer <key>' with a key "
                "listed in memproxy's server.api_keys.",
                code="invalid_api_key",
            )
        return tenant_id_for(token)

    def admin(self, authorization: str | None) -> None:
        """401 without a key, 403 with a wrong one or when no admin key is configured."""
        token = bearer_token(authorization)
        if token is None:
            raise ProxyError(
                401,
                "admin routes need 'Authorization: Bearer <admin key>'",
                code="missing_admin_key",
            )
        if self._admin is None:
            raise ProxyError(
                403,
                "admin routes are off: no admin key is configured. Set server.admin_key "
                "(or MEMPROXY_ADMIN_KEY); `memproxy serve` on a loopback host generates one "
                "and prints the inspector's URL with it",
                code="forbidden",
            )
        if not hmac.compare_digest(token.encode(), self._admin):
            raise ProxyError(
                403, "this key is not the admin key (server.admin_key)", code="forbidden"
            )
