"""``genai_config.json`` (onnxruntime-genai): the QNN provider options and
the session options of each model section, as events with their lines."""

from __future__ import annotations

import json
import re
from typing import Any

from .events import ConfigEntry, Event, Loc, ProviderOptions

_GENAI_QNN = ("qnn", "qnnexecutionprovider")


class ConfigError(ValueError):
    pass


def _line_of(text: str, key: str, start: int = 0) -> tuple[Loc, int]:
    match = re.compile(r'"' + re.escape(key) + r'"\s*:').search(text, start)
    if not match:
        return Loc(1, 1), start
    line = text.count("\n", 0, match.start()) + 1
    col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
    return Loc(line, col), match.end()


def _session_sections(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "session_options" and isinstance(value, dict):
                found.append(value)
            else:
                found.extend(_session_sections(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_session_sections(item))
    return found


def read_genai(text: str) -> list[Event]:
    try:
        data = json.loads(text)
        sections = _session_sections(data)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise ConfigError("nested too deeply to read") from exc
    events: list[Event] = []
    for section in sections:
        for entry in section.get("provider_options") or []:
            if not isinstance(entry, dict):
                continue
            for provider, options in entry.items():
                if provider.lower() not in _GENAI_QNN or not isinstance(options, dict):
                    continue
                loc, after = _line_of(text, provider)
                key_locs: dict[str, Loc] = {}
                for key in options:
                    key_locs[key], _ = _line_of(text, key, after)
                events.append(ProviderOptions(dict(options), loc, "genai_config provider_options", key_locs))
        for key, value in (section.get("config_entries") or {}).items() if isinstance(section.get("config_entries"), dict) else ():
            loc, _ = _line_of(text, key)
            events.append(ConfigEntry("session", key, value, loc, 0))
        for key, value in section.items():
            if isinstance(key, str) and "." in key and isinstance(value, (str, int)):
                loc, _ = _line_of(text, key)
                events.append(ConfigEntry("session", key, value, loc, 0))
    return events
