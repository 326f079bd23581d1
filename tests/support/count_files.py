"""Count a folder with the parameter counter in this process (verify.py runs it in a child
process, whose memory its own peak does not show): one JSON line per file listed (path, status,
reason). Run through measured.run_measured, it gives the counter's own time and peak memory.

    python3 tests/support/count_files.py FOLDER
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "scoring_program"), os.path.join(ROOT, "kit")]

from final_package.params import census  # noqa: E402

if __name__ == "__main__":
    for f in census.count_package(sys.argv[1]).files:
        print(json.dumps({"path": f.path, "status": f.status, "reason": f.reason}))
