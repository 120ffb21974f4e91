"""Read a Python source's use of onnxruntime / the QNN EP into events (ast,
never executed). Statements are followed in order within each scope, so a
dict built, updated and then passed is seen with its updates; names are
looked up in the function, then the module."""

from __future__ import annotations

import ast
import re
from itertools import accumulate
from typing import Any

from .events import (
    AttrSet,
    CallSeen,
    Compile,
    ConfigEntry,
    EpNameFilter,
    Event,
    FileFacts,
    Loc,
    ProviderOptions,
    ProvidersByName,
    Registration,
)
from .values import UNKNOWN, Ref, Scope, call_name, dotted, known_str

QNN_NAMES = frozenset({"QNNExecutionProvider", "QNN", "qnn"})
# The reader acts on calls whose name holds one of these words (each rule
# starts from one of them) and on ``.ep_name`` comparisons: a file that calls
# none of them yields no event a rule reads. Plain substrings first (``in``
# is far faster than a regex alternation), then whether one is called.
_ACTING = (
    "SessionOptions", "RunOptions", "_config_entry", "add_provider", "append_execution_provider",
    "set_provider", "InferenceSession", "ModelCompiler", "compile_to_", "get_qnn_qdq_config",
    "quantize_static", "quantize_dynamic", "get_profiling_start_time_ns", "end_profiling",
    "register_execution_provider_library", "bind_input", "bind_output", "run_async", "io_binding",
)
# the rest of the name, then spaces, line breaks or comments, then "("
_CALLED = {word: re.compile(re.escape(word) + r"\w*(?:[\s\\]|#[^\n]*)*\(") for word in _ACTING}
_EP_NAME = re.compile(r"\.[\s\\]*ep_name")
# Words of onnxruntime code: in a file that calls none of the above, only a
# ``run(...)`` call can still give an event (QND045), so such a file is read
# when it holds one of these (or an _ACTING word) and the word ``run``.
_HINTS = re.compile(r"providers\s*=|provider_options|profiling")
_RUN_WORD = re.compile(r"\brun\b")


def _called(text: str, word: str) -> bool:
    pattern = _CALLED[word]
    at = text.find(word)
    while at >= 0:
        if pattern.match(text, at):
            return True
        at = text.find(word, at + 1)
    return False


def names_a_call(text: str) -> bool:
    """Whether ``text`` can hold a call or attribute a rule reads (a file
    for which this is False gives no events, so it need not be parsed)."""
    named = [word for word in _ACTING if word in text]
    if any(_called(text, word) for word in named):
        return True
    if "ep_name" in text and _EP_NAME.search(text):
        return True
    if not named and "provider" not in text and "profiling" not in text:
        return False
    return _RUN_WORD.search(text) is not None and (bool(named) or _HINTS.search(text) is not None)


_SEEN_CALLS = frozenset(
    {
        "get_qnn_qdq_config",
        "quantize_static",
        "quantize_dynamic",
        "quantize",
        "get_profiling_start_time_ns",
        "end_profiling",
        "run",
        "run_async",
        "set_provider_selection_policy",
        "bind_input",
        "bind_output",
    }
)
NOT_C_ORDER = "<array not in C order>"
# A statement whose text has none of these holds no call or comparison a
# rule reads: its calls are not visited (its value is still evaluated).
_INTERESTING = (
    "SessionOptions", "RunOptions", "_config_entry", "provider", "InferenceSession", "ModelCompiler",
    "compile_to_", "quantiz", "qnn", "profiling", "bind_", "ep_name", "io_binding", "Thread", "submit", "map(",
)
# ... nor these calls (found from their words "run" and ".update").
_INTERESTING_CALLS = (("run", re.compile(r"\brun(?:_async)?\s*\(")), (".update", re.compile(r"\.update\s*\(")))
_EP_ADDERS = frozenset(
    {
        "add_provider_for_devices",
        "append_execution_provider",
        "append_execution_provider_v2",
        "add_provider",
        "set_provider_selection_policy_delegate",
    }
)


def _loc(node: ast.AST) -> Loc:
    return Loc(getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)


def _kw(node: ast.Call, name: str) -> ast.expr | None:
    for keyword in node.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _arg(node: ast.Call, index: int, name: str) -> ast.expr | None:
    if len(node.args) > index and not isinstance(node.args[index], ast.Starred):
        return node.args[index]
    return _kw(node, name)


def _provider_name(entry: Any) -> str | None:
    if known_str(entry):
        return str(entry)
    if isinstance(entry, tuple) and entry and known_str(entry[0]):
        return str(entry[0])
    return None


def _key_locs(node: ast.expr | None) -> dict[str, Loc]:
    if isinstance(node, ast.Dict):
        return {k.value: _loc(k) for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return {}


class Reader:
    def __init__(self, tree: ast.Module, text: str | None = None) -> None:
        self.text = _normalized(text) if text is not None else None
        # interesting[i]: how many of the first i lines hold an _INTERESTING word
        self.interesting = _interesting_lines(self.text) if self.text is not None else None
        self._line_starts: list[int] | None = None
        self.events: list[Event] = []
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {
            n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.module = Scope()
        self._dict_nodes: dict[int, ast.expr] = {}  # id(dict value) -> the literal it came from
        self._made: dict[int, Ref] = {}  # id(call node) -> what it made (chained calls)
        self.functions_open: list[str] = []  # the function being read (innermost last)
        self.thread_targets: set[str] = set()  # functions given to Thread(target=) / submit / map
        self.shared_binds: list[tuple[str, Loc]] = []  # a module-level IOBinding bound in a function

    # -- scopes and statements ------------------------------------------------
    def body(self, statements: list[ast.stmt], scope: Scope) -> None:
        for statement in statements:
            self.statement(statement, scope)

    def statement(self, node: ast.stmt, scope: Scope) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and self._inert(node):
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = Scope(self.module)
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                self.expressions(default, scope)
            self.functions_open.append(node.name)
            try:
                self.body(node.body, inner)
            finally:
                self.functions_open.pop()
            return
        if isinstance(node, ast.ClassDef):
            self.body(node.body, Scope(self.module))
            return
        if isinstance(node, ast.Assign):
            value = self.expressions(node.value, scope)
            for target in node.targets:
                self.bind(target, node.value, value, scope)
            return
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            value = self.expressions(node.value, scope)
            self.bind(node.target, node.value, value, scope)
            return
        if isinstance(node, ast.AugAssign):
            self.expressions(node.value, scope)
            if isinstance(node.target, ast.Name):
                scope.names[node.target.id] = UNKNOWN
            return
        if isinstance(node, (ast.If, ast.While)):
            self.expressions(node.test, scope)
            self.body(node.body, scope)
            self.body(node.orelse, scope)
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            if self._unrolled(node, scope):
                return
            self.expressions(node.iter, scope)
            if isinstance(node.target, ast.Name):
                scope.names[node.target.id] = UNKNOWN
            self.body(node.body, scope)
            self.body(node.orelse, scope)
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                value = self.expressions(item.context_expr, scope)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, item.context_expr, value, scope)
            self.body(node.body, scope)
            return
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.body(node.body, scope)  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                self.body(handler.body, scope)
            self.body(node.orelse, scope)  # type: ignore[attr-defined]
            self.body(node.finalbody, scope)  # type: ignore[attr-defined]
            return
        if isinstance(node, ast.Match):
            self.expressions(node.subject, scope)
            for case in node.cases:
                self.body(case.body, scope)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expressions(child, scope)

    def _inert(self, node: ast.stmt) -> bool:
        """A definition whose lines hold no _INTERESTING word and name no
        module-level dict or tracked object: reading its body would visit no
        call and could change nothing outside its own scope, so it is skipped."""
        counts, text = self.interesting, self.text
        if counts is None or text is None:
            return False
        last = min(node.end_lineno or node.lineno, len(counts) - 1)
        first = min(node.lineno - 1, last)
        if counts[last] != counts[first]:
            return False
        reachable = [name for name, value in self.module.names.items() if isinstance(value, (dict, Ref))]
        if not reachable:
            return True
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        starts = self._line_starts
        segment = text[starts[first] : starts[last] if last < len(starts) else len(text)]
        return not any(name in segment for name in reachable)

    def _unrolled(self, node: ast.For | ast.AsyncFor, scope: Scope) -> bool:
        """``for k, v in CONFIG.items(): so.add_session_config_entry(k, v)``
        over a known dict (up to 64 entries): the body once per entry."""
        it = node.iter
        if not (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == "items"
            and not it.args
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == 2
            and all(isinstance(e, ast.Name) for e in node.target.elts)
        ):
            return False
        table = scope.evaluate(it.func.value)
        if not isinstance(table, dict) or "\0partial" in table or len(table) > 64:
            return False
        key_name, value_name = (e.id for e in node.target.elts)  # type: ignore[attr-defined]
        for key, value in list(table.items()):
            scope.names[key_name] = key
            scope.names[value_name] = value
            self.body(node.body, scope)
        scope.names[key_name] = scope.names[value_name] = UNKNOWN
        self.body(node.orelse, scope)
        return True

    def bind(self, target: ast.expr, source: ast.expr, value: Any, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            if _not_c_order(source):
                value = NOT_C_ORDER
            scope.names[target.id] = value
            if isinstance(value, dict):
                self._dict_nodes[id(value)] = source
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            container = scope.lookup(target.value.id)
            key = scope.evaluate(target.slice)
            if isinstance(container, dict) and isinstance(key, (str, int)):
                container[key] = value
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = scope.lookup(target.value.id)
            if isinstance(owner, Ref) and owner.kind in ("session", "run"):
                event = AttrSet(owner.kind, target.attr, value, _loc(target), id(owner))
                owner.state.setdefault("attrs", {})[target.attr] = value
                self.events.append(event)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                if isinstance(element, ast.Name):
                    scope.names[element.id] = UNKNOWN

    # -- expressions ----------------------------------------------------------
    def expressions(self, node: ast.expr, scope: Scope) -> Any:
        """Visit the calls and comparisons inside ``node`` (inner first) and
        return ``node``'s value (a Ref for a tracked constructor)."""
        result: Any = UNKNOWN
        counts = self.interesting
        if counts is not None:
            end = min(getattr(node, "end_lineno", None) or node.lineno, len(counts) - 1)
            if counts[end] == counts[min(node.lineno - 1, end)]:
                return scope.evaluate(node)
        calls: list[ast.Call] = []
        for child in ast.walk(node):
            if isinstance(child, ast.Call):
                calls.append(child)
            elif isinstance(child, ast.Compare):
                self.compare(child, scope)
        for call in reversed(calls):  # innermost first
            made = self.call(call, scope)
            if isinstance(made, Ref):
                self._made[id(call)] = made
            if call is node:
                result = made
        if result is UNKNOWN:
            result = scope.evaluate(node)
        return result

    def compare(self, node: ast.Compare, scope: Scope) -> None:
        sides = [node.left, *node.comparators]
        if not any(isinstance(s, ast.Attribute) and s.attr == "ep_name" for s in sides):
            return
        for side in sides:
            value = scope.evaluate(side)
            if known_str(value):
                self.events.append(EpNameFilter(str(value), _loc(side)))

    def call(self, node: ast.Call, scope: Scope) -> Any:
        name = call_name(node)
        receiver: Any = UNKNOWN
        if isinstance(node.func, ast.Attribute):
            receiver = scope.evaluate(node.func.value)
            if isinstance(node.func.value, ast.Call):
                receiver = self._made.get(id(node.func.value), UNKNOWN)
            elif not isinstance(receiver, Ref) and isinstance(node.func.value, ast.Name):
                receiver = scope.lookup(node.func.value.id)
        owner = id(receiver) if isinstance(receiver, Ref) else 0
        loc = _loc(node)
        if name == "SessionOptions":
            return Ref("session", node)
        if name == "RunOptions":
            return Ref("run", node)
        if name in ("add_session_config_entry", "add_run_config_entry") and len(node.args) >= 2:
            kind = "session" if name == "add_session_config_entry" else "run"
            key = scope.evaluate(node.args[0])
            if known_str(key):
                value = scope.evaluate(node.args[1])
                if isinstance(receiver, Ref):
                    receiver.state.setdefault("entries", {})[key] = value
                self.events.append(ConfigEntry(kind, str(key), value, loc, owner))
            return UNKNOWN
        if name in _EP_ADDERS:
            if isinstance(receiver, Ref):
                receiver.state["has_ep"] = True
            options_node = _arg(node, 1, "provider_options") if name == "add_provider_for_devices" else None
            if name in ("append_execution_provider_v2",):
                options_node = _arg(node, 2, "ep_options")
            if name == "add_provider" and len(node.args) >= 2:
                provider = scope.evaluate(node.args[0])
                if known_str(provider) and provider in QNN_NAMES:
                    options_node = node.args[1]
            self._options(options_node, scope, loc, name)
            if name == "add_provider_for_devices":
                self.events.append(CallSeen(name, loc, (), {}, owner))
            return UNKNOWN
        if name == "set_provider_selection_policy":
            if isinstance(receiver, Ref):
                receiver.state["has_ep"] = True
            self.events.append(CallSeen(name, loc, (), {}, owner))
            return UNKNOWN
        if name == "register_execution_provider_library":
            library_node = _arg(node, 1, "path")
            library = scope.evaluate(library_node)
            if not known_str(library) and library_node is not None:
                library = ast.unparse(library_node)  # the expression's text stands for it
            self.events.append(Registration(scope.evaluate(_arg(node, 0, "registration_name")), library, loc))
            return UNKNOWN
        if name == "InferenceSession":
            so = scope.evaluate(_arg(node, 1, "sess_options"))
            providers = scope.evaluate(_kw(node, "providers") or (node.args[2] if len(node.args) >= 3 else None))
            qnn = isinstance(providers, (list, tuple)) and any(
                _provider_name(p) == "QNNExecutionProvider" for p in providers
            )
            model = scope.evaluate(_arg(node, 0, "path_or_bytes"))
            self.events.append(CallSeen(name, loc, (model,), {}, id(so) if isinstance(so, Ref) else 0, {"qnn": qnn}))
            self._providers(_kw(node, "providers"), _kw(node, "provider_options"), scope, loc, "providers=")
            if len(node.args) >= 3:
                self._providers(node.args[2], _arg(node, 3, "provider_options"), scope, loc, "providers=")
            session = Ref("inference", node)
            return session
        if name == "set_providers":
            self._providers(_arg(node, 0, "providers"), _arg(node, 1, "provider_options"), scope, loc, "set_providers")
            return UNKNOWN
        if name == "set_provider_option" and len(node.args) >= 3:  # onnxruntime-genai Config
            provider = scope.evaluate(node.args[0])
            key = scope.evaluate(node.args[1])
            if known_str(provider) and str(provider).lower() in ("qnn", "qnnexecutionprovider") and known_str(key):
                value = scope.evaluate(node.args[2])
                self.events.append(ProviderOptions({str(key): value}, loc, "set_provider_option", {str(key): _loc(node.args[1])}))
            return UNKNOWN
        if name == "ModelCompiler":
            so_node = _arg(node, 0, "sess_options")
            so = scope.evaluate(so_node)
            compiler = Ref("compiler", node)
            has_ep = bool(so.state.get("has_ep")) if isinstance(so, Ref) and so.kind == "session" else None
            if isinstance(so_node, ast.Call) and call_name(so_node) == "SessionOptions":
                has_ep = False
            entries = tuple(so.state.get("entries", {})) if isinstance(so, Ref) else ()
            compiler.state.update(
                has_ep=has_ep,
                entries=entries,
                model=scope.evaluate(_arg(node, 1, "input_model_path_or_bytes")),
                embed=scope.evaluate(_kw(node, "embed_compiled_data_into_model")),
                flags=scope.evaluate(_kw(node, "flags")),
            )
            self.events.append(self._compile(compiler, "ModelCompiler", loc, UNKNOWN))
            return compiler
        if name == "io_binding":
            return Ref("iobinding", node)
        if name == "Thread":
            target = _kw(node, "target")
            if isinstance(target, ast.Name):
                self.thread_targets.add(target.id)
            return UNKNOWN
        if name in ("submit", "map") and isinstance(node.func, ast.Attribute) and node.args and isinstance(node.args[0], ast.Name):
            self.thread_targets.add(node.args[0].id)  # an executor's task (for a thread pool)
        if (
            name in ("bind_input", "bind_output", "bind_cpu_input", "bind_ortvalue_input", "bind_ortvalue_output")
            and isinstance(receiver, Ref)
            and receiver.kind == "iobinding"
            and self.functions_open
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id not in scope.names  # not the function's own binding
            and self.module.names.get(node.func.value.id) is receiver
        ):
            self.shared_binds.append((self.functions_open[-1], loc))
        if name in ("compile_to_file", "compile_to_bytes", "compile_to_stream") and isinstance(receiver, Ref):
            if receiver.kind == "compiler":
                output = scope.evaluate(_arg(node, 0, "output_model_path")) if name == "compile_to_file" else UNKNOWN
                self.events.append(self._compile(receiver, name, loc, output))
            return UNKNOWN
        if name in _SEEN_CALLS:
            args = tuple(scope.evaluate(a) for a in node.args)
            kwargs = {k.arg: scope.evaluate(k.value) for k in node.keywords if k.arg}
            extra: dict[str, Any] = {}
            if name == "run_async" and len(node.args) >= 3 and isinstance(node.args[2], ast.Name):
                extra["callback"] = self.functions.get(node.args[2].id)
            if name in ("bind_input", "bind_output"):
                for arg in node.args:
                    text = dotted(arg) or ""
                    if text.endswith(".ctypes.data") and scope.lookup(text.split(".")[0]) == NOT_C_ORDER:
                        extra["pointer"] = text
            if name == "run" and receiver is UNKNOWN and not isinstance(node.func, ast.Attribute):
                return UNKNOWN
            self.events.append(CallSeen(name, loc, args, kwargs, owner, extra))
            return UNKNOWN
        if name == "update" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            target = scope.lookup(node.func.value.id)
            if isinstance(target, dict):
                if node.args:
                    more = scope.evaluate(node.args[0])
                    if isinstance(more, dict):
                        target.update(more)
                    else:
                        target["\0partial"] = True
                for keyword in node.keywords:
                    if keyword.arg:
                        target[keyword.arg] = scope.evaluate(keyword.value)
            return UNKNOWN
        return UNKNOWN

    # -- helpers ----------------------------------------------------------------
    def _compile(self, compiler: Ref, method: str, loc: Loc, output: Any) -> Compile:
        state = compiler.state
        return Compile(
            loc=loc,
            method=method,
            has_ep=state["has_ep"],
            session_entries=state["entries"],
            input_model=state["model"],
            output=output,
            embed=state["embed"],
            flags=state["flags"],
        )

    def _options(self, node: ast.expr | None, scope: Scope, loc: Loc, via: str) -> None:
        if node is None:
            return
        value = scope.evaluate(node)
        if not isinstance(value, dict):
            return
        source = node if isinstance(node, ast.Dict) else self._dict_nodes.get(id(value))
        clean = {k: v for k, v in value.items() if isinstance(k, str) and not k.startswith("\0")}
        self.events.append(
            ProviderOptions(clean, _loc(node) if node else loc, via, _key_locs(source), partial="\0partial" in value)
        )

    def _providers(
        self, providers_node: ast.expr | None, options_node: ast.expr | None, scope: Scope, loc: Loc, via: str
    ) -> None:
        if providers_node is None:
            return
        providers = scope.evaluate(providers_node)
        if not isinstance(providers, (list, tuple)):
            return
        options = scope.evaluate(options_node) if options_node is not None else UNKNOWN
        for index, entry in enumerate(providers):
            if _provider_name(entry) != "QNNExecutionProvider":
                continue
            self.events.append(ProvidersByName(_loc(providers_node), via))
            item_node: ast.expr | None = None
            if isinstance(entry, tuple) and len(entry) >= 2:
                if isinstance(providers_node, (ast.List, ast.Tuple)) and isinstance(providers_node.elts[index], ast.Tuple):
                    item_node = providers_node.elts[index].elts[1]  # type: ignore[attr-defined]
                    self._options(item_node, scope, loc, via)
                elif isinstance(entry[1], dict):
                    self._emit_dict(entry[1], loc, via)
            elif isinstance(options, (list, tuple)) and index < len(options):
                if isinstance(options_node, (ast.List, ast.Tuple)) and index < len(options_node.elts):
                    self._options(options_node.elts[index], scope, loc, via)
                elif isinstance(options[index], dict):
                    self._emit_dict(options[index], loc, via)

    def _emit_dict(self, value: dict[Any, Any], loc: Loc, via: str) -> None:
        source = self._dict_nodes.get(id(value))
        clean = {k: v for k, v in value.items() if isinstance(k, str) and not k.startswith("\0")}
        self.events.append(ProviderOptions(clean, loc, via, _key_locs(source), partial="\0partial" in value))


def _not_c_order(node: ast.expr) -> bool:
    """``np.asfortranarray(x)``, ``x.T``, ``np.array(x, order='F')``."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return True
    if isinstance(node, ast.Call):
        if call_name(node) == "asfortranarray":
            return True
        order = _kw(node, "order")
        return isinstance(order, ast.Constant) and order.value == "F"
    return False


def _normalized(text: str) -> str:
    """``text`` with the line ends ast counts (\\r\\n, \\r, \\n) as \\n."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _interesting_lines(text: str) -> list[int]:
    """Running counts of the lines of ``text`` (normalized) that hold an
    _INTERESTING word or call (every occurrence; a call written across lines
    marks each of them), so whether a node's lines hold one is two look-ups."""
    spans: list[tuple[int, int]] = []
    for word in _INTERESTING:
        at = text.find(word)
        while at >= 0:
            spans.append((at, at + len(word)))
            at = text.find(word, at + 1)
    for word, pattern in _INTERESTING_CALLS:
        at = text.find(word)
        while at >= 0:
            match = pattern.match(text, at)  # (``\b`` looks at the character before ``at``)
            if match is not None:
                spans.append(match.span())
            at = text.find(word, at + 1)
    spans.sort()
    marked = [0] * (text.count("\n") + 1)
    line = position = 0
    for start, end in spans:
        line += text.count("\n", position, start)
        position = start
        for index in range(line, line + text.count("\n", start, end) + 1):
            marked[index] = 1
    return [0, *accumulate(marked)]


def file_facts(text: str, base_dir: str | None) -> FileFacts:
    return FileFacts(
        mentions_qnn="qnn" in text.lower(),
        uses_plugin="onnxruntime_qnn" in text or "register_execution_provider_library" in text,
        enables_profiling="enable_profiling" in text,
        uses_qnn_config="get_qnn_qdq_config" in text,
        base_dir=base_dir,
    )


def read_python(tree: ast.Module, text: str | None = None) -> list[Event]:
    """The events of a module; ``text`` (its source) lets statements that
    name nothing relevant be skipped quickly."""
    if text is not None and not names_a_call(text):
        return []  # nothing in it names a call a rule reads
    return events_of(tree, text)


def events_of(tree: ast.Module, text: str | None = None) -> list[Event]:
    """``read_python`` for a module already known to name a call a rule reads."""
    reader = Reader(tree, text)
    reader.body(tree.body, reader.module)
    reported: set[str] = set()
    for function, loc in reader.shared_binds:
        if function in reader.thread_targets and function not in reported:
            reported.add(function)
            reader.events.append(CallSeen("shared_iobinding", loc, (function,), {}))
    return reader.events


def dotted_name(node: ast.AST) -> str | None:
    return dotted(node)
