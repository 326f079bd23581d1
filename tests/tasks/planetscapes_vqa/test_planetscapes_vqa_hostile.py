"""The VQA task's inputs, hostile or careless, through the real commands
(score.py, pack.py, the kit's check_results.py): results files that are FIFOs, links to
/dev/zero or to the reference, link loops in the submission folder, integers beyond Python's
int/str limit and floats beyond a double in the results file, in the reference and in a packed
reference; the folders and zips named on the command line. Every refusal: its exit status, one
message naming the kind, no traceback, bounded time and memory."""
import json
import os
import shutil
import subprocess
import sys
import zlib

import pytest

from conftest import pack_either, score_either
from measured import run_measured
from kits_util import session_kits
from vqa_util import write_vqa_reference

# Numbers as each Python reads them (its int/str limit, or none) are marked compat: CI runs them
# on the oldest versions too; files that are not regular files are refused by
# scoring/regular_file.py, held on every version by tests/core/test_regular_file.py.

QIDS = [4100 + 7 * i for i in range(12)]
HUGE = "9" * 5000          # beyond Python's int/str limit (4,300 digits)
LONG = "8" * 4000          # within it, but no question id


def _annotations(qids):
    return [{"question_id": q, "image_id": q // 10, "question_type": "is the",
             "answer_type": "yes/no", "multiple_choice_answer": "yes",
             "answers": [{"answer": "yes", "answer_confidence": "yes", "answer_id": k + 1}
                         for k in range(10)]} for q in qids]


@pytest.fixture
def ref(tmp_path):
    return write_vqa_reference(str(tmp_path / "ref"), _annotations(QIDS))


@pytest.fixture(scope="module")
def pristine_packed_ref(tmp_path_factory):
    """The reference of `ref`, packed once by pack.py's main in this process (the real pack.py
    runs in the tests below); never changed: each test breaks its own copy."""
    base = tmp_path_factory.mktemp("vqa_packed")
    raw = write_vqa_reference(str(base / "ref"), _annotations(QIDS))
    out = str(base / "packed")
    code, _, err = pack_either([raw, out], real=False)
    assert code == 0, err
    return out


@pytest.fixture
def packed_ref(pristine_packed_ref, tmp_path):
    return shutil.copytree(pristine_packed_ref, str(tmp_path / "packed"))


def results_text(entries=None):
    return json.dumps([{"question_id": q, "answer": "yes"} for q in QIDS]
                      if entries is None else entries)


def submission(tmp_path, text=None):
    res = tmp_path / "res"
    res.mkdir()
    (res / "results.json").write_text(results_text() if text is None else text)
    return res


def assert_clean(r, code, *phrases, limit=3000):
    out = r["out"] + r["err"]
    assert r["rc"] == code, out
    assert "Traceback" not in out and "INTERNAL ERROR" not in out, out
    for phrase in phrases:
        assert phrase in r["err"], r["err"]
    assert len(r["err"]) < limit, len(r["err"])
    assert r["wall"] < 30 and r["rss"] < 200, (r["wall"], r["rss"])
    return r["err"]


def score(ref, res, *more):
    return run_measured("score.py", "--ref", ref, "--res", res, *more, timeout=60)


# --- the results file that is not a regular file --------------------------------------------

def _fifo(res, ref):
    os.mkfifo(str(res / "results.json"))


def _dev_zero(res, ref):
    os.symlink("/dev/zero", str(res / "results.json"))


def _link_to_reference(res, ref):
    os.symlink(os.path.join(ref, "annotations.json"), str(res / "results.json"))


def _link_to_good_file(res, ref):
    good = res.parent / "elsewhere.json"
    good.write_text(results_text())
    os.symlink(str(good), str(res / "results.json"))


def _loop(res, ref):
    os.symlink("results.json", str(res / "results.json"))


def _folder(res, ref):
    (res / "results.json").mkdir()


NOT_READ = {
    "a FIFO": (_fifo, "results.json: it is a FIFO (named pipe)"),
    "a link to /dev/zero": (_dev_zero, "results.json: it is a symbolic link"),
    "a link to the reference": (_link_to_reference, "results.json: it is a symbolic link"),
    "a link to a good results file": (_link_to_good_file, "results.json: it is a symbolic link"),
    "a link to itself": (_loop, "results.json: it is a symbolic link"),
}


@pytest.mark.parametrize("case", sorted(NOT_READ))
def test_a_results_file_that_is_not_a_regular_file_is_refused(tmp_path, ref, case):
    make, phrase = NOT_READ[case]
    res = tmp_path / "res"
    res.mkdir()
    make(res, ref)
    r = score(ref, res, "--out", tmp_path / "out")
    err = assert_clean(r, 1, phrase, "links, FIFOs and device files are never followed or read")
    assert "yes" not in err.replace("yes/no", "")          # nothing of the reference
    assert not (tmp_path / "out" / "scores.json").exists()


def test_a_folder_named_like_the_results_is_refused(tmp_path, ref):
    res = tmp_path / "res"
    res.mkdir()
    _folder(res, ref)
    assert_clean(score(ref, res), 1, "results.json: it is a folder, not a file")


@pytest.mark.skipif(not hasattr(os, "mknod"), reason="no mknod")
def test_a_device_file_is_refused(tmp_path, ref):
    res = tmp_path / "res"
    res.mkdir()
    try:
        os.mknod(str(res / "results.json"), 0o020600, os.makedev(1, 5))   # /dev/zero's numbers
    except PermissionError:
        pytest.skip("cannot make a device node here")
    assert_clean(score(ref, res), 1, "results.json: it is a device file")


LOOPS = {
    "a link to itself": lambda res: os.symlink("loop", str(res / "loop")),
    "a link to its folder": lambda res: (res / "a").mkdir() or os.symlink("..", str(res / "a" / "up")),
    "a link to /": lambda res: os.symlink("/", str(res / "root")),
    "a dangling link": lambda res: os.symlink("nowhere", str(res / "gone")),
}


@pytest.fixture
def check_results(tmp_path_factory):
    """The VQA kit's check_results.py, as participants run it (built by bundle.sh --kits)."""
    return os.path.join(session_kits(tmp_path_factory), "vqa", "check_results.py")


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_links_in_the_submission_folder_are_listed_not_followed(tmp_path, ref, case,
                                                                 check_results):
    """A link loop next to the results file was exit 4 (score.py) and a traceback
    (check_results.py): now the file is scored and the link listed as not followed."""
    res = submission(tmp_path)
    LOOPS[case](res)
    r = score(ref, res, "--out", tmp_path / "out")
    assert r["rc"] == 0, r["err"]
    assert "a symbolic link, not followed" in r["out"], r["out"]
    assert (tmp_path / "out" / "scores.json").exists()
    proc = subprocess.run([sys.executable, check_results, str(res), "--questions",
                           os.path.join(ref, "questions.json")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "a symbolic link, not followed" in proc.stdout, proc.stdout


def test_check_results_refuses_a_fifo_in_the_folder(tmp_path, ref, check_results):
    res = tmp_path / "res"
    res.mkdir()
    os.mkfifo(str(res / "results.json"))
    proc = subprocess.run([sys.executable, check_results, str(res), "--questions",
                           os.path.join(ref, "questions.json")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1 and "FIFO" in proc.stderr, proc.stderr


# --- paths named on the command line ------------------------------------------------------------

def test_a_fifo_or_a_device_named_as_the_submission_or_the_reference(tmp_path, ref):
    os.mkfifo(str(tmp_path / "fifo"))
    res = submission(tmp_path)
    for args, phrase in (
            (("--ref", ref, "--res", tmp_path / "fifo"), "fifo is a FIFO (named pipe): neither"),
            (("--ref", ref, "--res", "/dev/zero"), "/dev/zero is a device file: neither"),
            (("--ref", tmp_path / "fifo", "--res", res), "fifo is a FIFO (named pipe): neither"),
            (("--ref", ref, "--res", tmp_path / "nowhere"), "no such file or folder")):
        if "nowhere" in str(args[-1]):   # nothing to block on: the same main, in this process
            code, stdout, err = score_either(args, real=False)
            r = {"rc": code, "out": stdout, "err": err}
        else:
            r = run_measured("score.py", *args, timeout=60)
            assert r["wall"] < 30, r["wall"]
        out = r["out"] + r["err"]
        assert r["rc"] == 2 and phrase in r["err"], out
        assert "Traceback" not in out


def test_worker_form_with_a_fifo_as_res(tmp_path, ref):
    (tmp_path / "input").mkdir()
    os.symlink(ref, str(tmp_path / "input" / "ref"))
    os.mkfifo(str(tmp_path / "input" / "res"))
    r = run_measured("score.py", tmp_path / "input", tmp_path / "output", timeout=60)
    assert r["rc"] == 2 and "FIFO" in r["err"], r["err"]


# --- integers beyond Python's limit and floats beyond a double ------------------------------

def _entries(change):
    entries = [{"question_id": q, "answer": "yes"} for q in QIDS]
    change(entries)
    return entries


RESULTS_NUMBERS = {
    "a list of one 5,000-digit number": ("[" + HUGE + "]", "more than Python reads (4,300)"),
    "a 5,000-digit id in a valid list": (
        results_text()[:-1] + ', {"question_id": ' + HUGE + ', "answer": "yes"}]',
        "an integer of"),
    "a 5,000-digit negative answer": (
        results_text()[:-1] + ', {"question_id": 1, "answer": -' + HUGE + '}]', "4,300"),
    "a file of 1 MB of digits": ("[" + "7" * 1000000 + "]", "4,300"),
    "a 4,000-digit id, unknown": (
        results_text()[:-1] + ', {"question_id": ' + LONG + ', "answer": "yes"}]',
        "question_id <an integer of about 4,000 digits>"),
    "1e400 as an id": (json.dumps(_entries(lambda e: e[0].update(question_id=1e400))),
                       "question_id is a number with a fraction or exponent (Infinity)"),
    "-1e400 as an answer": (json.dumps(_entries(lambda e: e[0].update(answer=-1e400))),
                            "answer is a number with a fraction or exponent (-Infinity)"),
    "NaN as an id": (results_text().replace(str(QIDS[0]), "NaN", 1),
                     "question_id is a number with a fraction or exponent (NaN)"),
}


@pytest.mark.compat
@pytest.mark.parametrize("case", sorted(RESULTS_NUMBERS))
def test_numbers_no_python_reads_are_the_participants_problem(tmp_path, ref, case):
    text, phrase = RESULTS_NUMBERS[case]
    res = submission(tmp_path, text)
    err = assert_clean(score(ref, res), 1, phrase)
    assert HUGE[:200] not in err and LONG[:200] not in err


@pytest.mark.compat
def test_a_4000_digit_question_id_in_the_reference_is_scored(tmp_path):
    """Within the limit: an unusual but valid id (raw and packed give the same scores)."""
    qids = [int(LONG), 5]
    ref = write_vqa_reference(str(tmp_path / "ref"), _annotations(qids))
    res = submission(tmp_path, json.dumps([{"question_id": q, "answer": "yes"} for q in qids]))
    packed = str(tmp_path / "packed")
    assert run_measured("pack.py", ref, packed)["rc"] == 0
    scores = []
    for reference in (ref, packed):
        out = tmp_path / ("out-" + os.path.basename(reference))
        # The real command on the raw reference, the packed one through the same main.
        code, _, err = score_either(["--ref", reference, "--res", res, "--out", out],
                                    real=reference == ref)
        assert code == 0, err
        scores.append((out / "scores.txt").read_text())
    assert scores[0] == scores[1] and "accuracy: 100" in scores[0]


def _replace_in(folder, name, old, new):
    path = os.path.join(folder, name)
    with open(path) as f:
        text = f.read()
    assert old in text
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


REFERENCE_CASES = {
    "questions.json: a 5,000-digit question id": (
        lambda r: _replace_in(r, "questions.json", str(QIDS[0]), HUGE),
        "questions.json: it holds an integer of"),
    "annotations.json: a 5,000-digit answer id": (
        lambda r: _replace_in(r, "annotations.json", '"answer_id": 3', '"answer_id": ' + HUGE),
        "annotations.json: it holds an integer of"),
    "annotations.json: a 4,000-digit question id": (
        lambda r: _replace_in(r, "annotations.json", str(QIDS[0]), LONG),
        "question_id <an integer of about 4,000 digits>"),
    "questions.json: a FIFO": (
        lambda r: os.remove(os.path.join(r, "questions.json")) or
        os.mkfifo(os.path.join(r, "questions.json")), "questions.json: it is a FIFO"),
    "annotations.json: a link to /dev/zero": (
        lambda r: os.remove(os.path.join(r, "annotations.json")) or
        os.symlink("/dev/zero", os.path.join(r, "annotations.json")),
        "annotations.json: it is a device file"),
    "annotations.json: a folder": (
        lambda r: os.remove(os.path.join(r, "annotations.json")) or
        os.mkdir(os.path.join(r, "annotations.json")),
        "annotations.json: it is a folder, not a file"),
}


@pytest.mark.parametrize("case", sorted(REFERENCE_CASES))
def test_a_broken_raw_reference_is_the_organizers_through_both_commands(tmp_path, ref, case):
    breaker, phrase = REFERENCE_CASES[case]
    breaker(ref)
    res = submission(tmp_path)
    scored = assert_clean(score(ref, res), 3, phrase, "REFERENCE")
    assert HUGE[:200] not in scored and LONG[:200] not in scored
    packed = run_measured("pack.py", ref, tmp_path / "packed", timeout=60)
    assert assert_clean(packed, 3, phrase) == scored
    assert not (tmp_path / "packed").exists()


def _manifest_edit(**changes):
    def edit(folder):
        path = os.path.join(folder, "packed.json")
        with open(path) as f:
            text = f.read()
        doc = json.loads(text)
        for key, value in changes.items():
            text = text.replace('"{}": {}'.format(key, doc[key]), '"{}": {}'.format(key, value))
        with open(path, "w") as f:
            f.write(text)
    return edit


def _payload_qid(number):
    """A qid of the payload replaced, size and CRC-32 made to agree: only the reader's checks
    stand between it and the scorer."""
    def edit(folder):
        path = os.path.join(folder, "packed-annotations.json")
        with open(path) as f:
            text = f.read()
        text = text.replace(str(QIDS[0]), number, 1)
        with open(path, "w") as f:
            f.write(text)
        _manifest_edit(bytes=len(text), crc32=zlib.crc32(text.encode("ascii")))(folder)
    return edit


def _special(name, make):
    def edit(folder):
        os.remove(os.path.join(folder, name))
        make(os.path.join(folder, name))
    return edit


PACKED_CASES = {
    "packed.json: a 5,000-digit size": (_manifest_edit(bytes=HUGE), "an integer of"),
    "packed.json: a 4,000-digit size": (_manifest_edit(bytes=LONG),
                                         "packed.json says <an integer of about 4,000 digits>"),
    "packed.json: a 4,000-digit count": (_manifest_edit(questions=LONG), "no count of questions"),
    "packed.json: 1e400 as the size": (_manifest_edit(bytes="1e400"), "states no size"),
    "payload: a 5,000-digit qid": (_payload_qid(HUGE), "an integer of"),
    "payload: 1e400 as a qid": (_payload_qid("1e400"), "distinct integers"),
    "payload: a FIFO": (_special("packed-annotations.json", os.mkfifo), "it is a FIFO"),
    "payload: a link to /dev/zero": (_special("packed-annotations.json",
                                              lambda p: os.symlink("/dev/zero", p)),
                                     "it is a device file"),
    "packed.json: a FIFO": (_special("packed.json", os.mkfifo), "it is a FIFO"),
    "questions.json: a FIFO": (_special("questions.json", os.mkfifo), "it is a FIFO"),
}


@pytest.mark.parametrize("case", sorted(PACKED_CASES))
def test_a_broken_packed_reference_is_the_organizers(tmp_path, packed_ref, case):
    breaker, phrase = PACKED_CASES[case]
    breaker(packed_ref)
    err = assert_clean(score(packed_ref, submission(tmp_path)), 3, phrase, "REFERENCE")
    assert HUGE[:200] not in err and LONG[:200] not in err


def test_a_fifo_in_a_wrapped_reference_is_named(tmp_path, ref):
    """The reference zipped as one folder, its questions.json a FIFO: refused by name."""
    wrapped = tmp_path / "wrap"
    wrapped.mkdir()
    shutil.move(ref, str(wrapped / "ref"))
    _special("questions.json", os.mkfifo)(str(wrapped / "ref"))
    assert_clean(score(str(wrapped), submission(tmp_path)), 3, "questions.json: it is a FIFO")


def test_a_fifo_packed_json_is_not_taken_for_a_raw_reference(tmp_path, packed_ref):
    """packed.json there but not a regular file: refused as the manifest, never skipped."""
    _special("packed.json", os.mkfifo)(packed_ref)
    err = assert_clean(score(packed_ref, submission(tmp_path)), 3, "packed.json")
    assert "annotations.json" not in err
    shutil.rmtree(packed_ref)
