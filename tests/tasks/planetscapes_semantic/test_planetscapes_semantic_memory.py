"""The readers keep freed memory for the next image (reference.keep_freed_memory): with glibc's
default thresholds, temporaries above its trim threshold are handed back to the system after
every image and faulted in again for the next one."""
import platform
import subprocess
import sys

import pytest

from conftest import PROGRAM

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

CHURN = """
import resource, sys
import numpy as np
sys.path.insert(0, {program!r})
from scoring.tasks.planetscapes_semantic import reference

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def churn():
    # as an image does: several large temporaries alive at once, then all freed
    start = faults()
    for _ in range(8):
        arrays = [np.empty(12 << 20, dtype=np.uint8) for _ in range(3)]
        for a in arrays:
            a.fill(1)
        del arrays, a
    return faults() - start

churn()  # the first round always faults its memory in
if {keep}:
    reference.keep_freed_memory()
    churn()
print(churn())
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc thresholds")
def test_freed_memory_is_kept_for_the_next_image():
    def faults(keep):
        out = subprocess.run([sys.executable, "-c", CHURN.format(program=PROGRAM, keep=keep)],
                             capture_output=True, text=True, check=True).stdout
        return int(out.split()[-1])

    default, kept = faults(False), faults(True)
    # 8 rounds of 36 MB: re-faulted each round by default (thousands of faults, fewer with
    # transparent huge pages), hardly at all once the memory is kept.
    assert kept * 10 < default, (kept, default)
