"""The report check: the PDF signature, the page count read without a PDF library (or said not
readable, never guessed), a truncated file."""
import pytest

from conftest import ROOT
from final_package import pdf

pytestmark = pytest.mark.compat


def _check(tmp_path, data):
    path = tmp_path / "r.pdf"
    path.write_bytes(data)
    return pdf.check(str(path), "r.pdf")


def test_the_page_tree_count_wins_over_page_objects(tmp_path):
    data = (b"%PDF-1.6\n1 0 obj<</Type/Pages/Kids[2 0 R 3 0 R]/Count 2>>endobj\n"
            b"2 0 obj<</Type /Page/Parent 1 0 R>>endobj\n3 0 obj<</Type/Page>>endobj\n"
            b"4 0 obj<</Count 7 /Type /Pages>>endobj\n%%EOF\n")
    c = _check(tmp_path, data)
    assert c.status == "pass" and c.figures["pages"] == 7 and c.figures["pdf_version"] == "1.6"


def test_page_objects_are_counted_without_a_page_tree(tmp_path):
    data = b"%PDF-1.3\n" + b"x 0 obj<</Type /Page>>endobj\n" * 3 + b"%%EOF"
    assert _check(tmp_path, data).figures["pages"] == 3


def test_a_hidden_page_count_is_not_guessed(tmp_path):
    c = _check(tmp_path, b"%PDF-1.5\n1 0 obj<</Type/ObjStm/Filter/FlateDecode>>stream\nxx\n"
                         b"endstream\n%%EOF\n")
    assert c.status == "pass" and c.figures["pages"] is None
    assert "page count not readable" in c.summary


def test_not_a_pdf_and_a_truncated_one(tmp_path):
    assert _check(tmp_path, b"<html>report</html>").status == "fail"
    c = _check(tmp_path, b"%PDF-1.4\n1 0 obj<</Type/Pages/Count 1>>")
    assert c.status == "warn" and "truncated" in c.summary
    assert pdf.check(None, "challenge_report.pdf").status == "fail"


def test_the_signature_may_follow_leading_bytes(tmp_path):
    assert _check(tmp_path, b"\xef\xbb\xbf  %PDF-1.7\n<</Type/Page>>\n%%EOF").status == "pass"


def test_the_page_count_is_read_in_linear_time(tmp_path):
    """8 MB of '/Type /Pages' with no '>' and no /Count: the page-tree pattern that ran ahead
    from each one to the next '>' took about 35 minutes on 2 MB; one pass takes 0.3 s. (On
    2 MB with a 10 s bound, work quadratic in the size but done by memcpy at 20 GB/s passed.)
    Run in a child stopped after 20 s, so quadratic work fails fast instead of running on."""
    import os
    import subprocess
    import sys
    path = tmp_path / "r.pdf"
    path.write_bytes(b"%PDF-1.4\n" + b"/Type /Pages " * 640000 + b"/Count 3\n%%EOF\n")
    script = ("import sys, time; sys.path[:0] = [{!r}, {!r}]; from final_package import pdf; "
              "t = time.perf_counter(); c = pdf.check({!r}, 'r.pdf'); "
              "print(c.figures['pages'], time.perf_counter() - t)").format(
        os.path.dirname(os.path.dirname(pdf.__file__)), os.path.join(ROOT, "scoring_program"),
        str(path))
    try:
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("reading the page count of 8 MB took more than 20 s: not linear")
    assert proc.returncode == 0, proc.stderr
    pages, seconds = proc.stdout.split()
    assert pages == "3" and float(seconds) < 5


def test_a_count_of_thousands_of_digits_is_no_page_count(tmp_path):
    """A /Count of 5,000 digits ended verify.py as an internal error (Python 3.11 refuses to
    parse such an int); of more than 7 digits it is no page count."""
    data = b"%PDF-1.4\n<</Type /Pages /Count " + b"9" * 5000 + b">>\n<</Type /Page>>\n%%EOF\n"
    c = _check(tmp_path, data)
    assert c.status == "pass" and c.figures["pages"] == 1
    data = b"%PDF-1.4\n<</Type /Pages /Count 12345678>>\n%%EOF\n"
    assert _check(tmp_path, data).figures["pages"] is None
