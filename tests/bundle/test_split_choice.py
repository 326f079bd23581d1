"""The split's rule (organizing/split/choose.py): the groups with the lowest SHA-256 numbers of
'<seed>:<group>' are private, round(share x groups) of them, at least 1 and at most all but one;
no group on both sides; the same answer for any unit order; per task, the group the intervals
resample."""
import hashlib

import pytest
from hypothesis import given, settings, strategies as st

from conftest import AV_REF, SEM_REF, VQA_REF  # noqa: E402

from organizing.split import choose, document, grouping  # noqa: E402
from scoring import reference_setup  # noqa: E402


def naive_private_groups(units, key, share, seed):
    """The rule as docs/bundle.md states it, written out plainly."""
    groups = sorted(set(key(u) for u in units))
    numbered = []
    for g in groups:
        digest = hashlib.sha256(("%d:%s" % (seed, g)).encode("utf-8")).hexdigest()
        numbered.append((int(digest, 16), g))
    numbered.sort()
    k = int(round(share * len(groups)))
    k = max(1, min(len(groups) - 1, k))
    return sorted(g for _, g in numbered[:k])


def toy(units, key=lambda u: u.split("_")[0]):
    return grouping.Grouping(sorted(units), key, "field", "images", "fields")


unit_lists = st.lists(st.tuples(st.sampled_from("ABCDEFGHIJ"), st.integers(0, 5)),
                      min_size=2, max_size=40, unique=True).map(
    lambda pairs: ["F{}_{}".format(a, b) for a, b in pairs]).filter(
    lambda us: len(set(u.split("_")[0] for u in us)) >= 2)


@settings(max_examples=60, deadline=None)
@given(unit_lists, st.floats(0.01, 0.99), st.integers(0, 10 ** 6), st.randoms())
def test_the_rule_as_documented_whatever_the_order(units, share, seed, rnd):
    shuffled = list(units)
    rnd.shuffle(shuffled)
    split = choose.choose(toy(shuffled), share, seed)
    key = lambda u: u.split("_")[0]  # noqa: E731
    assert split.private_groups == naive_private_groups(units, key, share, seed)
    assert sorted(split.public + split.private) == sorted(units)
    assert not set(map(key, split.public)) & set(map(key, split.private))
    assert split == choose.choose(toy(sorted(units)), share, seed)


def test_shares_outside_the_open_interval_and_one_group_are_refused():
    for share in (0, 1, -0.5, 2):
        with pytest.raises(ValueError):
            choose.choose(toy(["A_1", "B_1"]), share, 0)
    with pytest.raises(ValueError, match="at least 2"):
        choose.choose(toy(["A_1", "A_2"]), 0.5, 0)
    assert choose.private_count(10, 0.04) == 1 and choose.private_count(10, 0.97) == 9


def test_a_group_keeps_its_side_when_the_test_set_grows():
    units = ["F{}_{}".format(g, i) for g in range(30) for i in range(3)]
    before = choose.choose(toy(units), 0.5, 3)
    after = choose.choose(toy(units + ["F99_0"]), 0.5, 3)
    moved = set(before.private_groups) ^ set(after.private_groups)
    assert len(moved) <= 2   # at most the new group and the one it displaced at the margin


def _grouping(ref, **config):
    setup = reference_setup.configure(ref)
    if config:
        setup = setup._replace(intervals=setup.intervals._replace(**config))
    return grouping.grouping_of(setup, setup.open())


def test_each_task_splits_by_what_its_intervals_resample():
    av = _grouping(AV_REF)
    assert av.rule == "field" and av.group_noun == "fields"
    assert av.key("4BPJ7VPOL_18780-17084-19292-17596") == "4BPJ7VPOL"
    assert len(set(map(av.key, av.units))) == 10 and len(av.units) == 40
    # intervals by image: a field's tiles still stay on one side (the task's split_by)
    assert _grouping(AV_REF, by="image").key("A_1-2-3-4") == "A"
    sem = _grouping(SEM_REF)
    assert sem.rule == "image" and sem.key(sem.units[0]) == sem.units[0]
    assert _grouping(SEM_REF, by="prefix 1").key("aachen_000001_000019") == "aachen"
    vqa = _grouping(VQA_REF)
    assert vqa.unit_noun == "questions" and vqa.group_noun == "images"
    assert len(set(map(vqa.key, vqa.units))) < len(vqa.units)


def test_split_json_selects_a_part_and_checks_its_reference(tmp_path):
    split = choose.choose(_grouping(AV_REF), 0.3, 5)
    path = tmp_path / "split.json"
    path.write_text(document.to_json(split, "agriculture-vision"))
    doc = document.read(str(path))
    assert document.part_units(doc, "private") == set(split.private)
    assert document.part_units(doc, "all") == set(split.public + split.private)
    document.check_reference(doc, split.public + split.private)
    with pytest.raises(document.UsageError):
        document.check_reference(doc, split.public)
    with pytest.raises(document.UsageError):
        document.part_units(doc, "secret")
    path.write_text("{}")
    with pytest.raises(document.UsageError, match="split.json"):
        document.read(str(path))
