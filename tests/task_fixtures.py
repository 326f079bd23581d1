"""Per-task fixtures for the contract test (test_task_contract.py): for every registered task, how
to build a small reference, a valid submission and the participant mistakes of its format.

A task added to scoring.tasks.TASKS without an entry here fails the contract test: every task is
held to the same rules.

Each entry provides:
    make_reference(root) -> list of unit ids          a small reference in root
    make_submission(res_dir, root, ids, seed)         a valid submission (random predictions)
    broken: {name: builder(res_dir, root, ids)}       submissions with one mistake each
"""
import numpy as np

import broken_cases
from rawdata import random_image, write_reference


class AgricultureVisionFixtures:
    size = (24, 24)

    def make_reference(self, root):
        ids = ["FLD%03d_%d-0-%d-24" % (k // 3, 24 * k, 24 * k + 24) for k in range(9)]
        rng = np.random.RandomState(11)
        for i in ids:
            b, m, labels, storm, _ = random_image(rng, *self.size, density=0.5)
            write_reference(root, i, b, m, labels, storm)
        return ids

    def make_submission(self, res_dir, root, ids, seed=0):
        broken_cases.good(res_dir, ids, self.size)

    @property
    def broken(self):
        return {name: (lambda builder: lambda res, root, ids: builder(res, ids, self.size))(b)
                for name, (b, _, _) in broken_cases.CASES.items()}


FIXTURES = {
    "agriculture-vision": AgricultureVisionFixtures(),
}
