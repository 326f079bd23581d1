"""What the bootstrap resamples (scoring/resample_units.py): id prefixes, a task's own rule, the
config rule, and clusters summed and ordered by key whatever the units' order."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from scoring import resample_units as ru
from scoring.problems import BrokenReference


def field_of(unit_id):
    """A task's own cluster key (as Agriculture-Vision's fields): the id less its last part."""
    return unit_id.rsplit("_", 1)[0]


def test_prefixes_of_an_id():
    assert ru.prefix_of(2)("aachen_000012_000019") == "aachen_000012"
    assert ru.prefix_of(1)("aachen_000012_000019") == "aachen"


def test_rules_from_config():
    assert ru.read_rule({}, "field", ("field", "image")) == "field"
    assert ru.read_rule({"resample_by": "prefix  02"}, "image", ("image",)) == "prefix 2"
    assert ru.key_of("image", "image") is None
    assert ru.key_of("field", "image", {"field": field_of}) is field_of
    assert ru.key_of("prefix 1", "image")("a_b_c") == "a"
    with pytest.raises(ValueError):
        ru.key_of("field", "image")      # a rule no task named
    for bad in ("fields", "prefix", "prefix 0", 3, None):
        with pytest.raises(BrokenReference):
            ru.read_rule({"resample_by": bad}, "field", ("field", "image"))


def test_members_index_each_unit_by_its_cluster_in_key_order():
    assert ru.members(["b_1", "a_2", "b_3"], field_of) == (["a", "b"], [1, 0, 1])


def test_collapse_sums_each_cluster_in_key_order():
    ids = ["b_1", "a_2", "b_3", "a_4", "c_5"]
    rows = [(1, 10), (2, 20), (3, 30), (4, 40), (5, 50)]
    keys, table = ru.collapse(ids, np.array(rows, dtype=np.int64), field_of)
    assert keys == ["a", "b", "c"] and table.tolist() == [[6, 60], [4, 40], [5, 50]]
    assert ru.collapse(ids, rows, field_of) == (keys, [(6, 60), (4, 40), (5, 50)])


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 99)), min_size=1, max_size=30),
       st.randoms())
def test_collapse_does_not_depend_on_the_order_of_the_units(units, rnd):
    ids = ["f{}_{}".format(f, i) for i, (f, _) in enumerate(units)]
    rows = np.array([[v, 1] for _, v in units], dtype=np.int64)
    order = list(range(len(ids)))
    rnd.shuffle(order)
    a = ru.collapse(ids, rows, field_of)
    b = ru.collapse([ids[i] for i in order], rows[order], field_of)
    assert a[0] == b[0] and a[1].tolist() == b[1].tolist()
    naive = {}
    for f, v in units:
        naive.setdefault("f{}".format(f), [0, 0])
        naive["f{}".format(f)][0] += v
        naive["f{}".format(f)][1] += 1
    assert a[1].tolist() == [naive[k] for k in sorted(naive)]
