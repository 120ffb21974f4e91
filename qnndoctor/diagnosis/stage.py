"""Where it failed: the stage, the component, the line that shows it, and
the experiment that would settle it, for every answer and for "no known
cause" too.

Most public reports name no catalogued cause, or one the catalogue was
never written against; "no known cause" alone helps nobody. What a text
almost always shows is how far the run got: whether Python could not import
onnxruntime, the QNN plugin was never registered, the HTP backend did not
load, a graph did not finalize, or a model ran and gave wrong numbers. That
narrows the search to one component and one experiment. When there is a
first answer, its catalogue entry says where its cause stops a run
(``matrix/stages.json``, ``for_entry``), shown with the answer's own matched
line; else (and for an entry that table does not place) the lines are read:
the answer's own matched line when there is one, else the first line that
reads like the failure, each against ``RULES`` in order (the most specific
stage first).
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any

from .._layout import shipped_table

STAGES = (
    "install",
    "import",
    "EP registration",
    "device discovery",
    "backend load",
    "graph compose / finalize",
    "context-binary load",
    "execute",
    "accuracy",
    "performance",
)
COMPONENTS = (
    "Python environment",
    "onnxruntime packaging",
    "QNN libraries",
    "HTP driver / firmware / FastRPC",
    "model / op support",
    "EP options",
    "application code",
    "hardware",
)

_CHECK = "`qnndoctor check` on the affected machine"
# {load}, {culprit}, {compare}: `qnndoctor model` on the model the text names, as a
# command, or in words when the text names none (never a placeholder path).
EXPERIMENTS = {
    "install": f"{_CHECK} (reads the install without importing it)",
    "import": f"{_CHECK} (imports onnxruntime in a contained child)",
    "EP registration": f"{_CHECK} (registers the QNN plugin and lists its devices)",
    "device discovery": f"{_CHECK} (runs a known-good model on the NPU); "
    "if an older onnxruntime-qnn worked there: `qnndoctor bisect`",
    "backend load": f"{_CHECK} (loads the HTP backend with a known-good model); "
    "if an older onnxruntime-qnn worked there: `qnndoctor bisect`",
    "graph compose / finalize": "{culprit} (which node the NPU rejects); "
    f"{_CHECK} first if no model runs at all",
    "context-binary load": "{load} (loads the compiled model in a contained child); "
    "if the binary was compiled with another QNN: `qnndoctor bisect`",
    "execute": "{culprit} (which node fails to run); " f"{_CHECK} if no model runs at all",
    "accuracy": "{compare} (NPU outputs against the CPU's)",
    "performance": "{compare} (what runs where, and how fast)",
    "unknown": f"{_CHECK}, then {{culprit}} if it passes",
}

# A model file the text names: quoted (spaces allowed), else a run of path characters.
_MODEL_FILE = re.compile(
    r"""["']([^"'\n]*?[^"'\n/\\]\.onnx)["']|((?:[A-Za-z]:)?[\w.~/\\-]*\w\.onnx)(?![\w.])""",
    re.IGNORECASE,
)


def model_named(lines: list[str], first: int | None = None) -> str | None:
    """The model file the text names: on line ``first`` (1-based: the line
    that shows the failure) if it names one, else the first one named."""
    preferred = [lines[first - 1]] if first and 0 < first <= len(lines) else []
    for line in itertools.chain(preferred, lines):
        if ".onnx" not in line and ".ONNX" not in line:  # most lines: no regex (a long log)
            continue
        match = _MODEL_FILE.search(line)
        if match and match[1]:
            return _literal(match[1])
        if match and not _cut_at_a_space(line, match.start(2)):
            return match[2]
    return None


def _literal(quoted: str) -> str:
    """A quoted path as the file's name: in a Python string literal (a
    traceback's code line) every backslash is doubled, ``C:\\\\m\\\\x.onnx``;
    a raw literal or a message's quotes have single ones, kept as they are."""
    if "\\\\" in quoted and "\\" not in quoted.replace("\\\\", ""):
        return quoted.replace("\\\\", "\\")
    return quoted


def _cut_at_a_space(line: str, start: int) -> bool:
    """An unquoted path right after a word that is a path itself
    (``C:\\models\\yolo v8.onnx``): the match is only its end, so no path is taken."""
    before = line[:start]
    words = before.split()
    return before.endswith(" ") and bool(words) and ("\\" in words[-1] or "/" in words[-1])


def model_invocation(model: str) -> str:
    """``qnndoctor model MODEL``, the path quoted for the shell it belongs to
    (a drive letter or a backslash: Windows)."""
    from .. import shell

    windows = "\\" in model or re.match(r"^[A-Za-z]:", model) is not None
    return f"qnndoctor model {shell.quote(model, windows)}"


def model_command(model: str | None, option: str = "") -> str:
    """``qnndoctor model MODEL OPTION`` for the model the text names, or the
    same in words when the text names no model."""
    with_option = f" with `{option}`" if option else ""
    if model is None:
        return f"`qnndoctor model`{with_option} on the model that failed"
    return f"`{model_invocation(model)}{' ' + option if option else ''}`"


def experiment(stage: str, model: str | None) -> str:
    """The experiment that settles a failure at ``stage`` (EXPERIMENTS)."""
    return EXPERIMENTS[stage].format(
        load=model_command(model),
        culprit=model_command(model, "--find-culprit"),
        compare=model_command(model, "--compare"),
    )


@dataclass(frozen=True)
class Rule:
    stage: str
    component: str
    wording: re.Pattern[str]


def _rule(stage: str, component: str, wording: str) -> Rule:
    return Rule(stage, component, re.compile(wording, re.IGNORECASE))


RULES = (
    _rule(
        "install",
        "Python environment",
        r"No matching distribution|Could not find a version that satisfies|Could not install packages"
        r"|is not a supported wheel|Failed building wheel|requires a different Python|pip install"
        r"|externally-managed-environment|Can not perform a '--user' install|ResolutionImpossible"
        r"|bin/pip: |pip-build-env|build\.(?:sh|py) .*--use_qnn|QnnInterface\.h' file not found",
    ),
    _rule(
        "import",
        "onnxruntime packaging",
        r"DLL load failed|_ARRAY_API not found|cannot import name|numpy\.core\.multiarray failed"
        r"|onnxruntime_pybind11_state.*(?:not found|cannot open)|ImportError"
        r"|compiled using NumPy 1\.x|onnxruntime_pybind11_state\.pyd\) in python",
    ),
    _rule("import", "Python environment", r"No module named|ModuleNotFoundError"),
    _rule(
        "EP registration",
        "onnxruntime packaging",
        r"register_execution_provider_library|RegisterExecutionProviderLibrary|not registered"
        r"|Failed to load EP library|EP library|not in available provider names"
        r"|available providers|get_available_providers|plugin (?:EP|library)",
    ),
    _rule(
        "graph compose / finalize",
        "EP options",
        r"Failed to generate EP context model|EP context generation|context_file_path"
        r"|ep_context_path|Failed to write context cache|compile_to_(?:file|stream)|ModelCompiler"
        r"|Unable to compile any nodes|Unable to serialize model|CreateEPContextNodes"
        r"|ConvertEpContextNodes|OrtEp::Compile|serialization failed when saving"
        r"|CheckEpContextDataSupport|disabled EP compilation",
    ),
    _rule(
        "EP registration",
        "EP options",
        r"qnn_execution_provider\.cc:\d+ (?:Parse\w+|QnnEp)\]|profiling_file_path"
        r"|Failed to open profiling file|ORT_QNN_CUSTOM_OP_DOMAINS|op_package_parser",
    ),
    _rule(
        "EP registration",
        "onnxruntime packaging",
        r"execution provider is not supported in this build|Specified provider is not supported"
        r"|ep_plugin_provider_interfaces(?!.*GetCapability)|Error creating execution provider"
        r"|add_provider_for_devices|set_provider_selection_policy|EP selection delegate"
        r"|Specified 'providers'|requested API version"
        r"|OrtEpDevice values|Multiple devices were provided",
    ),
    _rule(
        "context-binary load",
        "QNN libraries",
        r"context binary|EPContext|_ctx\.onnx|deserializ|contextCreateFromBinary|context cache",
    ),
    _rule(
        "device discovery",
        "HTP driver / firmware / FastRPC",
        r"fastrpc|\bcdsp|remote_handle|apps_dev_init|transportStatus|qnn_open|libcdsprpc"
        r"|\bskel\b|Skel\.so|Skel\.dll|QNN_DEVICE_ERROR|deviceCreate|Failed to create device"
        r"|get_ep_devices|no (?:QNN |NPU )?devices?\b",
    ),
    _rule(
        "device discovery",
        "hardware",
        r"(?:SoC|chip|device|hardware|arch(?:itecture)?) (?:is )?not supported|unsupported (?:SoC|chip)",
    ),
    _rule(
        "backend load",
        "QNN libraries",
        r"Unable to load backend|Failed to load (?:the )?backend|backend_path|libQnnHtp|QnnHtp\.dll"
        r"|QnnSystem|Stub\.(?:so|dll)|stub library|LoadLibrary|cannot open shared object"
        r"|Failed to (?:load|open) .*\.(?:so|dll)\b|error 126\b|0xc0000135",
    ),
    _rule(
        "graph compose / finalize",
        "model / op support",
        r"finaliz|ComposeQnnGraph|compose|validateOpConfig|op validation|Op config|graphAddNode"
        r"|Failed to add node|Validation FAILED|not supported by (?:the )?QNN|unsupported op"
        r"|graph prepare|QNN graph|\b3110\b|\b1002\b",
    ),
    _rule(
        "graph compose / finalize",
        "model / op support",
        r"Load model from .*failed|Protobuf parsing failed|No graph was found|invalid model"
        r"|is not a registered function/op|IR version|\bOpset \d+|Exception during initialization"
        r"|assigned to the default CPU EP|Unsupported nodes in QNN EP|^\s*REASON :|Cannot get shape"
        r"|model verification failed|genai_config\.json|model_type|model path is a directory"
        r"|Unable to load from type|InferenceSession::(?:Initialize|InferenceSession)"
        r"|tokenizer(?:_config)?\.json|NHWC format|com\.ms\.internal\.nhwc",
    ),
    _rule(
        "execute",
        "application code",
        r"missing \d+ required positional argument|unexpected keyword argument"
        r"|object has no attribute|is not defined\b|Required inputs .* are missing|Invalid input name"
        r"|Unexpected input data type|Got invalid dimensions|Invalid rank for input|Invalid output name"
        r"|Error in execution|Failed to find NodeArg|IOBinding|cannot pickle|run_async|terminate flag"
        r"|Cannot place the OrtValue|OrtValue|run_with_\w+\(\)|Unable to handle object of type"
        r"|SetDynamicOptionsImpl|Lora Config|max_length|quantize_static|calibrat"
        r"|quantization doesn't support|No data is collected|TensorQuantOverrides|get_next",
    ),
    _rule(
        "execute",
        "HTP driver / firmware / FastRPC",
        r"subsystem restart|\bSSR\b|dsp crash|timed? ?out while executing|graph execute.*timeout",
    ),
    _rule(
        "execute",
        "model / op support",
        r"graphExecute|qnn_graph_execute|Failed to execute|Non-zero status code returned while running"
        r"|RUNTIME_EXCEPTION|execute graph|during execution",
    ),
    _rule(
        "accuracy",
        "model / op support",
        r"accuracy|wrong (?:output|result)s?|\bNaNs?\b|outputs? (?:differ|mismatch)|all zeros"
        r"|garbage output|max(?:imum)? abs(?:olute)? diff",
    ),
    _rule(
        "performance",
        "EP options",
        r"\bslow(?:er)?\b|latency|inference time|fall(?:s|ing)? back to (?:the )?CPU|CPU fallback"
        r"|not (?:using|running on) the NPU|NPU (?:is )?(?:not|never) used",
    ),
    _rule(
        "EP registration",
        "onnxruntime packaging",
        r"QNNExecutionProvider|onnxruntime_qnn|onnxruntime-qnn",
    ),
)


@dataclass(frozen=True)
class Where:
    stage: str  # one of STAGES, or "unknown"
    component: str  # one of COMPONENTS, or "unknown"
    line: int | None  # the line that shows it (1-based), None when nothing does
    text: str | None
    experiment: str  # the command that would settle it
    model: str | None = None  # the model file the text names (in the experiment's command)

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "component": self.component,
            "line": self.line,
            "text": self.text,
            "experiment": self.experiment,
            "model": self.model,
        }


# Why the entry table could not be read (a damaged install): the lines are read instead.
problems: list[str] = []


@functools.cache
def _entries() -> dict[str, tuple[str, str]]:
    raw = shipped_table("stages.json", "entries", problems)
    if raw is None:
        return {}
    try:
        table = {str(i): (str(e["stage"]), str(e["component"])) for i, e in raw.items()}
    except (KeyError, TypeError, AttributeError) as exc:
        problems.append(f"stages.json: {type(exc).__name__}: {exc}")
        return {}
    bad = [i for i, (st, co) in table.items() if st not in STAGES or co not in COMPONENTS]
    if bad:
        problems.append(f"stages.json: unknown stage or component for {', '.join(bad[:3])}")
    return {i: v for i, v in table.items() if i not in bad}


def for_entry(entry_id: str) -> tuple[str, str] | None:
    """The stage and component where catalogue entry ``entry_id``'s cause
    stops a run (``matrix/stages.json``), None when the table does not place it."""
    return _entries().get(entry_id)


def of_entry(
    entry_id: str, shown: list[tuple[int, str]], model: str | None = None
) -> Where | None:
    """Where it failed when the first answer is ``entry_id``: its entry's stage
    and component, with the first of ``shown`` (the answer's own line, else
    the lines that read like the failure) as the line that shows it."""
    placed = for_entry(entry_id)
    if placed is None:
        return None
    number, text = shown[0] if shown else (None, None)
    return Where(
        placed[0], placed[1], number, _clip(text), experiment(placed[0], model), model
    )


def _clip(line: str | None) -> str | None:
    if line is None:
        return None
    text = line.strip()
    return text if len(text) <= 240 else text[:237] + "..."


def classify(line: str) -> Rule | None:
    """The first rule whose wording ``line`` holds."""
    return next((rule for rule in RULES if rule.wording.search(line)), None)


def where(shown: list[tuple[int, str]], model: str | None = None) -> Where:
    """Where it failed, from ``shown``: the lines (number, text) that show the
    failure, the most telling first (the answer's own line, then the lines
    that read like the failure, earliest first)."""
    for number, line in shown:
        rule = classify(line)
        if rule is not None:
            return Where(
                rule.stage, rule.component, number, _clip(line), experiment(rule.stage, model), model
            )
    return Where("unknown", "unknown", None, None, experiment("unknown", model), model)
