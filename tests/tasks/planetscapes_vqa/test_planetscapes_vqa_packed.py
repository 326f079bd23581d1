"""The packed VQA reference (scoring/tasks/planetscapes_vqa/packed.py, docs/vqa-packed-format.md):
the same Truth and the same scores as the raw reference, on the sample and on generated ones
(oracle included); pack.py refuses what the scorer refuses; a damaged or foreign pack is the
reference's problem (exit 3, "pack again"), never a traceback nor a wrong score."""
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import zipfile
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vqa_oracle as oracle
from vqa_util import write_vqa_reference
from conftest import (ORGANIZER, ROOT, SEM_REF, VQA_KIT, VQA_REF, pack_either, run_score,
                      score_either)
from scoring.problems import BrokenReference
from scoring.registry import TASKS
from scoring.tasks.planetscapes_vqa import packed
from scoring.tasks.planetscapes_vqa.metric import AccuracyState, summary_scores
from scoring.tasks.planetscapes_vqa.files import UNIT
from scoring.tasks.planetscapes_vqa.normalize import Normalizer
from scoring.tasks.planetscapes_vqa.reference import read_annotations, read_questions

# Reading the packed reference (its JSON, its checksums, its pickled form for the workers) is
# marked compat: CI runs it on the oldest versions too; pack.py and the bundle, the organizer's,
# are left to the current ones.

PACK = os.path.join(ORGANIZER, "pack.py")
SAMPLE_REF = VQA_REF
SAMPLE_SUB = os.path.join(VQA_KIT, "sample_submission")
TASK = TASKS["planetscapes-vqa"]
FIELDS = ("qids", "forms", "disagree", "answer_types", "question_types", "twins")

# Answers that stress the packed encoding and the normalization: non-ASCII, astral, lone
# surrogates (and two that normalization makes adjacent: JSON strings would join them), NUL and
# control characters, JSON and base64 punctuation, separators of every kind.
TRICKY = ["yes", "Yes", "no", "2", "two", "Two.", "a crater", "the crater", "1,000", "1000",
          " yes ", "yes\n", "dont", "5.", "red-brown", "(red)", "", "\u0663", "caf\u00e9",
          "\u706b\u661f", "\U0001f600", "\ud800", "\ud83d.\ude00", "1,2\ud83d;\ude00", '"', "\\",
          ",", ":", "\x00", "a\x00b", "\x1f\t", "+/=", "{}[]", "0010200000", "\u2028", "\ufeff"]


def raw_truth(folder):
    return read_annotations(folder, read_questions(folder), Normalizer())


def packed_truth(folder):
    return packed.read_packed(folder, read_questions(folder))


def same_truth(a, b):
    for field in FIELDS:
        assert getattr(a, field) == getattr(b, field), field


def state_of(results, truth):
    state = AccuracyState()
    state.update("results.json", results, truth)
    return state


def records(answers, ids, confidence="yes", extra=None):
    out = []
    for a, i in zip(answers, ids):
        r = {"answer": a, "answer_confidence": confidence}
        if i is not None:
            r["answer_id"] = i
        if extra:
            r.update(extra)
        out.append(r)
    return out


@st.composite
def references(draw):
    """(annotations, results): disagreeing and unanimous questions, normalization cases,
    duplicated or id-less records (twins), tricky characters, any integer ids."""
    n = draw(st.integers(1, 10))
    qids = draw(st.lists(st.integers(-2 ** 70, 2 ** 70), min_size=n, max_size=n, unique=True))
    answer = st.one_of(st.sampled_from(TRICKY), st.text(max_size=6))
    anns, results = [], {}
    for qid in qids:
        base = draw(answer)
        humans = [base if draw(st.booleans()) else draw(answer) for _ in range(10)]
        ids = list(range(1, 11))
        kind = draw(st.integers(0, 5))
        if kind == 0:    # duplicated answer ids: records may repeat
            ids[draw(st.integers(0, 9))] = draw(st.integers(1, 10))
        elif kind == 1:  # no answer ids at all: records compared on their other fields
            ids = [None] * 10
        anns.append({"question_id": qid, "image_id": draw(st.integers(0, 3)),
                     "question_type": draw(st.one_of(st.sampled_from(
                         ["what is", "how many", "caf\u00e9", "\ud800?", ""]), st.text(max_size=4))),
                     "answer_type": draw(st.sampled_from(["yes/no", "number", "other"])),
                     "multiple_choice_answer": base,
                     "answers": records(humans, ids, draw(st.sampled_from(["yes", "maybe"])),
                                        {"extra": 1} if kind == 2 else None)})
        results[qid] = draw(st.one_of(answer, st.sampled_from(humans)))
    return anns, results


@pytest.mark.compat
@settings(max_examples=120, deadline=None)
@given(references())
def test_packed_equals_raw_and_the_oracle_on_generated_references(tmp_path_factory, case):
    anns, results = case
    base = tmp_path_factory.mktemp("gen")
    raw = write_vqa_reference(str(base / "raw"), anns)
    count, size = packed.pack(raw, str(base / "packed"))
    assert count == len(anns) and size == os.path.getsize(str(base / "packed" / packed.PAYLOAD))
    a, b = raw_truth(raw), packed_truth(str(base / "packed"))
    same_truth(a, b)
    sa, sb = state_of(results, a), state_of(results, b)
    assert (sa.counts, sa.changed, sa.disagreeing) == (sb.counts, sb.changed, sb.disagreeing)
    scores = dict(summary_scores(sb))
    assert scores == dict(summary_scores(sa))
    assert scores["accuracy"] == float(oracle.evaluate(results, anns)["overall"])


@pytest.mark.compat
def test_twins_and_surrogates_round_trip(tmp_path):
    """Explicitly, whatever hypothesis draws: a question with twins (records 1 and 2 equal), one
    with records told apart only by an extra field, and forms with lone surrogates made adjacent
    by normalization."""
    anns = [
        {"question_id": 1, "image_id": 0, "question_type": "what", "answer_type": "other",
         "answers": records(["red"] * 4 + ["b%d" % i for i in range(6)],
                            [1, 1, 3, 4, 5, 6, 7, 8, 9, 10])},
        {"question_id": 2, "image_id": 0, "question_type": "what", "answer_type": "other",
         "answers": [dict(r, n=k % 3) for k, r in enumerate(records(["x"] * 5 + ["y"] * 5,
                                                                     [None] * 10))]},
        {"question_id": 3, "image_id": 1, "question_type": "\ud800", "answer_type": "number",
         "answers": records(["\ud83d.\ude00"] * 5 + ["1,2\ud83d;\ude00"] * 5, range(1, 11))},
    ]
    raw = write_vqa_reference(str(tmp_path / "raw"), anns)
    packed.pack(raw, str(tmp_path / "packed"))
    a, b = raw_truth(raw), packed_truth(str(tmp_path / "packed"))
    same_truth(a, b)
    assert set(b.twins) == {0, 1} and b.twins[0][:2] == (0, 0)
    assert "\ud83d\ude00" in b.forms[2] and len("\ud83d\ude00") == 2  # two code points, kept
    for answer in ("red", "x", "\ud83d\ude00", "12\ud83d\ude00"):
        results = {1: answer, 2: answer, 3: answer}
        assert state_of(results, a).counts == state_of(results, b).counts
        assert dict(summary_scores(state_of(results, b)))["accuracy"] == \
            float(oracle.evaluate(results, anns)["overall"])


@pytest.mark.compat
def test_sample_reference_packed_equals_raw(tmp_path):
    packed.pack(SAMPLE_REF, str(tmp_path / "packed"))
    same_truth(raw_truth(SAMPLE_REF), packed_truth(str(tmp_path / "packed")))


# --- the real commands ----------------------------------------------------------------------

def run_pack(*args):
    return subprocess.run([sys.executable, PACK] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(raw reference, its pack made by pack.py, a results folder): twins, non-ASCII answers,
    disagreeing and unanimous questions, all three answer types."""
    base = tmp_path_factory.mktemp("pair")
    anns, results = [], []
    for k in range(30):
        qid = 920000 + 13 * k
        humans = (["yes"] * 10 if k % 3 == 0 else
                  ["Two", "2", "two.", "3", "\u706b\u661f", "2", "1,000", "two", "x", "2"])
        ids = list(range(1, 11)) if k % 7 else [1, 1, 2, 3, 4, 5, 6, 7, 8, 8]
        anns.append({"question_id": qid, "image_id": k // 4,
                     "question_type": ["is the", "how many", "what caf\u00e9"][k % 3],
                     "answer_type": ["yes/no", "number", "other"][k % 3],
                     "multiple_choice_answer": humans[0], "answers": records(humans, ids)})
        results.append({"question_id": qid, "answer": ["yes", "2", "Two", "\u706b\u661f"][k % 4]})
    raw = write_vqa_reference(str(base / "raw"), anns)
    res = base / "res"
    res.mkdir()
    (res / "results.json").write_text(json.dumps(results))
    proc = run_pack(raw, base / "packed")
    assert proc.returncode == 0, proc.stderr
    assert "Packing 30 questions" in proc.stdout and "Packed 30 questions" in proc.stdout
    return raw, str(base / "packed"), str(res)


def test_pack_writes_the_layout(pair):
    raw, pk, _ = pair
    assert sorted(os.listdir(pk)) == sorted([packed.MANIFEST, packed.PAYLOAD, "questions.json",
                                             "config.yaml"])
    for name in ("questions.json", "config.yaml"):
        with open(os.path.join(raw, name), "rb") as a, open(os.path.join(pk, name), "rb") as b:
            assert a.read() == b.read(), name
    with open(os.path.join(pk, packed.MANIFEST)) as f:
        manifest = json.load(f)
    with open(os.path.join(pk, packed.PAYLOAD), "rb") as f:
        data = f.read()
    assert manifest["format"] == packed.FORMAT and manifest["version"] == packed.VERSION
    assert manifest["task"] == "planetscapes-vqa" and manifest["questions"] == 30
    assert manifest["bytes"] == len(data) and manifest["crc32"] == zlib.crc32(data)
    assert manifest["twins"] == 5 and data.isascii()
    assert TASK.open_reference(pk, {}).layout == "packed"
    assert TASK.open_reference(raw, {}).layout == "raw"


def page_parts(out):
    """(the page up to its run information, with the finishing time removed; the run rows)."""
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    page = re.sub(r"finished \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "", page)
    head, _, run = page.partition("Run information")
    rows = dict(re.findall(r"<td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>", run))
    return head, rows


@pytest.mark.compat
@pytest.mark.parametrize("which", ["pair", "sample"])
def test_command_scores_both_layouts_identically(pair, tmp_path, which):
    if which == "pair":
        raw, pk, res = pair
    else:
        raw, res = SAMPLE_REF, SAMPLE_SUB
        pk = str(tmp_path / "sample-packed")
        assert pack_either([raw, pk], real=False)[0] == 0    # pack.py's main (real in `pair`)
    outs = {}
    for layout, ref in (("raw", raw), ("packed", pk)):
        out = tmp_path / layout
        # The real command on the raw layout; the packed one through the same main.
        code, _, err = score_either(["--ref", ref, "--res", res, "--out", out],
                                    real=layout == "raw")
        assert code == 0, err
        outs[layout] = out
    for name in ("scores.txt", "scores.json"):
        assert (outs["raw"] / name).read_text() == (outs["packed"] / name).read_text()
    (head_raw, run_raw), (head_pk, run_pk) = page_parts(outs["raw"]), page_parts(outs["packed"])
    assert head_raw == head_pk
    assert run_raw.pop("Reference layout") == "raw" and run_pk.pop("Reference layout") == "packed"
    for varying in ("Time taken", "Finished"):
        run_raw.pop(varying), run_pk.pop(varying)
    assert run_raw == run_pk and run_raw


@pytest.mark.compat
def test_pickled_packed_reference_reads_the_same(pair):
    _, pk, _ = pair
    ref = TASK.open_reference(pk, {})
    again = pickle.loads(pickle.dumps(ref))  # what a worker process would get: no data
    assert again._truth is None and again.layout == "packed"
    same_truth(ref.read(UNIT), again.read(UNIT))


def test_pack_refuses_a_non_empty_or_packed_folder(pair, tmp_path):
    raw, pk, _ = pair
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("x")
    proc = run_pack(raw, tmp_path / "out")
    assert proc.returncode == 2 and "not empty" in proc.stderr
    code, _, err = pack_either([pk, tmp_path / "again"], real=False)   # the same main
    assert code == 2 and "already packed" in err


def _break_nine_answers(folder):
    path = os.path.join(folder, "annotations.json")
    doc = json.load(open(path))
    doc["annotations"][4]["answers"].pop()
    json.dump(doc, open(path, "w"))


def _break_question_missing(folder):
    path = os.path.join(folder, "questions.json")
    doc = json.load(open(path))
    doc["questions"].pop(2)
    json.dump(doc, open(path, "w"))


def _break_not_json(folder):
    with open(os.path.join(folder, "annotations.json"), "a") as f:
        f.write("}")


@pytest.mark.parametrize("breaker, phrase", [
    (_break_nine_answers, "ten human answers"), (_break_question_missing, "in annotations.json only"),
    (_break_not_json, "not valid JSON")])
def test_pack_refuses_a_broken_raw_reference_with_the_scorers_message(pair, tmp_path, breaker,
                                                                      phrase):
    raw = shutil.copytree(pair[0], str(tmp_path / "raw"))
    breaker(raw)
    # The real commands for nine answers; the other breakages through the same mains.
    real = breaker is _break_nine_answers
    s_code, _, s_err = score_either(["--ref", raw, "--res", pair[2]], real)
    code, out, err = pack_either([raw, tmp_path / "out"], real)
    assert code == s_code == 3, err
    assert err == s_err and phrase in err
    assert "Traceback" not in err + out
    assert not os.path.exists(str(tmp_path / "out" / packed.MANIFEST))


# --- damaged packs --------------------------------------------------------------------------

def _load(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


def _save(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def _manifest(folder, **changes):
    doc = json.loads(_load(folder, packed.MANIFEST))
    doc.update(changes)
    _save(folder, packed.MANIFEST, json.dumps(doc).encode())


def _flip(position):
    def damage(folder):
        data = bytearray(_load(folder, packed.PAYLOAD))
        data[int(position * (len(data) - 1))] ^= 0x01
        _save(folder, packed.PAYLOAD, bytes(data))
    return damage


def _count(key, delta):
    def damage(folder):
        doc = json.loads(_load(folder, packed.MANIFEST))
        _manifest(folder, **{key: doc[key] + delta})
    return damage


def _other_questions(folder):
    doc = json.loads(_load(folder, "questions.json"))
    doc["questions"][3]["question_id"] = 1
    _save(folder, "questions.json", json.dumps(doc).encode())


DAMAGES = {
    "flip first byte": (_flip(0), "CRC-32"),
    "flip middle byte": (_flip(0.5), "CRC-32"),
    "flip last byte": (_flip(1), "CRC-32"),
    "truncated": (lambda f: _save(f, packed.PAYLOAD, _load(f, packed.PAYLOAD)[:-100]),
                  "truncated"),
    "emptied": (lambda f: _save(f, packed.PAYLOAD, b""), "truncated"),
    "extended": (lambda f: _save(f, packed.PAYLOAD, _load(f, packed.PAYLOAD) + b" "),
                 "truncated or changed"),
    "payload missing": (lambda f: os.remove(os.path.join(f, packed.PAYLOAD)), "cannot be read"),
    "questions + 1": (_count("questions", 1), "questions"),
    "forms - 1": (_count("forms", -1), "forms"),
    "question types + 1": (_count("question_types", 1), "question_types"),
    "twins + 1": (_count("twins", 1), "twins"),
    "disagreeing - 1": (_count("disagreeing", -1), "disagreeing"),
    "count missing": (lambda f: _manifest(f, forms=None), "no count of forms"),
    "unknown version": (lambda f: _manifest(f, version=2), "v1 manifest"),
    "another format": (lambda f: _manifest(f, format="agriculture-vision-packed"), "v1 manifest"),
    "another task": (lambda f: _manifest(f, task="planetscapes-semantic"), "for task"),
    "manifest truncated": (lambda f: _save(f, packed.MANIFEST, _load(f, packed.MANIFEST)[:30]),
                           "v1 manifest"),
    "questions.json of another split": (_other_questions, "not the questions.json packed"),
}


@pytest.mark.compat
@pytest.mark.parametrize("case", sorted(DAMAGES))
def test_damaged_pack_is_the_references_problem(pair, tmp_path, case):
    """Exit 3, the reference named, "pack ... again", the detail; never a traceback. In process
    (cli.main, as score.py calls it) but for one case, through the real command."""
    damage, phrase = DAMAGES[case]
    pk = shutil.copytree(pair[1], str(tmp_path / "pk"))
    damage(pk)
    argv = ["--ref", pk, "--res", pair[2], "--out", str(tmp_path / "out")]
    code, out, err = score_either(argv, real=case == "flip middle byte")
    assert code == 3, err
    assert err.startswith("ERROR: the REFERENCE data"), err
    assert "pack the raw reference again" in err and phrase in err, err
    assert "Traceback" not in out + err
    assert not os.path.exists(str(tmp_path / "out" / "scores.txt"))


@pytest.mark.compat
def test_a_consistent_change_is_caught_by_the_checksum(pair, tmp_path):
    """Two questions' forms swapped, the payload re-serialized to the same size: a valid
    payload, only its CRC-32 tells it from the packed one (a wrong score without it)."""
    pk = shutil.copytree(pair[1], str(tmp_path / "pk"))
    data = _load(pk, packed.PAYLOAD)
    doc = json.loads(data)
    forms = packed._read_strings(doc["forms"], "forms", None)
    records = list(packed._read_ints(doc["records"], "records", None))
    first, last = records[:10], records[-10:]
    assert [forms[i] for i in first] != [forms[i] for i in last]
    records[:10], records[-10:] = last, first
    doc["records"] = packed._ints(records)
    changed = json.dumps(doc, separators=(",", ":")).encode("ascii")
    assert len(changed) == len(data) and changed != data
    _save(pk, packed.PAYLOAD, changed)
    proc = run_score("--ref", pk, "--res", pair[2])
    assert proc.returncode == 3 and "CRC-32" in proc.stderr, proc.stderr


def _rewrite(folder, edit):
    """Edit the payload's document, then make size, CRC and counts agree with it again: only the
    decoder's own checks stand between it and the scorer."""
    doc = json.loads(_load(folder, packed.PAYLOAD))
    edit(doc)
    data = json.dumps(doc, separators=(",", ":")).encode("ascii")
    _save(folder, packed.PAYLOAD, data)
    _manifest(folder, bytes=len(data), crc32=zlib.crc32(data))


def _set_ints(key, change):
    def edit(doc):
        values = list(packed._read_ints(doc[key], key, None))
        doc[key] = packed._ints(change(values))
    return edit


INCONSISTENT = {
    "index beyond the forms": (_set_ints("records", lambda v: v[:-1] + [10 ** 4]), "records"),
    "a record missing": (_set_ints("records", lambda v: v[:-1]), "records holds"),
    "question type beyond its table": (_set_ints("question_type", lambda v: v[:-1] + [200]),
                                       "question_type"),
    "disagree flag 2": (_set_ints("disagree", lambda v: v[:-1] + [2]), "disagree"),
    "duplicated qid": (lambda d: d["qids"].__setitem__(1, d["qids"][0]), "distinct"),
    "qid a string": (lambda d: d["qids"].__setitem__(1, "x"), "distinct"),
    "unknown answer type": (lambda d: d.__setitem__("answer_types", packed._strings(
        ["yes/no", "number", "colour"])), "answer type"),
    "lengths do not add up": (lambda d: d["forms"].__setitem__("utf8", d["forms"]["utf8"][4:]),
                              "lengths"),
    "width 3": (lambda d: d["records"].__setitem__("width", 3), "records: width 3 is none of"),
    "twins malformed": (lambda d: d.__setitem__("twins", [[0, [0, 1]]] + d["twins"][1:]),
                        "twins"),
    "not an object": (lambda d: d.clear(), "the payload has no field 'questions'"),
}


@pytest.mark.compat
@pytest.mark.parametrize("case", sorted(INCONSISTENT))
def test_inconsistent_payload_behind_a_valid_checksum_is_refused(pair, tmp_path, case):
    edit, phrase = INCONSISTENT[case]
    pk = shutil.copytree(pair[1], str(tmp_path / "pk"))
    _rewrite(pk, edit)
    with pytest.raises(BrokenReference) as exc:
        packed_truth(pk)
    message = exc.value.message()
    assert packed.PAYLOAD in message and phrase in message, message
    assert "pack the raw reference again" in message


# --- the bundle -----------------------------------------------------------------------------

def test_bundle_ships_the_packed_vqa_reference_and_scores_like_raw(tmp_path):
    """bundle.sh --competition planetscapes with the organizers' references (here the samples):
    the VQA track's reference_data.zip is packed, like the semantic one, and its scores and its
    dry run equal the raw reference's."""
    import dry_run   # the kit's
    from organizing.bundle.build import build_bundles
    from organizing.bundle.schedule import Schedule
    from organizing.bundle.source import find_sources
    source = find_sources(ROOT)["planetscapes"]
    build = tmp_path / "build"
    build.mkdir()
    lines = []
    built = build_bundles(str(build), source, Schedule(), {"semantic": SEM_REF, "vqa": SAMPLE_REF,
                                                           "panoptic": SEM_REF,
                                                           "instance": SEM_REF},
                          "packed", lines.append, sample=False).built
    assert any("Packing the reference (300 questions)" in line for line in lines), lines
    (vqa_bundle,) = [b.path for b in built if b.name.endswith("-vqa-codabench.zip")]
    with zipfile.ZipFile(vqa_bundle) as zf:
        (tmp_path / "ref.zip").write_bytes(zf.read("reference_data.zip"))
    with zipfile.ZipFile(str(tmp_path / "ref.zip")) as zf:
        names = sorted(zf.namelist())
    assert names == sorted([packed.MANIFEST, packed.PAYLOAD, "questions.json", "config.yaml"])
    scores = {}
    for layout, ref in (("packed", tmp_path / "ref.zip"), ("raw", SAMPLE_REF)):
        out = tmp_path / layout
        # The real command on the bundle's packed zip; the raw sample through the same main.
        code, _, err = score_either(["--ref", ref, "--res", SAMPLE_SUB, "--out", out],
                                    real=layout == "packed")
        assert code == 0, err
        scores[layout] = (out / "scores.txt").read_text()
    assert scores["packed"] == scores["raw"]
    outcomes = []
    assert dry_run.main([SAMPLE_SUB, "--bundle", vqa_bundle, "--quiet"], outcomes) == \
        dry_run.EXIT_OK
    expected = {k: float(v) for k, v in (line.split(":") for line in scores["raw"].splitlines())}
    assert outcomes[-1].scores == pytest.approx(expected, abs=1e-9)


@pytest.mark.compat
def test_oracle_levels_hold_on_a_packed_reference(tmp_path):
    """One known value through pack and read: 2 of 10 humans -> 0.6."""
    anns = [{"question_id": 5, "image_id": 0, "question_type": "q", "answer_type": "other",
             "answers": records(["red", "red"] + ["b%d" % i for i in range(8)], range(1, 11))}]
    raw = write_vqa_reference(str(tmp_path / "raw"), anns)
    packed.pack(raw, str(tmp_path / "pk"))
    state = state_of({5: "red"}, packed_truth(str(tmp_path / "pk")))
    assert state.overall() == (1, 18)  # 18 / 30 = 0.6


def test_pack_reads_back_what_it_wrote(tmp_path, monkeypatch):
    """An encoder that loses information (here: two questions' forms swapped, every count
    unchanged) is caught before the manifest is written: exit 4, no packed.json."""
    encode = packed.encode
    monkeypatch.setattr(packed, "encode", lambda truth: encode(
        truth._replace(forms=truth.forms[1:2] + truth.forms[:1] + truth.forms[2:])))
    with pytest.raises(packed.PackMismatch) as exc:
        packed.pack(SAMPLE_REF, str(tmp_path / "pk"))
    assert exc.value.exit_code == 4 and "Truth.forms" in exc.value.message()
    assert not os.path.exists(str(tmp_path / "pk" / packed.MANIFEST))
