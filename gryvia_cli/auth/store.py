"""Where `gryvia login` keeps a login: the system keyring, through `keyring`.

One secret per issuer and client (service `gryvia-oidc`, user `<client id>@<issuer>`), holding
the refresh token and the current ID token (`core.oidc.StoredLogin`). Without a working keyring
backend the login is refused, with a hint: no token is ever written to a plain file or to the
kubeconfig.
"""

from __future__ import annotations

from gryvia_cli.core.oidc import OidcError, StoredLogin, keyring_key

SERVICE = "gryvia-oidc"
NO_BACKEND_HINT = (
    "run a Secret Service (GNOME Keyring, KWallet, KeePassXC) or the OS keychain, or point "
    "PYTHON_KEYRING_BACKEND at an installed encrypted backend (for example "
    "keyrings.cryptfile.cryptfile.CryptFileKeyring)"
)


def _backend() -> object:
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or not (
        getattr(backend, "backends", None) is None or backend.backends  # type: ignore[attr-defined]
    ):
        raise OidcError(
            "no keyring backend is available: refusing to keep the refresh token in a plain file",
            hint=NO_BACKEND_HINT,
        )
    return backend


def backend_name() -> str:
    """The keyring backend in use (`module.Class`), for messages and `auth status`.

    Raises OidcError when there is none.
    """
    backend = _backend()
    return f"{type(backend).__module__}.{type(backend).__name__}"


def save(login: StoredLogin) -> None:
    """Store `login`, replacing an earlier one for its issuer and client.

    Raises OidcError when there is no backend or the backend fails (locked, no D-Bus).
    """
    from keyring.errors import KeyringError

    backend = _backend()
    try:
        backend.set_password(  # type: ignore[attr-defined]
            SERVICE, keyring_key(login.issuer, login.client_id), login.to_json()
        )
    except KeyringError as exc:
        raise OidcError(f"the keyring refused the login: {exc}", hint=NO_BACKEND_HINT) from None


def load(issuer: str, client_id: str) -> StoredLogin:
    """The stored login of `issuer` and `client_id`.

    Raises OidcError when there is none (log in first) or the keyring fails.
    """
    from keyring.errors import KeyringError

    backend = _backend()
    try:
        text = backend.get_password(SERVICE, keyring_key(issuer, client_id))  # type: ignore[attr-defined]
    except KeyringError as exc:
        raise OidcError(f"reading the keyring failed: {exc}", hint=NO_BACKEND_HINT) from None
    if not text:
        raise OidcError(
            f"not logged in to {issuer} (client {client_id})",
            hint=f"run 'gryvia login --issuer {issuer} --client-id {client_id}'",
        )
    return StoredLogin.from_json(text)


def delete(issuer: str, client_id: str) -> bool:
    """Remove the stored login; return False when there was none."""
    from keyring.errors import KeyringError, PasswordDeleteError

    backend = _backend()
    try:
        backend.delete_password(SERVICE, keyring_key(issuer, client_id))  # type: ignore[attr-defined]
    except PasswordDeleteError:
        return False
    except KeyringError as exc:
        raise OidcError(f"the keyring refused to delete the login: {exc}") from None
    return True
