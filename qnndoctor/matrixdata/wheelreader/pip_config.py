"""Where the package index is: pip's own configuration (options, ``PIP_*``
variables, config files, pip's built-in default), read the way pip reads it,
so that no registry host is ever written into this tool."""

from __future__ import annotations

import configparser
import importlib
import os
import re
import ssl
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import platformdirs

from .common import UsageError


@dataclass(frozen=True)
class Setting:
    """A pip setting and where it came from (for messages and provenance)."""

    value: str
    source: str


def _pip_user_config_dir() -> str:
    if sys.platform == "darwin":
        # pip prefers ~/Library/Application Support/pip, else ~/.config/pip.
        path = Path.home() / "Library" / "Application Support" / "pip"
        return str(path if path.is_dir() else Path.home() / ".config" / "pip")
    return platformdirs.user_config_dir("pip", appauthor=False, roaming=True)


def _pip_site_config_dirs() -> list[str]:
    if sys.platform == "darwin":
        return [platformdirs.site_data_dir("pip", appauthor=False, multipath=True)]
    value = platformdirs.site_config_dir("pip", appauthor=False, multipath=True)
    if sys.platform == "win32":
        return [value]
    return [*value.split(os.pathsep), "/etc"]


def pip_config_files(
    environ: Mapping[str, str] | None = None, prefix: str | None = None
) -> list[Path]:
    """The files pip reads, lowest precedence first (global, user, the venv's,
    $PIP_CONFIG_FILE), exactly as pip orders and filters them."""
    env = os.environ if environ is None else environ
    basename = "pip.ini" if sys.platform == "win32" else "pip.conf"
    env_file = env.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    files = [Path(d) / basename for d in _pip_site_config_dirs()]
    if not (env_file and Path(env_file).exists()):
        legacy = Path.home() / ("pip" if sys.platform == "win32" else ".pip") / basename
        files += [legacy, Path(_pip_user_config_dir()) / basename]
    files.append(Path(prefix if prefix is not None else sys.prefix) / basename)
    if env_file:
        files.append(Path(env_file))
    return files


def pip_config_value(key: str, files: Iterable[Path]) -> Setting | None:
    """``key`` from pip config files: later files win, ``[install]`` beats
    ``[global]`` (the sections ``pip install`` reads)."""
    found: Setting | None = None
    for path in files:
        parser = configparser.RawConfigParser()
        try:
            with open(path, encoding="utf-8") as handle:
                parser.read_file(handle)
        except (OSError, UnicodeError):
            continue
        except configparser.Error as exc:
            raise UsageError(f"pip configuration file {path} is unreadable: {exc}") from exc
        for section in ("global", "install"):
            if not parser.has_section(section):
                continue
            for name, value in parser.items(section):
                if name.lower().replace("_", "-") == key and value.strip():
                    found = Setting(value.strip(), f"{path} [{section}] {key}")
    return found


def pip_default_index() -> str:
    """pip's built-in index, read from pip itself (no host name of our own)."""
    try:
        module = importlib.import_module("pip._internal.models.index")
        url = module.PyPI.simple_url
    except Exception as exc:
        raise UsageError(
            "no index is configured and pip (whose default it would be) is not importable "
            f"here ({type(exc).__name__}); pass --index-url"
        ) from exc
    return str(url)


def resolve_pip_setting(
    cli_value: str | None,
    key: str,
    environ: Mapping[str, str] | None = None,
    files: Iterable[Path] | None = None,
) -> Setting | None:
    """Option, else ``PIP_<KEY>``, else the config files: pip's precedence."""
    env = os.environ if environ is None else environ
    if cli_value:
        return Setting(cli_value, f"--{key}")
    env_name = "PIP_" + key.upper().replace("-", "_")
    if env.get(env_name, "").strip():
        return Setting(env[env_name].strip(), env_name)
    return pip_config_value(key, pip_config_files(env) if files is None else files)


PIP_DEFAULT = "pip's built-in default"


def resolve_index_url(
    cli_value: str | None,
    environ: Mapping[str, str] | None = None,
    files: Iterable[Path] | None = None,
) -> Setting:
    """The index to read: --index-url, PIP_INDEX_URL, pip config, pip's default."""
    found = resolve_pip_setting(cli_value, "index-url", environ, files)
    if found is None:
        found = Setting(pip_default_index(), PIP_DEFAULT)
    try:
        parts = urlsplit(found.value)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError as exc:
        raise UsageError(f"index URL from {found.source} is malformed: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"index URL {public_url(found.value)!r} (from {found.source}) is not an http(s) URL; "
            "this tool reads indexes over HTTP"
        )
    return found


def public_url(url: str) -> str:
    """``url`` without a password: provenance and messages end up in git."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return re.sub(r"//[^/@]*@", "//<redacted>@", url)
    if parts.password is None and parts.username is None:
        return url
    host = parts.hostname or ""
    if port:
        host += f":{port}"
    user = f"{parts.username}:<redacted>@" if parts.password is not None else "<redacted>@"
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


def pip_verify(environ: Mapping[str, str]) -> ssl.SSLContext | bool:
    """pip's ``cert`` setting (a CA bundle), if configured."""
    cert = resolve_pip_setting(None, "cert", environ)
    if cert is None:
        return True
    try:
        return ssl.create_default_context(cafile=cert.value)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"CA bundle {cert.value} (from {cert.source}) unusable: {exc}") from exc
