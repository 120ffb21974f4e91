"""Redaction of ticket dumps: no user name, host name, home path or secret
leaves the machine unless asked (``--no-redact``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# The user-info part of anything URL-shaped: ``scheme://user:password@``, and the
# same after a ':' -> ';' rewrite (a fix command for a ';'-separated variable
# turns ``https://u:p@h`` into ``https;//u;p@h``).
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*[:;]//)[^/\s@]+@")
# ``user:password@host`` without a scheme (pip and git accept it), also after a
# '/' (a URL a split at ':' cut from its scheme, as in a ':'-separated path).
_BARE_CREDENTIALS = re.compile(r"(?<![\w\\.%+-])[\w.%+-]+[:;][^\s/\\@'\"<>;:]+@(?=[\w-])")
# Anyone's home folder in a path (a log pasted from another machine names
# that machine's user, whom this machine's redactor does not know): the
# component after Users\ or /home/ (separators may come doubled, as in a path
# quoted inside JSON), except the shared folders that name no person.
_ANY_HOME = re.compile(
    r"(?i)((?:\b[a-z]:)?[\\/]+(?:users|home)[\\/]+)"
    r"(?!(?:public|default|default user|all users|shared)(?:[\\/'\"\s]|$))([^\\/\s:*?\"'<>|]+)"
)
# A user name at least this long is replaced wherever it appears between
# non-letters, not only as a whole path component (``/data/zedkowalski-9_models``,
# ``C:\work\zedkowalski_projects``). A short one is kept inside a word: user
# "tim" must not turn "onnxruntime" (a key, a module name) into "onnxrun<user>e".
MIN_USER_ANYWHERE = 3
# From this length a name is replaced inside words too (``zedkowalskiModels``):
# ordinary words and keys do not contain a 6-letter user name by chance.
MIN_USER_INSIDE_WORDS = 6
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)\b([A-Z0-9_]*(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY)[A-Z0-9_]*)=([^\s;]+)"
)


def short_name_stem(name: str) -> str | None:
    """The part before ``~N`` of the Windows 8.3 short name of a folder called
    ``name`` (``zedkowalski`` -> ``ZEDKOW``), if it would have one."""
    stem = re.sub(r"[\s.]", "", name)[:6]
    if len(stem) < MIN_USER_ANYWHERE or not stem.isascii():
        return None
    return stem


class Redactor:
    """Replaces home paths with ``~``, the user name (as a path component)
    with ``<user>``, the host name with ``<host>`` and credentials in URLs or
    ``*TOKEN=``-style assignments with ``<redacted>``, in every string of a
    JSON-like value."""

    def __init__(self, homes: Iterable[str], users: Iterable[str], hosts: Iterable[str]) -> None:
        self._homes = sorted(
            {h.rstrip("\\/") for h in homes if h and len(h.rstrip("\\/")) > 1},
            key=len,
            reverse=True,
        )
        # Each home as written, with / and with \ (a path copied across shells).
        self._home_variants = [
            variant
            for home in self._homes
            for variant in dict.fromkeys((home, home.replace("\\", "/"), home.replace("/", "\\")))
        ]
        # A user name of 6+ characters is replaced wherever it appears, 3 to 5
        # characters wherever it stands between non-letters, in any case,
        # together with its Windows 8.3 short form (ZEDKOW~1); a shorter one
        # ("ai") only as a whole path component.
        self._users: list[tuple[str, re.Pattern[str]]] = []
        for user in sorted({u for u in users if u}, key=len, reverse=True):
            if len(user) >= MIN_USER_INSIDE_WORDS:
                pattern = rf"(?i){re.escape(user)}"
                self._users.append((user.lower(), re.compile(pattern)))
            elif len(user) >= MIN_USER_ANYWHERE:
                pattern = rf"(?i)(?<![A-Za-z]){re.escape(user)}(?![A-Za-z])"
                self._users.append((user.lower(), re.compile(pattern)))
            else:
                pattern = rf"(?i)(?<=[\\/]){re.escape(user)}(?=[\\/]|$)"
                self._users.append((user.lower(), re.compile(pattern)))
            short = short_name_stem(user)
            if short is not None:
                pattern = rf"(?i)(?<![A-Za-z0-9]){re.escape(short)}~\d{{1,6}}"
                self._users.append(("~", re.compile(pattern)))
                # After four collisions Windows hashes: 2 letters + 4 hex digits.
                pattern = rf"(?i)(?<![A-Za-z0-9]){re.escape(short[:2])}[0-9A-F]{{4}}~\d{{1,6}}"
                self._users.append(("~", re.compile(pattern)))
        self._hosts = [
            (h.lower(), re.compile(rf"(?i)(?<![A-Za-z0-9]){re.escape(h)}(?![A-Za-z0-9])"))
            for h in sorted({h for h in hosts if h and len(h) >= 2}, key=len, reverse=True)
        ]

    @classmethod
    def for_this_machine(cls) -> Redactor:
        homes = [str(Path.home())]
        homes += [os.environ[v] for v in ("HOME", "USERPROFILE") if os.environ.get(v)]
        users = {Path(h.rstrip("\\/")).name for h in homes}
        users.update(os.environ[v] for v in ("USER", "USERNAME", "LOGNAME") if os.environ.get(v))
        users -= {"root", "home", "Users", "users", ""}
        # os.uname() and COMPUTERNAME: no socket import on the hot path.
        node = os.uname().nodename if hasattr(os, "uname") else ""
        hosts = {node, os.environ.get("COMPUTERNAME", "")}
        hosts |= {h.split(".")[0] for h in hosts if h}
        return cls(homes, users, hosts)

    def text(self, value: str) -> str:
        for variant in self._home_variants:
            if variant in value:
                value = value.replace(variant, "~")
        lower = value.lower()
        if "users" in lower or "home" in lower:
            value = _ANY_HOME.sub(r"\1<user>", value)
        # Hosts first: a host name often holds the user name (alice-laptop).
        for word, pattern in self._hosts:
            if word in lower:  # a substring test first: most strings hold no name
                value = pattern.sub("<host>", value)
        for word, pattern in self._users:
            if word in lower:
                value = pattern.sub("<user>", value)
        if "@" in value:
            value = _URL_CREDENTIALS.sub(r"\1<redacted>@", value)
            value = _BARE_CREDENTIALS.sub("<redacted>@", value)
        if "=" in value:
            value = _SECRET_ASSIGNMENT.sub(r"\1=<redacted>", value)
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value


def redact_document(document: dict[str, Any]) -> dict[str, Any]:
    """A JSON document people attach to tickets, with ``redacted: true``."""
    cleaned: dict[str, Any] = Redactor.for_this_machine().value(document)
    cleaned["redacted"] = True
    return cleaned
