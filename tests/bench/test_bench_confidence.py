"""bench/confidence.py end to end at a tiny scale (3 draws a cell, 100 resamples): every part
runs and reports its rows. Not a statistical test: nothing about coverage is asserted."""
import os
import subprocess
import sys

from conftest import ROOT

BENCH = os.path.join(ROOT, "bench", "confidence.py")


def test_confidence_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    # The methods the rows below name (basic-clusters and studentized run the scorer's own
    # code paths too, through the same functions: tests/core/test_spread.py and the tasks'
    # interval tests hold those)
    proc = subprocess.run([sys.executable, BENCH, "--draws", "2", "--resamples", "100",
                           "--sizes", "50", "--methods", "today,percentile-clusters,scorer",
                           "-q", "--report", str(report)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for row in ("| Agriculture-Vision | score | 50 | today | ",
                "| Agriculture-Vision, 5 tiles per field | score | 50 | scorer | ",
                "| Planetscapes semantic | iiou_class | 50 | percentile-clusters | ",
                "| Planetscapes panoptic | pq | 50 | scorer | ",
                "| VQA, 5 questions per image | score | 50 | scorer | ",
                "## 2. Duplicated fields", "| Agriculture-Vision | 200 | today | ",
                "| VQA | 1,000 | today | ", "## 4. Power", "## 5. Dependence"):
        assert row in out, row
    assert report.read_text() == out


def test_the_ap_part_runs_the_instance_tasks_interval():
    """Part ap (not run by default): coverage rows of the instance task's AP and the cost line,
    at a tiny scale."""
    proc = subprocess.run([sys.executable, BENCH, "--parts", "ap", "--draws", "2",
                           "--resamples", "50", "--sizes", "20", "--ap-truth-images", "300",
                           "--ap-cost-images", "50", "-q"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for row in ("## 6. Instance-level labeling: AP, interval by re-scoring", "| ap | 20 | ",
                "| ap50 | 20 | ", "Cost at full test-set scale: 50 images, "):
        assert row in proc.stdout, row


def test_confidence_bench_refuses_an_unknown_method():
    proc = subprocess.run([sys.executable, BENCH, "--methods", "magic"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "unknown method" in proc.stderr


def test_the_other_interval_methods_run():
    """basic-clusters and studentized, left out of the end-to-end run above for time: on 10
    tiles of 5 fields, in this process; the studentized interval is the scorer's without the
    widening, so with every class present they are the same."""
    import importlib.util

    import numpy as np
    sys.path.insert(0, os.path.dirname(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_confidence", BENCH)
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
        rng = np.random.RandomState(3)
        union = rng.randint(50, 100, size=(10, 9))
        rows = np.concatenate([union // 2 + rng.randint(0, 20, size=(10, 9)), union], axis=1)
        clusters = np.arange(10) // 2
        reference = [1] * 9
        basic = bench.basic_clusters(rows, clusters, bench.pops.miou, 100, reference)[0]
        studentized = bench.studentized_clusters(rows, clusters, bench.pops.miou, 100,
                                                 reference)[0]
        scorer = bench.scorer_intervals(rows, clusters, bench.pops.miou, 100, reference)[0]
        assert basic[0] < basic[1] and studentized[0] < studentized[1]
        assert studentized != basic and studentized == scorer
    finally:
        sys.path.remove(os.path.dirname(BENCH))
