"""Facts the diagnosis engine reads from the pasted text itself (pip list /
show / freeze, bug-template lines, banners, wheel names, paths, env dumps,
QNN log headers, SoC names as reporters write them), and how they weigh
against measured facts."""

from __future__ import annotations

import re

import pytest

from qnndoctor.diagnosis import Fact, diagnose, textfacts
from qnndoctor.diagnosis.facts import from_items
from qnndoctor.matrixdata import load_socs

SOCS = load_socs()

PIP_LIST = """\
Package            Version
------------------ ---------
numpy              1.26.4
onnxruntime        1.22.1
onnxruntime-qnn    1.19.0
"""


def test_every_regex_a_text_fact_finder_runs_is_listed_for_its_gate() -> None:
    """A finder runs only on lines where one of its listed regexes may match
    (textfacts._FINDER_REGEXES): a regex used but not listed would be skipped
    silently on the lines only it matches."""
    for finder, listed in textfacts._FINDER_REGEXES:
        used = {
            value
            for name in finder.__code__.co_names
            if isinstance(value := getattr(textfacts, name, None), re.Pattern)
        }
        assert used and used <= set(listed), (finder.__name__, used - set(listed))


def test_pip_list_lines() -> None:
    facts = textfacts.from_text(PIP_LIST)
    assert facts.value("onnxruntime_qnn.version") == "1.19.0"
    assert facts.value("onnxruntime.version") == "1.22.1"
    assert facts.value("numpy.version") == "1.26.4"
    assert facts.value("flavours") == frozenset({"onnxruntime", "onnxruntime-qnn"})
    assert "log line 5" in facts.facts["onnxruntime_qnn.version"].source


def test_a_version_named_as_the_last_that_worked_is_not_the_failing_one() -> None:
    text = (
        "| Last known-good | `onnxruntime-qnn==1.25.0` (Windows ARM64) |\n"
        "Failing with onnxruntime-qnn 2.3.0 and onnxruntime 1.32.0\n"
    )
    facts = textfacts.from_text(text)
    assert facts.value("onnxruntime_qnn.version") == "2.3.0"
    assert facts.value("onnxruntime.version") == "1.32.0"
    only_good = textfacts.from_text("Last working version: onnxruntime-qnn 1.22.2\n")
    assert only_good.value("onnxruntime_qnn.version") is None


def test_the_onnxruntime_qnn_wheel_name_is_not_a_qnn_sdk_version() -> None:
    """'onnxruntime_qnn-2.7.0' is the package's version; a QAIRT folder is QNN's."""
    wheel = textfacts.from_text(
        "Downloading onnxruntime_qnn-2.7.0-cp311-cp311-manylinux_2_35_x86_64.whl (98.6 MB)\n"
    )
    assert wheel.value("onnxruntime_qnn.version") == "2.7.0"
    assert wheel.value("qnn.version") is None
    pip = textfacts.from_text("onnxruntime-qnn 2.7.0 depends on onnxruntime>=1.24.2\n")
    assert pip.value("qnn.version") is None
    assert textfacts.from_text("QNN SDK version: 2.28.0\n").value("qnn.version") == "2.28.0"
    # A Windows library name in a Linux loader's message: not a Windows machine.
    linux = textfacts.from_text(
        "QNN SetupBackend failed Unable to load backend, error:  QnnHtp.dll: cannot open shared "
        "object file: No such file or directory\n"
    )
    assert linux.value("os") != "windows"
    sdk = textfacts.from_text(
        "C:\\Qualcomm\\AIStack\\qairt\\2.31.0.250130\\lib\\arm64x-windows-msvc\n"
    )
    assert sdk.value("qnn.version") == "2.31.0"


def test_a_qnn_ep_plugin_version_is_not_read_as_a_qnn_sdk_version() -> None:
    """QNN SDKs below 2.10 predate every onnxruntime-qnn wheel: 'QNN 2.7.0' and a
    folder 'qnn2.3.0' name the plugin, and must not support an entry that asks
    for an old QNN SDK (qnn.version < 2.28)."""
    for text in (
        "/home/me/envs/qnn2.3.0/lib/python3.11/site-packages/onnxruntime_qnn/__init__.py\n",
        "Using QNN 2.7.0 on Snapdragon X Elite\n",
        "C:\\work\\qnn-2.5.0\\run.py\n",
    ):
        assert textfacts.from_text(text).value("qnn.version") is None, text
    assert textfacts.from_text("Using QNN 2.28.0\n").value("qnn.version") == "2.28.0"
    assert textfacts.from_text("/opt/qcom/qnn-2.31.0/lib\n").value("qnn.version") == "2.31.0"


def test_the_arch_a_config_set_is_not_the_devices() -> None:
    facts = textfacts.from_text(
        "QnnDsp <W> Arch 68 set by custom config is different from arch associated with "
        "SoC 57, will overwrite it to 75\n"
    )
    assert facts.value("htp_arch") == "v75"


def test_a_line_naming_windows_and_another_system_states_no_os() -> None:
    both = textfacts.from_text("This fails the same way on Android 14 and on Windows 11.\n")
    assert both.value("os") is None
    later = textfacts.from_text(
        "This fails the same way on Android 14 and on Windows 11.\n"
        'File "C:\\Users\\dev\\app.py", line 3, in <module>\n'
    )
    assert later.value("os") == "windows"


def test_bug_template_lines_and_the_1x_version_rule() -> None:
    text = (
        "### Platform\nWindows\n### OS Version\nWindows 11 Pro\n"
        "### ONNX Runtime Version or Commit ID\n"
        "ONNX Runtime version: 1.18.0\nPython version: 3.11.9\nExecution Provider: QNN\n"
    )
    facts = textfacts.from_text(text)
    assert facts.value("os") == "windows"
    assert facts.value("python.version") == "3.11.9"
    assert facts.value("onnxruntime.version") == "1.18.0"
    assert facts.value("onnxruntime_qnn.version") == "1.18.0"
    assert "share onnxruntime's version" in facts.facts["onnxruntime_qnn.version"].source


def test_banner_wheel_names_and_emulation() -> None:
    text = (
        "Python 3.12.4 (tags/v3.12.4:8e8a4ba, Jun  6 2024) [MSC v.1940 64 bit (AMD64)] on win32\n"
        "Processor Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU\n"
        "Downloading onnxruntime_qnn-1.23.2-cp312-cp312-win_amd64.whl\n"
    )
    facts = textfacts.from_text(text, SOCS)
    assert facts.value("python.arch") == "x86_64"
    assert facts.value("machine.arch") == "arm64"
    assert facts.value("emulated") is True
    assert facts.value("python.version") == "3.12.4"
    assert facts.value("onnxruntime_qnn.version") == "1.23.2"
    assert facts.value("htp_arch") == "v73"


def test_paths_env_and_leftovers() -> None:
    text = (
        r"File C:\Users\José\AppData\Local\Programs\Python\Python312-arm64\Lib\site-packages\onnxruntime\capi\onnxruntime_inference_collection.py"
        "\nADSP_LIBRARY_PATH=/data/local/tmp/qnn:/vendor/dsp\n"
        r"WARNING: Ignoring invalid distribution ~nnxruntime (C:\venv\Lib\site-packages)"
    )
    facts = textfacts.from_text(text)
    assert facts.value("os") == "windows"
    assert facts.value("python.arch") == "arm64"
    assert facts.value("python.version") == "3.12"
    assert facts.value("non_ascii_path") is True
    assert facts.value("adsp_library_path") == "/data/local/tmp/qnn:/vendor/dsp"
    assert facts.value("leftover_dirs") is True


def test_qnn_versions_and_soc_from_log_headers() -> None:
    text = (
        "QnnDsp <V> Detected Snapdragon SOC SM8650 with 1 SOCs\n"
        "Qnn API version: 2.22.0 Build Id: v2.28.0.241029123107_103574\n"
    )
    facts = textfacts.from_text(text, SOCS)
    assert facts.value("qnn.version") == "2.28.0"
    assert facts.value("htp_arch") == "v75"
    assert facts.value("soc") is not None and "8 Gen 3" in facts.value("soc")


@pytest.mark.parametrize(
    ("text", "soc", "arch"),
    [
        ("在8gen1+的平台上, 创建session的时候", "Snapdragon 8+ Gen 1", "v69"),
        ("测试机器为小米14\uff08骁龙8Gen3\uff09", "Snapdragon 8 Gen 3", "v75"),
        ("works on 8gen2 but not here", "Snapdragon 8 Gen 2", "v73"),
        ("a Snapdragon 8 Gen 1+ phone", "Snapdragon 8+ Gen 1", "v69"),
        ("骁龙888", "Snapdragon 888", "v68"),
        ("Surface Pro 9 5G, 8cx gen 3", "Snapdragon 8cx Gen 3", "v68"),
        ("Snapdragon 8 Elite Gen 5", "Snapdragon 8 Elite Gen 5", "v81"),
        # Not a chip: a bare number, a bus generation, a longer number, no brand.
        ("888 errors", None, None),
        ("PCIe 4 Gen 3 slot", None, None),
        ("18 gen 3", None, None),
        ("8 Elite phone", None, None),
    ],
)
def test_soc_names_as_reporters_write_them(text: str, soc: str | None, arch: str | None) -> None:
    """Spaces left out, the brand in Chinese (骁龙) or left out where the model
    line alone is specific ("8gen2"), "8 Gen 1+" for "8+ Gen 1", and CJK text
    right beside the name."""
    facts = textfacts.from_text(text, SOCS)
    assert (facts.value("soc"), facts.value("htp_arch")) == (soc, arch)


def test_htp_arch_and_fp16_from_the_files_the_reporter_deployed() -> None:
    # The skel / stub a reporter pushes names the HTP arch they target, and an
    # fp16 export is usually named so: both decide the fp16-on-old-HTP cause.
    text = (
        "adb push qairt/lib/hexagon-v69/unsigned/libQnnHtpV69Skel.so /data/local/tmp\n"
        "Model_Yolo_v9c_f16.onnx\n"
    )
    facts = textfacts.from_text(text, SOCS)
    assert facts.value("htp_arch") == "v69"
    assert facts.value("model.precision") == "float16"
    assert textfacts.from_text("copy /y QnnHtpV73Stub.dll .", SOCS).value("htp_arch") == "v73"
    plain = textfacts.from_text("libQnnHtp.so loaded\nModel_Yolo_v9c.onnx\n", SOCS)
    assert plain.value("htp_arch") is None and plain.value("model.precision") is None


def test_a_numpy_version_named_inside_a_sentence_decides_between_the_numpy_causes() -> None:
    """ "(onnxruntime 1.9.1, numpy 1.21.4)": a version named mid-line is read
    for numpy too, so the NumPy-2 cause (which requires numpy >= 2) is
    excluded, with that line named, instead of winning at medium."""
    text = (
        ">>> import onnxruntime\n"
        "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xf\n"
        "ImportError: numpy.core.multiarray failed to import\n"
        "This is on a Raspberry Pi with onnxruntime 1.16.0 and numpy 1.23.5 from apt.\n"
    )
    facts = textfacts.from_text(text)
    assert facts.value("numpy.version") == "1.23.5"
    assert facts.value("onnxruntime.version") == "1.16.0"
    result = diagnose(text)
    excluded = {e.signature.id: e.because for e in result.verdict.excluded}
    assert (
        "numpy.version is '1.23.5' (log line 4"
        in excluded["numpy2-vs-onnxruntime-built-for-numpy1"]
    )
    assert result.ids()[0] == "numpy-older-than-onnxruntime-build"


# A pasted Windows session: a full `pip list` with onnxruntime-qnn 1.19.0 as the
# only onnxruntime flavour, then the provider warning.
ONE_FLAVOUR_SESSION = """\
PS C:\\Users\\dev\\npu-test> python -m pip list
Package          Version
---------------- ---------
coloredlogs      15.0.1
flatbuffers      25.2.10
humanfriendly    10.0
mpmath           1.3.0
numpy            1.26.4
onnxruntime-qnn  1.19.0
packaging        24.1
pip              24.2
protobuf         5.28.2
sympy            1.13.3
PS C:\\Users\\dev\\npu-test> python run_npu.py
C:\\Users\\dev\\npu-test\\.venv\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_inference_collection.py:69: UserWarning: Specified provider 'QNNExecutionProvider' is not in available provider names.Available providers: 'CPUExecutionProvider'
  warnings.warn(
"""


def test_one_flavour_in_a_full_pip_list_speaks_against_another_flavour_owning_the_module() -> None:
    """The flavour-shadowing cause needs a second onnxruntime flavour; a full
    `pip list` that shows onnxruntime-qnn alone contradicts it. It used to be
    the first answer at medium; now the fact counts against it (-3), its
    confidence is low with that fact named, and the 2.x plugin cause stays
    ruled out by the 1.19.0 version. (No other catalogued cause names this
    1.x message, so it remains the lead, marked as one.)"""
    result = diagnose(ONE_FLAVOUR_SESSION, socs=SOCS)
    assert result.facts.value("flavours") == frozenset({"onnxruntime-qnn"})
    assert "full package listing (log line 2)" in result.facts.facts["flavours"].source
    ids = result.ids()
    shadowed = ids.index("provider-not-listed-shadowed-by-other-onnxruntime")
    assert result.confidence(shadowed) == "low"
    assert "flavours is ['onnxruntime-qnn']" in str(result.doubt(shadowed))
    against = [e for e in result.candidates[shadowed].evidence if e.weight < 0]
    assert [e.weight for e in against] == [-3] and "does not fit" in against[0].detail
    assert all(result.confidence(i) == "low" for i in range(len(ids)))
    assert "provider-not-listed-plugin-not-registered" in {
        e.signature.id for e in result.verdict.excluded
    }


def test_one_flavour_seen_outside_a_full_listing_says_nothing_about_the_others() -> None:
    """`pip show onnxruntime-qnn` or a sentence names one flavour but not the
    rest: a shadowed install is one its owner does not know about, so no
    flavours fact (and nothing against the shadowing cause) comes from it."""
    shown = "Name: onnxruntime-qnn\nVersion: 1.19.0\n"
    warning = ONE_FLAVOUR_SESSION.splitlines()[-2]
    facts = textfacts.from_text(shown + warning)
    assert facts.value("onnxruntime_qnn.version") == "1.19.0"
    assert facts.value("flavours") is None
    result = diagnose(shown + warning)
    assert result.ids()[0] == "provider-not-listed-shadowed-by-other-onnxruntime"
    assert result.doubt(0) is None and result.confidence(0) == "medium"
    two = "onnxruntime 1.22.1\nonnxruntime-qnn 1.19.0\n"  # two flavours: proof enough
    assert textfacts.from_text(two).value("flavours") == frozenset(
        {"onnxruntime", "onnxruntime-qnn"}
    )
    frozen = "coloredlogs==15.0.1\nnumpy==1.26.4\nonnxruntime-qnn==1.19.0\n"
    assert textfacts.from_text(frozen).value("flavours") == frozenset({"onnxruntime-qnn"})


def test_measured_facts_win_and_conflicts_are_named() -> None:
    from qnndoctor.diagnosis.facts import merge

    ticket = from_items([Fact("onnxruntime_qnn.version", "2.7.0", "saved report t.json")])
    stated = textfacts.from_text("onnxruntime-qnn==1.19.0")
    merged = merge(ticket, stated)
    assert merged.value("onnxruntime_qnn.version") == "2.7.0"
    assert any("1.19.0" in c and "ignored" in c for c in merged.conflicts)


def test_text_without_any_environment_states_no_facts() -> None:
    assert len(textfacts.from_text("something broke")) == 0
    assert len(textfacts.from_text("")) == 0


def test_sys_version_output_names_the_python() -> None:
    text = "3.12.4 (tags/v3.12.4:8e8a4ba, Jun  6 2024, 19:30:16) [MSC v.1940 64 bit (AMD64)] AMD64"
    facts = textfacts.from_text(text)
    assert facts.value("python.version") == "3.12.4"
    assert facts.value("python.arch") == "x86_64"


def test_how_people_write_their_python_build() -> None:
    """Reporters name the build in prose; the arch it states decides emulation."""
    for text, arch in (
        ("onnxruntime-qnn 1.22.0 on Snapdragon X Elite, python 3.12 x64", "x86_64"),
        ("I use Python 3.12.4 (AMD64) from python.org", "x86_64"),
        ("installed the x64 version of Python", "x86_64"),
        ("ARM64 Python 3.12, onnxruntime-qnn 1.23.2", "arm64"),
        ("Python 3.11 arm64 from python.org", "arm64"),
    ):
        assert textfacts.from_text(text).value("python.arch") == arch, text
    stated = textfacts.from_text("Snapdragon X Elite X1E-78-100, python 3.12 x64", SOCS)
    assert stated.value("emulated") is True
    for text in ("Python 3.12 (64-bit)", "python -m pip install onnxruntime-qnn", "x64 machine"):
        assert textfacts.from_text(text).value("python.arch") is None, text


def test_a_fact_from_a_coloured_line_quotes_it_without_the_colour_codes() -> None:
    """ORT colours its [E:...] lines on a terminal; a pasted log keeps the codes."""
    line = (
        "\x1b[1;31m2026-11-27 06:54:00.510112909 [E:onnxruntime:, qnn_execution_provider.cc:2290 "
        "GetCapabilityImpl] QNN SetupBackend failed Unable to load backend, error:  "
        "C:\\Users\\me\\venv\\Lib\\site-packages\\onnxruntime_qnn\\QnnHtp.dll\x1b[m"
    )
    facts = {f.key: f for f in textfacts.from_text(line)}
    assert facts["os"].value == "windows"
    assert "\x1b" not in facts["os"].source and "[E:onnxruntime:" in facts["os"].source
