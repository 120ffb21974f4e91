"""Read a Python source's use of onnxruntime / the QNN EP into events (ast,
never executed). Statements are followed in order within each scope, so a
dict built, updated and then passed is seen with its updates; names are
looked up in the function, then the module."""

from __future__ import annotations

import ast
from typing import Any

from .callsite import CallSite, call_arg, key_locs, kwarg, loc_of, not_c_order, provider_name
from .events import (
    AttrSet,
    CallSeen,
    Compile,
    ConfigEntry,
    EpNameFilter,
    Event,
    Loc,
    ProviderOptions,
    ProvidersByName,
    Registration,
)
from .prefilter import interesting_lines, line_starts, names_a_call, normalized
from .values import (
    PARTIAL,
    UNKNOWN,
    Ref,
    Scope,
    call_name,
    dotted,
    known_entries,
    known_str,
    merge_into,
)

QNN_NAMES = frozenset({"QNNExecutionProvider", "QNN", "qnn"})
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
_EP_ADDERS = frozenset(
    {
        "add_provider_for_devices",
        "append_execution_provider",
        "append_execution_provider_v2",
        "add_provider",
        "set_provider_selection_policy_delegate",
    }
)


_MADE = {"SessionOptions": "session", "RunOptions": "run", "io_binding": "iobinding"}


class Reader:
    def __init__(self, tree: ast.Module, text: str | None = None, counts: list[int] | None = None) -> None:
        self.text = normalized(text) if text is not None else None
        # interesting[i]: how many of the first i lines hold an _INTERESTING word
        if counts is None and self.text is not None:
            counts = interesting_lines(self.text)
        self.interesting = counts if self.text is not None else None
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
        read = _STATEMENTS.get(type(node))
        if read is not None:
            read(self, node, scope)
            return
        for child in ast.iter_child_nodes(node):  # any other statement: its expressions
            if isinstance(child, ast.expr):
                self.expressions(child, scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        if self._inert(node):
            return
        inner = Scope(self.module)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.expressions(default, scope)
        self.functions_open.append(node.name)
        try:
            self.body(node.body, inner)
        finally:
            self.functions_open.pop()

    def _class(self, node: ast.ClassDef, scope: Scope) -> None:
        if not self._inert(node):
            self.body(node.body, Scope(self.module))

    def _assign(self, node: ast.Assign, scope: Scope) -> None:
        value = self.expressions(node.value, scope)
        for target in node.targets:
            self.bind(target, node.value, value, scope)

    def _annotated(self, node: ast.AnnAssign, scope: Scope) -> None:
        if node.value is None:  # a bare annotation: its expressions, like any statement
            self.expressions(node.target, scope)
            self.expressions(node.annotation, scope)
            return
        value = self.expressions(node.value, scope)
        self.bind(node.target, node.value, value, scope)

    def _augmented(self, node: ast.AugAssign, scope: Scope) -> None:
        self.expressions(node.value, scope)
        if isinstance(node.target, ast.Name):
            scope.names[node.target.id] = UNKNOWN

    def _branch(self, node: ast.If | ast.While, scope: Scope) -> None:
        self.expressions(node.test, scope)
        self.body(node.body, scope)
        self.body(node.orelse, scope)

    def _loop(self, node: ast.For | ast.AsyncFor, scope: Scope) -> None:
        if self._unrolled(node, scope):
            return
        self.expressions(node.iter, scope)
        if isinstance(node.target, ast.Name):
            scope.names[node.target.id] = UNKNOWN
        self.body(node.body, scope)
        self.body(node.orelse, scope)

    def _with(self, node: ast.With | ast.AsyncWith, scope: Scope) -> None:
        for item in node.items:
            value = self.expressions(item.context_expr, scope)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, item.context_expr, value, scope)
        self.body(node.body, scope)

    def _try(self, node: Any, scope: Scope) -> None:  # ast.Try, or ast.TryStar (3.11)
        self.body(node.body, scope)
        for handler in node.handlers:
            self.body(handler.body, scope)
        self.body(node.orelse, scope)
        self.body(node.finalbody, scope)

    def _match(self, node: ast.Match, scope: Scope) -> None:
        self.expressions(node.subject, scope)
        for case in node.cases:
            self.body(case.body, scope)

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
        reachable = self.reachable()
        if not reachable:
            return True
        if self._line_starts is None:
            self._line_starts = line_starts(text)
        starts = self._line_starts
        segment = text[starts[first] : starts[last] if last < len(starts) else len(text)]
        return not any(name in segment for name in reachable)

    def reachable(self) -> list[str]:
        """Module-level names bound to a dict or a tracked object (what a
        function could change or act on through a name it does not bind)."""
        return [name for name, value in self.module.names.items() if isinstance(value, (dict, Ref))]

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
        if not isinstance(table, dict) or PARTIAL in table or len(table) > 64:
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
            if not_c_order(source):
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
                event = AttrSet(owner.kind, target.attr, value, loc_of(target), id(owner))
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
                self.events.append(EpNameFilter(str(value), loc_of(side)))

    def call(self, node: ast.Call, scope: Scope) -> Any:
        """Read one call the rules follow (the _CALLS table); return what it
        makes (a Ref for a tracked object), UNKNOWN otherwise."""
        name = call_name(node)
        read = _CALLS.get(name)
        if read is None:
            return UNKNOWN
        return read(self, node, scope, CallSite(name, self._receiver(node, scope), loc_of(node)))

    def _receiver(self, node: ast.Call, scope: Scope) -> Any:
        """What a method is called on (a Ref when tracked; chained calls too)."""
        if not isinstance(node.func, ast.Attribute):
            return UNKNOWN
        value = node.func.value
        if isinstance(value, ast.Call):
            return self._made.get(id(value), UNKNOWN)
        return scope.evaluate(value)

    def _constructor(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        return Ref(_MADE[site.name], node)

    def _config_entry(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        if len(node.args) < 2:
            return UNKNOWN
        key = scope.evaluate(node.args[0])
        if known_str(key):
            value = scope.evaluate(node.args[1])
            if isinstance(site.receiver, Ref):
                site.receiver.state.setdefault("entries", {})[key] = value
            kind = "session" if site.name == "add_session_config_entry" else "run"
            self.events.append(ConfigEntry(kind, str(key), value, site.loc, site.owner))
        return UNKNOWN

    def _ep_adder(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        name = site.name
        if isinstance(site.receiver, Ref):
            site.receiver.state["has_ep"] = True
        options_node: ast.expr | None = None
        if name == "add_provider_for_devices":
            options_node = call_arg(node, 1, "provider_options")
        elif name == "append_execution_provider_v2":
            options_node = call_arg(node, 2, "ep_options")
        elif name == "add_provider" and len(node.args) >= 2:
            provider = scope.evaluate(node.args[0])
            if known_str(provider) and provider in QNN_NAMES:
                options_node = node.args[1]
        self._options(options_node, scope, name)
        if name == "add_provider_for_devices":
            self.events.append(CallSeen(name, site.loc, (), {}, site.owner))
        return UNKNOWN

    def _selection_policy(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        if isinstance(site.receiver, Ref):
            site.receiver.state["has_ep"] = True
        self.events.append(CallSeen(site.name, site.loc, (), {}, site.owner))
        return UNKNOWN

    def _registration(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        library_node = call_arg(node, 1, "path")
        library = scope.evaluate(library_node)
        if not known_str(library) and library_node is not None:
            library = ast.unparse(library_node)  # the expression's text stands for it
        self.events.append(Registration(scope.evaluate(call_arg(node, 0, "registration_name")), library, site.loc))
        return UNKNOWN

    def _inference_session(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        so = scope.evaluate(call_arg(node, 1, "sess_options"))
        providers = scope.evaluate(kwarg(node, "providers") or (node.args[2] if len(node.args) >= 3 else None))
        qnn = isinstance(providers, (list, tuple)) and any(provider_name(p) == "QNNExecutionProvider" for p in providers)
        model = scope.evaluate(call_arg(node, 0, "path_or_bytes"))
        owner = id(so) if isinstance(so, Ref) else 0
        self.events.append(CallSeen(site.name, site.loc, (model,), {}, owner, {"qnn": qnn}))
        self._providers(kwarg(node, "providers"), kwarg(node, "provider_options"), scope, site.loc, "providers=")
        if len(node.args) >= 3:
            self._providers(node.args[2], call_arg(node, 3, "provider_options"), scope, site.loc, "providers=")
        return Ref("inference", node)

    def _set_providers(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        self._providers(call_arg(node, 0, "providers"), call_arg(node, 1, "provider_options"), scope, site.loc, "set_providers")
        return UNKNOWN

    def _genai_provider_option(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        """onnxruntime-genai's ``Config.set_provider_option(provider, key, value)``."""
        if len(node.args) < 3:
            return UNKNOWN
        provider = scope.evaluate(node.args[0])
        key = scope.evaluate(node.args[1])
        if known_str(provider) and str(provider).lower() in ("qnn", "qnnexecutionprovider") and known_str(key):
            value = scope.evaluate(node.args[2])
            key_loc = {str(key): loc_of(node.args[1])}
            self.events.append(ProviderOptions({str(key): value}, site.loc, "set_provider_option", key_loc))
        return UNKNOWN

    def _model_compiler(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        so_node = call_arg(node, 0, "sess_options")
        so = scope.evaluate(so_node)
        compiler = Ref("compiler", node)
        has_ep = bool(so.state.get("has_ep")) if isinstance(so, Ref) and so.kind == "session" else None
        if isinstance(so_node, ast.Call) and call_name(so_node) == "SessionOptions":
            has_ep = False
        compiler.state.update(
            has_ep=has_ep,
            entries=tuple(so.state.get("entries", {})) if isinstance(so, Ref) else (),
            model=scope.evaluate(call_arg(node, 1, "input_model_path_or_bytes")),
            embed=scope.evaluate(kwarg(node, "embed_compiled_data_into_model")),
            flags=scope.evaluate(kwarg(node, "flags")),
        )
        self.events.append(self._compile(compiler, "ModelCompiler", site.loc, UNKNOWN))
        return compiler

    def _compile_call(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        compiler = site.receiver
        if isinstance(compiler, Ref) and compiler.kind == "compiler":
            output = scope.evaluate(call_arg(node, 0, "output_model_path")) if site.name == "compile_to_file" else UNKNOWN
            self.events.append(self._compile(compiler, site.name, site.loc, output))
        return UNKNOWN

    def _thread(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        target = kwarg(node, "target")
        if isinstance(target, ast.Name):
            self.thread_targets.add(target.id)
        return UNKNOWN

    def _executor_task(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        """``pool.submit(f, ...)`` / ``pool.map(f, ...)``: f runs in a thread pool."""
        if isinstance(node.func, ast.Attribute) and node.args and isinstance(node.args[0], ast.Name):
            self.thread_targets.add(node.args[0].id)
        return UNKNOWN

    def _bind(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        """An IOBinding bind: a module-level binding bound inside a function
        (shared if that function runs in threads); bind_input/bind_output are
        also seen calls (QND047)."""
        func = node.func
        if (
            isinstance(site.receiver, Ref)
            and site.receiver.kind == "iobinding"
            and self.functions_open
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id not in scope.names  # not the function's own binding
            and self.module.names.get(func.value.id) is site.receiver
        ):
            self.shared_binds.append((self.functions_open[-1], site.loc))
        if site.name in ("bind_input", "bind_output"):
            return self._seen(node, scope, site)
        return UNKNOWN

    def _seen(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        """A call a rule judges from its arguments (CallSeen)."""
        name = site.name
        if name == "run" and site.receiver is UNKNOWN and not isinstance(node.func, ast.Attribute):
            return UNKNOWN  # a bare run(...): not a session's
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
        self.events.append(CallSeen(name, site.loc, args, kwargs, site.owner, extra))
        return UNKNOWN

    def _update(self, node: ast.Call, scope: Scope, site: CallSite) -> Any:
        """``d.update(other, k=v)`` on a dict the reader holds."""
        if not (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)):
            return UNKNOWN
        target = scope.lookup(node.func.value.id)
        if isinstance(target, dict):
            if node.args:
                merge_into(target, scope.evaluate(node.args[0]))
            for keyword in node.keywords:
                if keyword.arg:
                    target[keyword.arg] = scope.evaluate(keyword.value)
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

    def _options(self, node: ast.expr | None, scope: Scope, via: str) -> None:
        if node is None:
            return
        value = scope.evaluate(node)
        if isinstance(value, dict):
            self._emit_dict(value, loc_of(node), via, node)

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
            if provider_name(entry) != "QNNExecutionProvider":
                continue
            self.events.append(ProvidersByName(loc_of(providers_node), via))
            item_node: ast.expr | None = None
            if isinstance(entry, tuple) and len(entry) >= 2:
                if isinstance(providers_node, (ast.List, ast.Tuple)) and isinstance(providers_node.elts[index], ast.Tuple):
                    item_node = providers_node.elts[index].elts[1]  # type: ignore[attr-defined]
                    self._options(item_node, scope, via)
                elif isinstance(entry[1], dict):
                    self._emit_dict(entry[1], loc, via)
            elif isinstance(options, (list, tuple)) and index < len(options):
                if isinstance(options_node, (ast.List, ast.Tuple)) and index < len(options_node.elts):
                    self._options(options_node.elts[index], scope, via)
                elif isinstance(options[index], dict):
                    self._emit_dict(options[index], loc, via)

    def _emit_dict(self, value: dict[Any, Any], loc: Loc, via: str, literal: ast.expr | None = None) -> None:
        """A resolved provider-options dict as an event (key locations from its literal)."""
        source = literal if isinstance(literal, ast.Dict) else self._dict_nodes.get(id(value))
        self.events.append(ProviderOptions(known_entries(value), loc, via, key_locs(source), partial=PARTIAL in value))


_STATEMENTS: dict[type[ast.AST], Any] = {
    ast.FunctionDef: Reader._function,
    ast.AsyncFunctionDef: Reader._function,
    ast.ClassDef: Reader._class,
    ast.Assign: Reader._assign,
    ast.AnnAssign: Reader._annotated,
    ast.AugAssign: Reader._augmented,
    ast.If: Reader._branch,
    ast.While: Reader._branch,
    ast.For: Reader._loop,
    ast.AsyncFor: Reader._loop,
    ast.With: Reader._with,
    ast.AsyncWith: Reader._with,
    ast.Try: Reader._try,
    ast.Match: Reader._match,
}
if hasattr(ast, "TryStar"):  # Python 3.11+: try/except*
    _STATEMENTS[ast.TryStar] = Reader._try

_CALLS: dict[str, Any] = {
    **dict.fromkeys(_MADE, Reader._constructor),
    **dict.fromkeys(("add_session_config_entry", "add_run_config_entry"), Reader._config_entry),
    **dict.fromkeys(_EP_ADDERS, Reader._ep_adder),
    "set_provider_selection_policy": Reader._selection_policy,
    "register_execution_provider_library": Reader._registration,
    "InferenceSession": Reader._inference_session,
    "set_providers": Reader._set_providers,
    "set_provider_option": Reader._genai_provider_option,
    "ModelCompiler": Reader._model_compiler,
    **dict.fromkeys(("compile_to_file", "compile_to_bytes", "compile_to_stream"), Reader._compile_call),
    "Thread": Reader._thread,
    **dict.fromkeys(("submit", "map"), Reader._executor_task),
    **dict.fromkeys(
        ("bind_input", "bind_output", "bind_cpu_input", "bind_ortvalue_input", "bind_ortvalue_output"), Reader._bind
    ),
    **dict.fromkeys(_SEEN_CALLS - {"set_provider_selection_policy", "bind_input", "bind_output"}, Reader._seen),
    "update": Reader._update,
}


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
    return finish(reader)


def finish(reader: Reader) -> list[Event]:
    """The reader's events once every statement is read (with the shared
    IOBindings of functions that run in threads)."""
    reported: set[str] = set()
    for function, loc in reader.shared_binds:
        if function in reader.thread_targets and function not in reported:
            reported.add(function)
            reader.events.append(CallSeen("shared_iobinding", loc, (function,), {}))
    return reader.events
