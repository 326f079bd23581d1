"""VQA answer normalization: each official rule and quirk by hand, then the fast implementation
against the naive oracle (tests/support/vqa_oracle.py) on generated answers."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vqa_oracle as oracle
from scoring.tasks.planetscapes_vqa import normalize as fast
from scoring.tasks.planetscapes_vqa.normalize import Normalizer
from scoring.tasks.planetscapes_vqa.tables import ARTICLES, CONTRACTIONS, NUMBER_WORDS, PUNCTUATION

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def naive(text: str) -> str:
    return oracle.rule4_digits_articles(oracle.rule3_punctuation(oracle.rule1_clean(text)))


def full(text: str) -> str:
    """An answer as the scorer compares it when the humans disagree: cleaned, then normalized,
    through a run's caches (Normalizer.full, what the metric reads)."""
    return Normalizer().full[text]


def both(text: str) -> str:
    """The fast result, after checking it equals the naive one."""
    got = full(text)
    assert got == naive(text), text
    return got


def test_tables_are_the_official_ones():
    # Spot checks of the published tables (source: GT-Vision-Lab/VQA vqaEval.py).
    assert PUNCTUATION == (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-",
                           ">", "<", "@", "`", ",", "?", "!")
    assert NUMBER_WORDS["none"] == "0" and NUMBER_WORDS["ten"] == "10" and len(NUMBER_WORDS) == 12
    assert ARTICLES == {"a", "an", "the"}
    assert len(CONTRACTIONS) == 120
    assert CONTRACTIONS["dont"] == "don't" and CONTRACTIONS["somebody'd"] == "somebodyd"


def test_clean_turns_newlines_and_tabs_into_spaces_then_strips():
    assert fast.clean(" two\tdogs\n") == "two dogs"
    assert fast.clean("a\n\nb") == "a  b"  # inner spaces stay (split() removes them later)
    assert oracle.rule1_clean("a\n\nb") == "a  b"


@pytest.mark.parametrize("text, expected", [
    ("Two dogs.", "2 dogs"),
    ("The one", "1"),
    ("none", "0"),
    ("ten", "10"),
    ("eleven", "eleven"),          # only none/zero..ten are number words
    ("an apple", "apple"),
    ("A", ""),                      # an answer made only of an article vanishes
    ("yes!", "yes"),
    ("YES", "yes"),
])
def test_digits_articles_and_case(text, expected):
    assert both(text) == expected


def test_punctuation_is_decided_on_the_original_text():
    # "-" touches no space: it becomes a space; but in "x - y" it is next to a space: deleted.
    assert both("red-white") == "red white"
    assert both("red - white") == "red white"
    # The decision for "-" is taken on the ORIGINAL text: the space made by replacing "/"
    # does not count, so "-" still becomes a space here.
    assert oracle.rule3_punctuation("a/-b") == "a  b"
    assert fast.punctuation("a/-b") == "a  b"
    # ...while a space in the original next to ANY occurrence deletes every occurrence.
    assert fast.punctuation("a-b c -d") == "ab c d"


def test_digit_comma_digit_anywhere_deletes_every_mark():
    assert fast.punctuation("1,000 (red)") == "1000 red"
    assert both("1,000") == "1000"
    assert fast.punctuation("a,b") == "a b"   # no digit on both sides: the comma becomes a space


def test_periods_not_followed_by_a_digit_are_deleted_even_after_a_digit():
    # The official pattern (?!<=\d)(\.)(?!\d) is a lookahead typo: "5." loses its period.
    assert both("5.") == "5"
    assert both("3.5") == "3.5"
    assert both(".5") == ".5"
    assert both("dr. who") == "dr who"


def test_only_the_first_32_periods_go():
    # re.UNICODE (= 32) is passed where the count goes.
    text = "." * 40
    assert fast.punctuation(text) == "." * 8
    assert oracle.rule3_punctuation(text) == "." * 8
    assert fast.punctuation("a." * 33) == "a" * 32 + "a."


def test_digits_are_ascii_digits_only():
    # Arabic-Indic digits: no digit-comma-digit, and a period before one is deleted.
    assert fast.punctuation("\u0663,\u0663") == "\u0663 \u0663"
    assert fast.punctuation("1.\u0665") == "1\u0665"
    assert fast.punctuation("1.5") == "1.5"
    assert both("\u0663,\u0663 (x)") == naive("\u0663,\u0663 (x)")


def test_contractions_table_as_it_is():
    assert both("dont") == "don't"
    assert both("Dont know") == "don't know"
    assert both("don't") == "don't"        # already contracted: unchanged
    assert both("somebody'd") == "somebodyd"
    # Keys with capitals never match after lower-casing.
    assert both("Im") == "im"
    assert both("Ive") == "ive"
    # A contraction key and its value are words: the apostrophe is not punctuation here.
    assert both("whats up") == "what's up"


def test_colon_and_apostrophe_are_not_punctuation():
    assert both("1:30") == "1:30"
    assert both("it's") == "it's"


def test_memo_gives_the_same_strings():
    norm = Normalizer()
    for text in ["Two dogs.", " yes\n", "Two dogs.", "1,000"]:
        assert norm.full[text] == naive(text)
        assert norm.clean[text] == oracle.rule1_clean(text)


ALPHABET = st.sampled_from(list("aeinostdwrTN019 .,;-!?()/\\\"'_\n\t:") +
                           ["\u0663", "\u00e9", "\u0130", "\u00a0", "\u2003"])
WORDS = st.sampled_from(sorted(NUMBER_WORDS) + sorted(ARTICLES) + sorted(CONTRACTIONS) +
                        ["Two", "THE", "Dont", "5.", "1,5", "x.y"])


@st.composite
def answers(draw):
    parts = draw(st.lists(st.one_of(st.text(ALPHABET, max_size=6), WORDS), max_size=6))
    seps = draw(st.lists(st.sampled_from([" ", "", "  ", ",", ".", "-", " - "]),
                         min_size=len(parts), max_size=len(parts)))
    return "".join(p + s for p, s in zip(parts, seps))


@settings(max_examples=600, deadline=None)
@given(answers())
def test_fast_equals_oracle_on_generated_answers(text):
    assert full(text) == naive(text)
    assert fast.punctuation(text) == oracle.rule3_punctuation(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_fast_equals_oracle_on_any_text(text):
    assert full(text) == naive(text)
