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
import planetscapes_util
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


class PlanetscapesSemanticFixtures:
    """The small test table of planetscapes_util (ids 0-8, so broken_cases' valid predictions,
    values 0-8, are valid here too, and its value 9 is not a label id)."""

    size = (24, 24)

    def make_reference(self, root):
        ids = ["site%d_img%02d" % (k % 2, k) for k in range(9)]
        rng = np.random.RandomState(12)
        images = planetscapes_util.random_images(rng, planetscapes_util.ROWS, len(ids), *self.size)
        planetscapes_util.write_reference(root, planetscapes_util.ROWS,
                                          [(i, lab, inst) for i, (lab, inst, _) in zip(ids, images)])
        return ids

    def make_submission(self, res_dir, root, ids, seed=0):
        broken_cases.good(res_dir, ids, self.size)

    @property
    def broken(self):
        return {name: (lambda builder: lambda res, root, ids: builder(res, ids, self.size))(b)
                for name, (b, _, _) in broken_cases.CASES.items()}


FIXTURES = {
    "agriculture-vision": AgricultureVisionFixtures(),
    "planetscapes-semantic": PlanetscapesSemanticFixtures(),
}
