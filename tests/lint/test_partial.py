"""The partial parse (qnndoctor/lint/partial.py) reads exactly what the
whole-file parse reads: the same events on every real case and on cut
points made to mislead it, None (the caller parses the whole file) when
it cannot prove that, and a syntax error anywhere reported as before."""

from __future__ import annotations

import ast
import dataclasses
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from qnndoctor.lint import lint_paths, lint_text
from qnndoctor.lint.checks import Target
from qnndoctor.lint.knowledge import load
from qnndoctor.lint.partial import partial_events
from qnndoctor.lint.prefilter import names_a_call
from qnndoctor.lint.pyreader import events_of

HERE = Path(__file__).resolve().parents[1]
REAL = sorted((HERE / "lint_cases").rglob("*.py")) + sorted((HERE / "lint_correct").rglob("*.py"))

HEAD = "import onnxruntime as ort\nimport os\n\n\n"
SESSION = "sess = ort.InferenceSession('m.onnx', providers=['QNNExecutionProvider'])\n"


def _canonical(events: list[Any]) -> list[str]:
    """Events as text, owners numbered by first use (they are ids)."""
    owners: dict[int, int] = {}
    out = []
    for event in events:
        if getattr(event, "owner", 0):
            event = dataclasses.replace(event, owner=owners.setdefault(event.owner, len(owners) + 1))
        out.append(re.sub(r" at 0x[0-9a-f]+", "", repr(event)))
    return out


def _whole(text: str) -> list[str]:
    return _canonical(events_of(ast.parse(text), text))


# Each is read partially (the boring definitions and imports are blanked)
# and must give what the whole tree gives.
TRICKY = {
    "decorators": HEAD
    + "@pytest.mark.parametrize(\n    'x',\n    [1, 2],\n)\n@other\ndef helper(x):\n    return x * 2\n\n\n"
    + "so = ort.SessionOptions()\nso.add_session_config_entry('session.disable_cpu_ep_fallback', 'true')\n"
    + SESSION,
    "strings at column 0": HEAD
    + 'USAGE = """\ndef not_code():\n    pass\nimport nothing\n@not_a_decorator\n"""\n\n\ndef boring():\n    return 1\n\n\n'
    + "def text():\n    return '''\nclass Nope:\nx = 1\n'''\n\n\n"
    + "opts = {'backend_type': 'htp', 'htp_performance_mode': 'Burst'}\n"
    + "s = ort.InferenceSession('m.onnx', providers=['QNNExecutionProvider'], provider_options=[opts])\n",
    "main block": HEAD
    + "def helper():\n    return 2\n\n\nclass Plain:\n    def method(self):\n        return 3\n\n\n"
    + "if __name__ == '__main__':\n    so = ort.SessionOptions()\n    so.intra_op_num_threads = -1\n"
    + "    sess = ort.InferenceSession('m.onnx', so, providers=['QNNExecutionProvider'])\n",
    "continuation lines": HEAD
    + "X = [\n'a',\n'b',\n]\nY = 1 + \\\n2\n\n\ndef boring(a,\n           b):\n    return a + \\\n        b\n\n\n"
    + "from os.path import (\n    join,\n    exists,\n)\n"
    + "sess = ort.InferenceSession('m.onnx')\nout = sess.run(['y', 'y'], {})\n",
    "class bodies and clauses": HEAD
    + "class Runner:\n    '''Runs.'''\n\n    def __init__(self):\n        self.sess = ort.InferenceSession('m.onnx')\n\n"
    + "    def run_twice(self, feed):\n        return self.sess.run(['y', 'y'], feed)\n\n\n"
    + "try:\n    import numpy\nexcept ImportError:\n    numpy = None\nelse:\n    pass\nfinally:\n    pass\n\n\n"
    + "def boring():\n    pass\n",
    "a string opened in a function closes at column 0": HEAD
    + "def f():\n    return '''\nimport os\n'''\n\n\n" + SESSION,
    "a boring function changes a module-level dict (its region is parsed alone, in place)": HEAD
    + "OPTS = {'backend_type': 'htp'}\n\n\nimport sys\n\n\ndef tweak():\n    OPTS['htp_arch'] = 'v73'\n\n\ntweak()\n"
    + "s = ort.InferenceSession('m.onnx', providers=['QNNExecutionProvider'], provider_options=[OPTS])\n",
    "methods of a class with an interesting one": HEAD
    + "class Model:\n    '''A model.'''\n\n    kind = 'onnx'\n\n    def __init__(self, path):\n        self.path = path\n\n"
    + "    @property\n    def name(self):\n        return '''\n    def not_a_method(self):\n        pass\n'''\n\n"
    + "    @staticmethod\n    def helper(\n        x,\n    ):\n        return x\n\n"
    + "    def session(self):\n        return ort.InferenceSession(self.path, providers=['QNNExecutionProvider'])\n\n"
    + "    class Inner:\n        pass\n\n    def last(self):\n        return 1\n",
    "a method changes a module-level dict (its run is put back in the class)": HEAD
    + "OPTS = {'backend_type': 'htp'}\n\n\nclass Tuner:\n    def boring(self):\n        return 1\n\n"
    + "    def tweak(self):\n        OPTS['htp_arch'] = 'v73'\n\n"
    + "    def make(self):\n        return ort.InferenceSession('m.onnx', providers=['QNNExecutionProvider'], provider_options=[OPTS])\n",
    "a decorated class with a multi-line header": HEAD
    + "@dataclass(\n    frozen=True,\n)\nclass Config(\n    Base,\n):\n    x: int = 1\n\n    def a(self):\n        return 1\n\n"
    + "    def b(self):\n        so = ort.SessionOptions()\n        so.add_session_config_entry('session.disable_cpu_ep_fallback', 'true')\n",
    "async and nested definitions": HEAD
    + "async def fetch():\n    def inner():\n        return 1\n    return inner()\n\n\n"
    + "class Outer:\n    class Inner:\n        pass\n\n\n"
    + "so = ort.SessionOptions()\nso.add_session_config_entry('ep.context_enable', 'true')\n",
}

# Not provable or not skippable: None, so the whole file is parsed.
WHOLE = {
    "run_async callbacks are looked up among all functions": HEAD
    + "def done(result, user_data, err):\n    user_data.set_result(result)\n\n\n" + SESSION
    + "sess.run_async(['y'], {}, done, fut)\n",
    "nothing to skip": SESSION + "so = ort.SessionOptions()\n",
}

# A syntax error in a part the reader does not need: reported all the same.
BROKEN = {
    "in a boring function": HEAD + "def broken(:\n    pass\n\n\n" + SESSION,
    "in an import": HEAD + "from os import (path\n\n\n" + SESSION,
    "an indented line after a function": HEAD + "def f():\n    pass\n  x = 1\n\n\n" + SESSION,
    "in a boring method": HEAD + "class A:\n    def f(self:\n        pass\n\n    def g(self):\n        return ort.InferenceSession('m')\n",
    "an unterminated string in a run of methods": HEAD
    + "class A:\n    def f(self):\n        return '''\n\n    def g(self):\n        return ort.InferenceSession('m')\n",
    "an unterminated string in a region": HEAD + "def f():\n    return '''\n\n\n" + SESSION,
    "a nonlocal with no binding (ast.parse accepts it, symtable does not)": HEAD
    + "def f():\n    nonlocal x\n    x = 1\n\n\n" + SESSION,
}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_cases_read_the_same(path: Path) -> None:
    text = path.read_text("utf-8")
    if not names_a_call(text):
        return
    events = partial_events(text, str(path))
    if events is not None:
        assert _canonical(events) == _whole(text)


def test_real_cases_are_mostly_read_partially() -> None:
    read = [p for p in REAL if names_a_call(t := p.read_text("utf-8")) and partial_events(t, str(p)) is not None]
    assert len(read) >= len(REAL) // 3, f"only {len(read)} of {len(REAL)} read partially"


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_cuts_read_the_same(name: str) -> None:
    text = TRICKY[name]
    events = partial_events(text, "case.py")
    assert events is not None, "expected a partial reading"
    assert _canonical(events) == _whole(text)
    assert events, "the case should give events"


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_what_cannot_be_proven_is_parsed_whole(name: str) -> None:
    text = WHOLE[name]
    assert partial_events(text, "case.py") is None
    target = Target.of(load(), None)
    assert lint_text(text, "case.py", target, prefilter=True).findings == lint_text(text, "case.py", target).findings


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_syntax_errors_anywhere_are_reported_as_before(name: str) -> None:
    text = BROKEN[name]
    assert names_a_call(text)
    result = lint_text(text, "case.py", Target.of(load(), None), prefilter=True)
    try:
        ast.parse(text)
    except SyntaxError as exc:
        assert partial_events(text, "case.py") is None
        assert result.error == f"not valid Python: {exc.msg} (line {exc.lineno}, column {exc.offset})"
    else:  # valid for ast.parse: read whole, no error
        assert result.error is None
        assert partial_events(text, "case.py") is None


def test_copies_of_a_file_are_read_once_and_judged_each(tmp_path: Path) -> None:
    case = HERE / "lint_cases" / "options" / "o19_profile_folder.py"  # QND042: the profile folder is missing
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        shutil.copy(case, tmp_path / name / "script.py")
    (tmp_path / "b" / "logs").mkdir()  # here the folder exists
    run = lint_paths([str(tmp_path)])
    codes = {Path(path).parent.name: finding.code for path, finding in run.findings}
    assert codes == {"a": "QND042"}
    alone = lint_paths([str(tmp_path / "a")])
    assert [f.code for _, f in alone.findings] == ["QND042"]


def test_every_followed_call_is_on_an_interesting_line() -> None:
    """A line with none of prefilter's words is not visited: each call the
    reader follows must be named by one (or by the run/update patterns)."""
    from qnndoctor.lint.prefilter import _INTERESTING, interesting_lines
    from qnndoctor.lint.pyreader import _CALLS

    for name in _CALLS:
        line = f"x = obj.{name}(a, b)\n" if name not in ("Thread", "map", "submit") else f"x = {name}(target=f)\n"
        assert interesting_lines(line)[1] == 1, f"{name}() would not be visited"
    assert "ep_name" in _INTERESTING


@pytest.mark.parametrize("name", [n for n in sorted(TRICKY) if n != "class bodies and clauses" and ("class" in n or "method" in n)])
def test_boring_methods_of_a_kept_class_are_skipped(name: str) -> None:
    from qnndoctor.lint.partial import _split
    from qnndoctor.lint.prefilter import interesting_lines

    text = TRICKY[name]
    split = _split(text, interesting_lines(text))
    assert split is not None and any(region.owner for region in split.regions)


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_other_line_endings_read_the_same(ending: str) -> None:
    text = TRICKY["methods of a class with an interesting one"].replace("\n", ending)
    events = partial_events(text, "case.py")
    assert events is not None
    assert _canonical(events) == _whole(text)
