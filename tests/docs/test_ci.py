"""The oldest supported versions (CI's last step: `pytest -m compat` on the worker image's
Python 3.7, numpy 1.16, Pillow 6.1 and PyYAML 5.1) run the tests whose result can differ with
them: decoding, numpy's arithmetic and random streams, YAML, JSON numbers, and the scorer, the
kits and the dry run end to end. A module that loses its mark leaves that part untested where
participants and the worker run it. (The anchor, which cannot be collected with the newest
numpy, is held by .ci/run: that step fails unless it passed there.)"""
import subprocess
import sys

from conftest import ROOT

# What each file stands for in the selection.
MUST_RUN_ON_THE_OLDEST = {
    "tests/core/test_pillow_array.py": "Pillow's decoding into arrays",
    "tests/core/test_png_label_checks.py": "a prediction PNG's checks",
    "tests/core/test_hostile_inputs.py": "hostile zips and bit depths",
    "tests/core/test_safe_yaml.py": "YAML",
    "tests/core/test_reference_config.py": "config.yaml through score.py",
    "tests/core/test_bounded_json.py": "JSON numbers and Python's int/str limit",
    "tests/core/test_bootstrap.py": "numpy's random streams",
    "tests/core/test_spread.py": "the intervals' arithmetic",
    "tests/core/test_command.py": "score.py end to end",
    "tests/core/test_worker_failures.py": "exceptions pickled across the pool",
    "tests/core/test_task_contract.py": "every task's contract",
    "tests/tasks/agrivision/test_agrivision_metric.py": "Agriculture-Vision's counts",
    "tests/tasks/agrivision/test_agrivision_reports.py": "Agriculture-Vision end to end",
    "tests/tasks/agrivision/test_agrivision_packed.py": "its packed reference",
    "tests/tasks/planetscapes_semantic/test_planetscapes_semantic_metric.py": "IoU and iIoU",
    "tests/tasks/planetscapes_semantic/test_planetscapes_semantic_command.py": "semantic end to end",
    "tests/tasks/planetscapes_semantic/test_planetscapes_semantic_edges.py": "8/16-bit edges",
    "tests/tasks/planetscapes_vqa/test_planetscapes_vqa_normalize.py": "Unicode, per Python",
    "tests/tasks/planetscapes_vqa/test_planetscapes_vqa_command.py": "VQA end to end",
    "tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py": "its packed reference",
    "tests/kits/test_agrivision_kit.py": "the Agriculture-Vision kit",
    "tests/kits/test_planetscapes_vqa_kit.py": "the VQA kit",
    "tests/kits/test_merged_kit.py": "the merged kit",
    "tests/kits/test_check_final.py": "the final package's check",
    "tests/kits/test_validation_dry_run.py": "each kit's validation dry run",
    "tests/kits/test_dry_run.py": "the dry run participants run",
    "tests/generalist/test_generalist.py": "the generalist ranking",
    "tests/compare/test_compare.py": "compare.py's intervals",
    "tests/verify/test_params.py": "the parameter counter's readers",
    "tests/verify/test_verify_command.py": "verify.py end to end",
}


def compat_selection(session):
    """The test files `-m compat` selects: read from this session's own collection when it
    collected the whole suite (each xdist worker collects all of it), else from a collection
    of its own (a subprocess, about 5 s)."""
    files = {item.nodeid.split("::")[0] for item in session.items}
    if len(files) > 50 and "tests/docs/test_readme_commands.py" in files:
        return {item.nodeid.split("::")[0] for item in session.items
                if item.get_closest_marker("compat") is not None}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "compat",
                          "-p", "no:cacheprovider", "tests"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120).stdout
    return {line.split("::")[0] for line in out.splitlines() if "::" in line}


def test_the_oldest_versions_run_every_part_that_can_differ(request):
    selected = compat_selection(request.session)
    missing = {path: what for path, what in MUST_RUN_ON_THE_OLDEST.items() if path not in selected}
    assert not missing, "no longer marked compat: {}".format(missing)
