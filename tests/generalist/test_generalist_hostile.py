"""Hostile and unusual inputs of the generalist ranking, through the real command:
YAML bombs, integers beyond Python's int/str limit, files that are not regular files, an --out
that cannot be written, names that are formulas or control characters, a reader that closes
stdout early, a Python without PyYAML."""
import csv
import io
import json
import os
import subprocess
import sys
import time

import pytest

from generalist_util import COMMAND, CONFIG, GOOD, generalist_either, run_generalist, write_case
from yaml_bombs import laughs


BILLION_LAUGHS = laughs(9, key="eps")


def _bench_module():
    """bench/generalist.py, for its measure_rusage (the command's own peak RSS: see there)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.dirname(COMMAND)), "bench", "generalist.py")
    spec = importlib.util.spec_from_file_location("generalist_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_measured(args, timeout=30):
    """The real command: (exit status, stdout, stderr, wall seconds, peak RSS in MB of the
    interpreter that ran it)."""
    try:
        r = _bench_module().measure_rusage([sys.executable, COMMAND] + [str(a) for a in args],
                                           timeout=timeout)
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None
    return r["rc"], r["out"], r["err"], r["wall"], r["rss"]


def assert_refused(proc_or_tuple, where, words, code=3):
    if isinstance(proc_or_tuple, tuple):
        rc, out, err = proc_or_tuple[:3]
    else:
        rc, out, err = proc_or_tuple.returncode, proc_or_tuple.stdout, proc_or_tuple.stderr
    assert rc == code, (rc, out, err)
    assert "Traceback" not in out + err and "INTERNAL ERROR" not in err, err
    assert where in err, err
    for w in words if isinstance(words, tuple) else (words,):
        assert w in err, err
    return err


# ---------------------------------------------------------------- YAML

YAML_BOMBS = {
    "billion laughs": (BILLION_LAUGHS, 5, "alias bomb"),   # e: 9^5 strings, over the cap
    "recursive alias in a sequence": ("eps: &a [1, *a]\n" + CONFIG, 1, "recursive alias"),
    "recursive alias in a mapping": ("x: &a {y: *a}\n" + CONFIG, 1, "recursive alias"),
    "recursive merge key": ("x: &a {<<: *a}\n" + CONFIG, 1, "recursive alias"),
    "deep flow nesting": ("eps: " + "[" * 100000 + "\n", 1, "nested more than 64 levels"),
    "deep block nesting": ("".join(" " * i + "k{}:\n".format(i) for i in range(300)), 65,
                           "nested more than 64 levels"),
    "merge-key bomb": ("".join("m{0}: &m{0} {{<<: [{1}], k{0}: 1}}\n".format(
        i, ", ".join(["*m{}".format(i - 1)] * 8)) if i else "m0: &m0 {k: 1}\n"
        for i in range(12)), 6, "alias bomb"),
    "integer of 5,000 digits": ("min_leaderboards: " + "9" * 5000 + "\n" + CONFIG, 1,
                                "longer than 4,300 digits"),
    "sexagesimal integer of 3,000 parts": ("eps: " + ":".join(["1"] * 3000) + "\n" + CONFIG, 1,
                                           "longer than 4,300 digits"),
    "impossible date": ("eps: 2024-13-45\n" + CONFIG, 1, "month must be in 1..12"),
    "python tag": ("eps: !!python/object/apply:os.system ['true']\n" + CONFIG, 1,
                   "the tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed"),
    "python tag on a scalar": ("eps: !!python/name:os.system x\n" + CONFIG, 1,
                               "is not allowed"),
    "two documents": (CONFIG + "---\neps: 0.1\n", 11, "expected a single document"),
    # A name no UTF-8 output can hold: refused, not an internal error when writing.
    "lone surrogate in a name": (CONFIG.replace("name: one", 'name: "one\\ud800"'), 2,
                                 "a lone surrogate"),
}


@pytest.mark.compat
@pytest.mark.parametrize("name", sorted(YAML_BOMBS))
def test_hostile_yaml_is_refused_quickly(tmp_path, name):
    text, line, words = YAML_BOMBS[name]
    path = write_case(tmp_path / "case", "", GOOD)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    rc, out, err, wall, rss = run_measured([path, "--out", tmp_path / "out"])
    assert_refused((rc, out, err), "config.yaml, line {}:".format(line), words)
    assert len(err) < 1000, "a message quoting a value must be short"
    assert wall < 5, wall           # about 0.1 s alone; slack for a loaded machine
    assert rss < 100, rss
    assert not (tmp_path / "out").exists()


@pytest.mark.compat
def test_yaml_bomb_is_cheap_in_process():
    """The caps act before anything expands: the alias bomb and the cycle well under a second,
    the deep nesting within PyYAML's own bounded scan; a few MB in all."""
    import resource
    from scoring import safe_yaml
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def best_of_three(texts):
        # CPU time, the best of three: a machine busy with other tests inflates one run.
        spent = []
        for _ in range(3):
            start = time.process_time()
            for text in texts:
                with pytest.raises(safe_yaml.YamlError):
                    safe_yaml.load_text(text)
            spent.append(time.process_time() - start)
        return min(spent), spent

    cheap, spent = best_of_three((BILLION_LAUGHS, "a: &a [*a]\n"))
    assert cheap < 1.0, spent                     # 6 ms on the worker's Python 3.7
    # 10,000 levels: ten times Python's recursion limit, 156 times the cap. PyYAML's scanner
    # looks up to 1,024 characters ahead for a simple key and rechecks every open one at each
    # token, so it spends 0.73 s on 3.7 (0.4 s on 3.11) before the cap sees the 65th level,
    # whatever the depth beyond; without the cap this would recurse until it fails.
    deep, spent = best_of_three(("a: " + "[" * 10000,))
    assert deep < 3.0, spent
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024


def test_config_larger_than_the_cap(tmp_path):
    path = write_case(tmp_path / "case", CONFIG + "#" + "x" * (1 << 20) + "\n", GOOD)
    proc = run_generalist(path, "--out", tmp_path / "out")
    assert_refused(proc, "config.yaml: cannot read the configuration: larger than 1,048,576 bytes",
                   "larger than")


def test_a_long_value_is_quoted_briefly(tmp_path):
    """A value quoted in a message is cut: a 200,000-character name, a list of 4,000 items
    (12,000 characters in full, eight times the message's bound; 40,000 items only made the
    pure-Python YAML parser take 3 s more), a list of 900 (2,700 characters)."""
    config = CONFIG.replace("name: one", "name: " + "N" * 200000).replace(
        "higher_is_better: true", "higher_is_better: [" + ", ".join(["1"] * 4000) + "]")
    path = write_case(tmp_path / "case", "eps: [" + ", ".join(["2"] * 900) + "]\n" + config,
                      GOOD)
    proc = run_generalist(path, "--out", tmp_path / "out")
    err = assert_refused(proc, "config.yaml, line 1:", ("eps must be a number",
                                                          "higher_is_better must be true"))
    assert len(err) < 1500, len(err)


# ---------------------------------------------------------------- long integers

@pytest.mark.compat
def test_rank_of_5000_digits_in_a_board(tmp_path):
    path = write_case(tmp_path / "case", CONFIG, dict(GOOD, **{
        "b.csv": "team,rank\nA,2\nB,{}\nC,3\n".format("7" * 5000)}))
    proc = run_generalist(path, "--out", tmp_path / "out")
    err = assert_refused(proc, os.path.join("case", "b.csv") + ", line 3:", "too large (5,000 "
                         "digits")
    assert len(err) < 600


@pytest.mark.compat
def test_codalab_rank_of_5000_digits(tmp_path):
    config = CONFIG.replace("model_column: team\n    rank_column: rank", "rank_column: mAP")
    path = write_case(tmp_path / "case", config, dict(GOOD, **{
        "b.csv": "submission_pk,User,b'mAP'\r\n1,A,0.5 (1),\r\n2,B,0.4 ({}),\r\n".format(
            "9" * 5000)}))
    proc = run_generalist(path, "--out", tmp_path / "out")
    assert_refused(proc, os.path.join("case", "b.csv") + ", line 3:", "too large")


@pytest.mark.compat
def test_score_exponent_beyond_decimal(tmp_path):
    path = write_case(tmp_path / "case", CONFIG, dict(GOOD, **{
        "a.csv": "team,score\nA,3\nB,1e999999999999999999999\nC,1\n"}))
    proc = run_generalist(path, "--out", tmp_path / "out")
    assert_refused(proc, os.path.join("case", "a.csv") + ", line 3:", "exponent is out of range")


@pytest.mark.compat
def test_score_of_100000_digits_ranks_and_is_shown_cut(tmp_path):
    big = "9" * 100000
    path = write_case(tmp_path / "case", CONFIG, dict(GOOD, **{
        "a.csv": "team,score\nA,{}\nB,{}8\nC,1\n".format(big, big[:-1])}))
    out = tmp_path / "out"
    proc = run_generalist(path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    ranks = {m["model"]: m["leaderboards"]["one"]["rank"] for m in doc["models"]}
    assert ranks == {"A": 1, "B": 2, "C": 3}
    html = (out / "ranking.html").read_text(encoding="utf-8")
    assert "9" * 200 not in html and "999999999999999\u2026" in html


@pytest.mark.compat
@pytest.mark.parametrize("line, words", [
    ("min_leaderboards: " + "9" * 4000, "min_leaderboards is <an integer of about"),
    ("eps: " + "9" * 400, "eps must be a number with 0 < eps < 1, not 999"),
    ("eps: -" + "9" * 4200, "eps must be a number"),
])
def test_long_integers_in_the_configuration(tmp_path, line, words):
    """Below the 4,300-digit cap: still a clear message, short, on every Python."""
    path = write_case(tmp_path / "case", line + "\n" + CONFIG, GOOD)
    # The real command for min_leaderboards; the other lines through the same main.
    proc = generalist_either(path, "--out", tmp_path / "out",
                             real=line.startswith("min_leaderboards"))
    err = assert_refused(proc, "config.yaml, line 1:", words)
    assert len(err) < 600


@pytest.mark.compat
def test_table_number_of_4000_digits(tmp_path):
    config = CONFIG.replace("model_column: team\n    rank_column: rank",
                            "rank_column: mAP\n    table: " + "9" * 4000)
    path = write_case(tmp_path / "case", config, dict(GOOD, **{
        "b.csv": "submission_pk,User,b'mAP'\r\n1,A,0.5 (1),\r\n2,B,0.4 (2),\r\n"}))
    proc = run_generalist(path, "--out", tmp_path / "out")
    err = assert_refused(proc, "b.csv", "asked, but the export holds 1 table")
    assert len(err) < 600


# ---------------------------------------------------------------- not regular files

def _special(tmp_path, kind):
    folder = tmp_path / "case"
    path = write_case(folder, CONFIG, GOOD)
    board = folder / "a.csv"
    board.unlink()
    if kind == "fifo":
        os.mkfifo(str(board))
    elif kind == "device":
        os.symlink("/dev/zero", str(board))      # as a link: the rule follows it, then refuses
    elif kind == "link to a fifo":
        os.mkfifo(str(folder / "pipe"))
        os.symlink(str(folder / "pipe"), str(board))
    elif kind == "folder":
        board.mkdir()
    return path


@pytest.mark.parametrize("kind, words", [
    ("fifo", "is not a regular file: a FIFO (named pipe)"),
    ("device", "is not a regular file: a device file"),
    ("link to a fifo", "is not a regular file: a FIFO (named pipe)"),
    ("folder", "is a folder, not a file"),
])
def test_board_that_is_not_a_regular_file(tmp_path, kind, words):
    path = _special(tmp_path, kind)
    rc, out, err, wall, _ = run_measured([path, "--out", tmp_path / "out"], timeout=20)
    assert_refused((rc, out, err), "config.yaml, line 2: leaderboard 'one': " +
                   os.path.join(str(tmp_path / "case"), "a.csv"), words)
    assert wall < 10


def test_nul_byte_in_a_board_file_name(tmp_path):
    path = write_case(tmp_path / "case", CONFIG.replace("file: a.csv", 'file: "a\\0.csv"'), GOOD)
    proc = run_generalist(path)
    assert_refused(proc, "config.yaml, line 2: leaderboard 'one': ", "a\\x00.csv cannot be "
                   "read (a NUL byte in its name)")


def test_dev_zero_named_directly(tmp_path):
    path = write_case(tmp_path / "case", CONFIG.replace("file: a.csv", "file: /dev/zero"), GOOD)
    proc = run_generalist(path)
    assert_refused(proc, "leaderboard 'one': /dev/zero is not a regular file: a device file",
                   "device file")


def test_configuration_that_is_a_fifo(tmp_path):
    os.mkfifo(str(tmp_path / "config.yaml"))
    proc = run_generalist(tmp_path / "config.yaml")
    assert_refused(proc, "config.yaml: cannot read the configuration: not a regular file: "
                   "a FIFO", "FIFO")


def test_symbolic_link_to_a_regular_board_is_followed(tmp_path):
    """The organizer's own files: a link to a regular file is read (decision in the docs)."""
    folder = tmp_path / "case"
    path = write_case(folder, CONFIG.replace("file: a.csv", "file: link.csv"), GOOD)
    os.symlink(str(folder / "a.csv"), str(folder / "link.csv"))
    proc = run_generalist(path)
    assert proc.returncode == 0, proc.stderr


def test_board_larger_than_the_cap(tmp_path, monkeypatch):
    from organizing.generalist import boards
    folder = tmp_path / "case"
    write_case(folder, CONFIG, GOOD)
    with open(str(folder / "a.csv"), "r+b") as f:      # sparse: no 64 MiB actually written
        f.truncate(boards.MAX_BOARD_BYTES + 1)
    proc = run_generalist(folder / "config.yaml")
    assert_refused(proc, "leaderboard 'one'", "is larger than 67,108,864 bytes")


# ---------------------------------------------------------------- --out

def test_out_that_cannot_be_written_is_a_usage_error(tmp_path):
    path = write_case(tmp_path / "case", CONFIG, GOOD)
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    for out, reason in ((tmp_path / "afile" / "out", "Not a directory"),
                        ("/proc/generalist-test/out", ""),
                        ("/proc/generalist-test", "")):
        # The real command for the first; the others through the same main in this process.
        proc = generalist_either(path, "--out", out, real=reason != "")
        assert proc.returncode == 2, (out, proc.returncode, proc.stderr)
        assert proc.stderr.startswith("ERROR: cannot write into --out {} (".format(out))
        assert reason in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(os.listdir(str(tmp_path))) == ["afile", "case"]


def test_missing_parents_of_out_are_made_and_removed_on_failure(tmp_path):
    path = write_case(tmp_path / "case", CONFIG, dict(GOOD, **{"a.csv": "team,score\nA,1\n"}))
    proc = run_generalist(path, "--out", tmp_path / "x" / "y" / "out")
    assert proc.returncode == 3
    assert sorted(os.listdir(str(tmp_path))) == ["case"]
    path = write_case(tmp_path / "case", CONFIG, GOOD)
    proc = generalist_either(path, "--out", tmp_path / "x" / "y" / "out", real=False)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(str(tmp_path / "x" / "y" / "out"))) == [
        "ranking.csv", "ranking.html", "ranking.json"]


# ---------------------------------------------------------------- names

# (A leading tab or carriage return is stripped from a name when the board is read; the CSV
# writer's rule for them is tested in test_quoting.py.)
HOSTILE_NAMES = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "x\tTAB",
                 "ansi\x1b[31mred\x1b[0m", "new\nline", "rtl\u202egnp.exe", "plain"]


def _hostile_case(tmp_path):
    rows = io.StringIO()
    w = csv.writer(rows, lineterminator="\n")
    w.writerow(["team", "score"])
    for k, name in enumerate(HOSTILE_NAMES):
        w.writerow([name, len(HOSTILE_NAMES) - k])
    board = rows.getvalue()
    return write_case(tmp_path / "case", CONFIG.replace("rank_column: rank", "score_column: "
                                                        "score\n    higher_is_better: false")
                      .replace("name: two", "name: \"=two\\e[1m\""),
                      {"a.csv": board, "b.csv": board})


def test_formulas_are_neutralised_in_ranking_csv(tmp_path):
    out = tmp_path / "out"
    proc = run_generalist(_hostile_case(tmp_path), "--out", out)
    assert proc.returncode == 0, proc.stderr
    with open(str(out / "ranking.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    models = sorted(r[1] for r in rows[1:])
    expected = sorted(("'" + n if n[0] in "=+-@" else n) for n in HOSTILE_NAMES)
    assert models == expected
    assert "'=two\x1b[1m rank" in rows[0]                 # a board name in the header too
    weakest = {r[5] for r in rows[1:]}
    assert weakest <= {"one", "'=two\x1b[1m"}
    # JSON keeps the names as they are (data, not a spreadsheet).
    doc = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    assert sorted(m["model"] for m in doc["models"]) == sorted(HOSTILE_NAMES)


def test_control_characters_are_escaped_on_stdout_and_page(tmp_path):
    out = tmp_path / "out"
    proc = run_generalist(_hostile_case(tmp_path), "--out", out)
    assert proc.returncode == 0, proc.stderr
    for raw in ("\x1b", "\u202e", "\r", "\t"):
        assert raw not in proc.stdout
    lines = proc.stdout.splitlines()
    table = lines[lines.index("") + 3:]
    table = table[:table.index("")]
    assert len(table) == len(HOSTILE_NAMES)            # a newline in a name breaks no row
    assert "ansi\\x1b[31mred\\x1b[0m" in proc.stdout and "new\\nline" in proc.stdout
    assert "rtl\\u202egnp.exe" in proc.stdout and "=two\\x1b[1m" in proc.stdout
    html = (out / "ranking.html").read_text(encoding="utf-8")
    for raw in ("\x1b", "\u202e", "new\nline"):
        assert raw not in html
    assert "rtl\\u202egnp.exe" in html and "=HYPERLINK(&quot;http://x&quot;" in html


def test_control_characters_are_escaped_in_messages(tmp_path):
    path = write_case(tmp_path / "case", CONFIG, dict(GOOD, **{
        "a.csv": "team,score\nA\x1b[2J,3\nA\x1b[2J,2\nC\u202e,x\n"}))
    proc = run_generalist(path)
    err = assert_refused(proc, "a.csv, line 3:", ("'A\\x1b[2J'", "already on"))
    assert "\x1b" not in err and "\u202e" not in err


# ---------------------------------------------------------------- a closed stdout

def _many_models_case(tmp_path, n=3000):
    rows = "".join("model-{:05d},{}\n".format(k, k % 97) for k in range(n))
    return write_case(tmp_path / "case", CONFIG.replace("rank_column: rank", "score_column: "
                                                        "score\n    higher_is_better: false"),
                      {"a.csv": "team,score\n" + rows, "b.csv": "team,score\n" + rows})


def _outputs_complete(out):
    assert sorted(os.listdir(str(out))) == ["ranking.csv", "ranking.html", "ranking.json"]
    doc = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    assert len(doc["models"]) == 3000


def test_reader_gone_before_anything_is_printed(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, COMMAND, _many_models_case(tmp_path), "--out",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                                # the reader is gone at once
    err = proc.stderr.read().decode("utf-8")
    assert proc.wait(timeout=60) == 0, err
    assert err == "", err                              # no INTERNAL ERROR, no "Exception ignored"
    _outputs_complete(out)


def test_piped_into_head(tmp_path):
    """`generalist.py ... | head -1` in a real shell: the outputs are all written, exit 0."""
    out = tmp_path / "out"
    script = '"$0" "$1" "$2" --out "$3" | head -1; echo "status ${PIPESTATUS[0]}" >&2'
    proc = subprocess.run(["bash", "-c", script, sys.executable, COMMAND,
                           _many_models_case(tmp_path), str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("Generalist ranking: 3000 models") and \
        proc.stdout.count("\n") == 1
    assert proc.stderr == "status 0\n", proc.stderr
    _outputs_complete(out)


# ---------------------------------------------------------------- no PyYAML

@pytest.mark.compat
def test_python_without_pyyaml(tmp_path):
    """A stand-in `yaml` module first on the path that fails to import exactly as a missing
    package does: the command names the package and the command that installs it."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "yaml.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'yaml'\", name='yaml')\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(blocker))
    path = write_case(tmp_path / "case", CONFIG, GOOD)
    proc = subprocess.run([sys.executable, COMMAND, path, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "PyYAML" in lines[0] and lines[0].endswith(
        "Install it with: {} -m pip install 'PyYAML>=5.1'".format(sys.executable))
    assert not (tmp_path / "out").exists()


@pytest.mark.compat
def test_version_without_pyyaml(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "yaml.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'yaml'\", name='yaml')\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, COMMAND, "--version"], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, PYTHONPATH=str(blocker)))
    # The configuration reader imports PyYAML at import time: --version too needs it; the
    # answer is the same one line.
    assert proc.returncode == 2 and "pip install 'PyYAML>=5.1'" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_a_package_imported_lazily_and_missing(monkeypatch):
    """main's own handler: a ModuleNotFoundError raised while running (a lazy import) gets the
    same one line, exit 2."""
    from conftest import run_main
    from organizing.commands import generalist as cli
    from organizing.generalist import config

    def missing(*args):
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")
    monkeypatch.setattr(config, "load", missing)
    code, out, err = run_main(cli.main, [os.path.join(os.path.dirname(COMMAND), "generalist.py")])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "pip install 'PyYAML>=5.1'" in err


def test_control_characters_in_a_file_name_are_escaped(tmp_path):
    config = CONFIG.replace("file: a.csv", 'file: "a\\e[31m\\u202e.csv"')
    path = write_case(tmp_path / "case", config, dict(GOOD, **{
        "a\x1b[31m\u202e.csv": "team,score\nA,3\nA,2\n"}))
    proc = run_generalist(path)
    err = assert_refused(proc, "a\\x1b[31m\\u202e.csv, line 3:", "already on")
    assert "\x1b" not in err and "\u202e" not in err


# ---------------------------------------------------------------- never an internal error

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# YAML as PyYAML reads it, numbers as each Python reads them (its int/str limit, or none) and a
# Python without PyYAML are marked compat: CI runs them on the oldest versions too; files that
# are not regular files, --out and the escaping of text depend on no version.

_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10 ** 40, 10 ** 40),
              st.floats(allow_nan=True), st.text(max_size=12),
              st.sampled_from(["a.csv", "b.csv", "team", "score", "rank", "csv", "codalab",
                               "compare", "best", "absent", "error", "1e-6", "/dev/null",
                               "a\x00.csv", "", "."])),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3), max_leaves=8)
_board_keys = st.sampled_from(["name", "file", "format", "table", "model_column",
                               "score_column", "higher_is_better", "rank_column", "duplicates",
                               "missing", "other"])
_boards = st.lists(st.dictionaries(_board_keys, _values, max_size=8), max_size=3)
_configs = st.fixed_dictionaries({"leaderboards": _boards}, optional={
    "eps": _values, "min_leaderboards": _values, "aliases": _values, "x": _values})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_configs)
def test_any_configuration_is_used_or_refused_never_an_internal_error(tmp_path_factory, doc):
    import yaml
    from conftest import run_main
    from organizing.commands import generalist as cli
    folder = tmp_path_factory.mktemp("any")
    write_case(folder, yaml.safe_dump(doc, allow_unicode=True), GOOD)
    code, out, err = run_main(cli.main, [folder / "config.yaml"])
    assert code in (0, 3), err
    assert "INTERNAL ERROR" not in err and len(err) < 20000


_FUZZ_CONFIGS = {
    "csv": CONFIG,
    "codalab": CONFIG.replace("model_column: team\n    score_column: score", "score_column: mAP"),
    "codalab rank": CONFIG.replace("model_column: team\n    score_column: score\n"
                                   "    higher_is_better: true", "rank_column: mAP"),
    "codabench": CONFIG.replace("model_column: team\n    score_column: score",
                                "score_column: mAP\n    duplicates: best\n    missing: absent"),
    "compare": CONFIG.replace("    model_column: team\n    score_column: score\n"
                              "    higher_is_better: true\n", ""),
}
_HEADS = {"csv": "team,score\n", "codalab": "submission_pk,User,b'mAP'\r\n",
          "codalab rank": "submission_pk,User,b'mAP'\r\n",
          "codabench": "Username,fact_sheet_answers,T(1)-mAP\r\n", "compare": "model,rank,miou\n"}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(_FUZZ_CONFIGS)),
       st.text(alphabet="AB1234567890.,-+e\"\n\r ()_ab'\x00\u202e", max_size=80))
def test_any_board_file_is_used_or_refused_never_an_internal_error(tmp_path_factory, kind,
                                                                     body):
    from conftest import run_main
    from organizing.commands import generalist as cli
    folder = tmp_path_factory.mktemp("anyboard")
    write_case(folder, _FUZZ_CONFIGS[kind], dict(GOOD, **{"a.csv": _HEADS[kind] + body}))
    code, out, err = run_main(cli.main, [folder / "config.yaml"])
    assert code in (0, 3), err
    assert "INTERNAL ERROR" not in err
