"""A keyring backend for tests: a JSON file named by `GRYVIA_TEST_KEYRING` (service -> user ->
secret). Selected in a subprocess with
`PYTHON_KEYRING_BACKEND=tests.support.keyringbackend.JsonFileKeyring` (and the repository root
on PYTHONPATH), so `gryvia login` and the exec plugin kubectl runs share it and a test can read
what was stored."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

BACKEND = "tests.support.keyringbackend.JsonFileKeyring"


class JsonFileKeyring(KeyringBackend):
    """Secrets in the plain JSON file `$GRYVIA_TEST_KEYRING` (tests only)."""

    priority = 1  # type: ignore[assignment]

    @property
    def _path(self) -> Path:
        return Path(os.environ["GRYVIA_TEST_KEYRING"])

    def _read(self) -> dict[str, Any]:
        return json.loads(self._path.read_text()) if self._path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(service, {}).get(username)  # type: ignore[no-any-return]

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._read()
        data.setdefault(service, {})[username] = password
        self._path.write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._read()
        if username not in data.get(service, {}):
            raise PasswordDeleteError(username)
        del data[service][username]
        self._path.write_text(json.dumps(data))
