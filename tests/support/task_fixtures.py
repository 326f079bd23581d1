"""Per-task fixtures for the contract test (test_task_contract.py): for every registered task, how
to build a small reference, a valid submission and the participant mistakes of its format.

A task added to scoring.tasks.TASKS without an entry here fails the contract test: every task is
held to the same rules.

Each entry provides:
    make_reference(root) -> list of unit ids          a small reference in root
    make_submission(res_dir, root, ids, seed)         a valid submission (random predictions)
    broken: {name: (builder(res_dir, root, ids), kind code, name part)}
                                                      submissions with one mistake each, the
                                                      problem kind each must be reported as and
                                                      (part of) the name it must be reported
                                                      under ("{0}": the first unit id)
"""
import json
import os
import random
import shutil

import numpy as np

import broken_cases
import panoptic_util
import planetscapes_util
from agrivision_data import random_image, write_reference


class PngLabelFixtures:
    """For a task that takes one label PNG per image (both image tasks): broken_cases' valid
    predictions (values 0 to classes - 1) and its mistakes apply to it. A new task of that
    kind subclasses this, sets `classes` if it has fewer than 9 and writes make_reference."""

    size = (24, 24)
    classes = 9

    def make_submission(self, res_dir, root, ids, seed=0):
        broken_cases.good(res_dir, ids, self.size, classes=self.classes)

    @property
    def broken(self):
        def bound(builder):
            return lambda res, root, ids: builder(res, ids, self.size, classes=self.classes)
        return {name: (bound(b), broken_cases.KINDS[name], shown)
                for name, (b, shown, _) in broken_cases.CASES.items()}


class AgricultureVisionFixtures(PngLabelFixtures):
    def make_reference(self, root):
        ids = ["FLD%03d_%d-0-%d-24" % (k // 3, 24 * k, 24 * k + 24) for k in range(9)]
        rng = np.random.RandomState(11)
        for i in ids:
            b, m, labels, storm, _ = random_image(rng, *self.size, density=0.5)
            write_reference(root, i, b, m, labels, storm)
        return ids


class PlanetscapesSemanticFixtures(PngLabelFixtures):
    """The small test table of planetscapes_util (ids 0-8, so broken_cases' valid predictions,
    values 0-8, are valid here too, and its value 9 is not a label id)."""

    def make_reference(self, root):
        ids = ["site%d_img%02d" % (k % 2, k) for k in range(9)]
        rng = np.random.RandomState(12)
        images = planetscapes_util.random_images(rng, planetscapes_util.ROWS, len(ids), *self.size)
        planetscapes_util.write_reference(root, planetscapes_util.ROWS,
                                          [(i, lab, inst) for i, (lab, inst, _) in zip(ids, images)])
        return ids


class PlanetscapesVQAFixtures:
    """Question ids stand for the units in the leak check (a VQA submission is one unit, its
    results file; per-unit data would be per-question data): distinctive 9-digit ids."""

    def make_reference(self, root):
        rng = random.Random(7)
        pool = ["yes", "no", "2", "two", "Red", "red.", "a crater", "dont know", "1,000"]
        anns, questions = [], []
        for k in range(40):
            qid, image = 731904117 + 7919 * k, 5000 + k // 3
            humans = [rng.choice(pool) for _ in range(10)] if k % 4 else ["yes"] * 10
            anns.append({"question_id": qid, "image_id": image,
                         "question_type": ["is the", "how many", "what color"][k % 3],
                         "answer_type": ["yes/no", "number", "other"][k % 3],
                         "multiple_choice_answer": humans[0],
                         "answers": [{"answer": a, "answer_confidence": "yes", "answer_id": i + 1}
                                     for i, a in enumerate(humans)]})
            questions.append({"image_id": image, "question": "What?", "question_id": qid})
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, "config.yaml"), "w") as f:
            f.write("task: planetscapes-vqa\n")
        with open(os.path.join(root, "questions.json"), "w") as f:
            json.dump({"questions": questions}, f)
        with open(os.path.join(root, "annotations.json"), "w") as f:
            json.dump({"annotations": anns}, f)
        return [str(q["question_id"]) for q in questions]

    @staticmethod
    def _write(res_dir, content, name="results.json"):
        os.makedirs(res_dir, exist_ok=True)
        with open(os.path.join(res_dir, name), "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))

    def _entries(self, ids, seed=0):
        rng = random.Random(seed)
        return [{"question_id": int(i), "answer": rng.choice(["yes", "2", "red", "Two"])}
                for i in ids]

    def make_submission(self, res_dir, root, ids, seed=0):
        self._write(res_dir, self._entries(ids, seed))

    @property
    def broken(self):
        w, e = self._write, self._entries

        def two_files(res, root, ids):
            w(res, e(ids))
            w(os.path.join(res, "old"), e(ids))
        return {
            "vqa_not_json": (lambda res, root, ids: w(res, "[{\"question_id\": 1,"),
                             "vqa_not_json", "results.json"),
            "vqa_not_list": (lambda res, root, ids: w(res, {"results": e(ids)}),
                             "vqa_not_list", "results.json"),
            "vqa_not_object": (lambda res, root, ids: w(res, e(ids) + [[1, "yes"]]),
                               "vqa_not_object", "entry 41"),
            "vqa_bad_id": (lambda res, root, ids: w(res, [dict(x, question_id=str(x["question_id"]))
                                                          for x in e(ids)]),
                           "vqa_bad_question_id", "entry 01"),
            "vqa_bad_answer": (lambda res, root, ids: w(res, [dict(x, answer=2) for x in e(ids)]),
                               "vqa_bad_answer", "question_id {0}"),
            "vqa_missing": (lambda res, root, ids: w(res, e(ids)[1:]),
                            "vqa_missing_ids", "question_id {0}"),
            "vqa_duplicated": (lambda res, root, ids: w(res, e(ids) + e(ids)[:1]),
                               "vqa_duplicated_ids", "question_id {0}"),
            "vqa_unknown": (lambda res, root, ids: w(res, e(ids) + [{"question_id": 3,
                                                                     "answer": "no"}]),
                            "vqa_unknown_ids", "question_id 3"),
            "vqa_no_json": (lambda res, root, ids: w(res, "yes", name="results.txt"),
                            "vqa_no_results", "submission"),
            "vqa_two_json": (two_files, "vqa_two_results", "old/results.json"),
            "vqa_too_large": (lambda res, root, ids: w(res, [dict(x, answer="y" * 40000)
                                                             for x in e(ids)]),
                              "vqa_too_large", "results.json"),
        }


class PlanetscapesPanopticFixtures:
    """panoptic_util's table and scenes: predictions.json + predictions/<id>.png."""

    size = (24, 32)

    def make_reference(self, root):
        ids = ["site%d_img%02d" % (k % 2, k) for k in range(9)]
        rng = np.random.RandomState(13)
        scenes = [panoptic_util.scene(rng, panoptic_util.ROWS, *self.size) for _ in ids]
        panoptic_util.write_reference(root, panoptic_util.ROWS,
                                      [(i, s[0]) for i, s in zip(ids, scenes)])
        return ids

    def _preds(self, ids, seed=0):
        rng = np.random.RandomState(100 + seed)
        out = []
        for i in ids:
            _, seg, cats = panoptic_util.scene(rng, panoptic_util.ROWS, *self.size)
            out.append((i, seg, cats))
        return out

    def make_submission(self, res_dir, root, ids, seed=0):
        panoptic_util.write_submission(res_dir, self._preds(ids, seed))

    @staticmethod
    def _edit(res, change):
        path = os.path.join(res, "predictions.json")
        with open(path) as f:
            doc = json.load(f)
        change(doc["annotations"])
        with open(path, "w") as f:
            json.dump(doc, f)

    @property
    def broken(self):
        size = self.size

        def build(edit=None, preds=None, after=None):
            def make(res, root, ids):
                p = self._preds(ids)
                if preds:
                    p = preds(p)
                panoptic_util.write_submission(res, p)
                if edit:
                    self._edit(res, edit)
                if after:
                    after(res, ids)
            return make

        def first_segment(anns):
            return anns[0]["segments_info"]

        def write(res, name, content):
            with open(os.path.join(res, name), "w") as f:
                f.write(content)

        def image(res, ids, arr, mode):
            from PIL import Image
            Image.fromarray(arr, mode).save(os.path.join(res, "predictions", ids[0] + ".png"))

        def unlisted(p):
            seg = p[0][1].copy()
            seg[0, 0] = 16777215
            return [(p[0][0], seg, p[0][2])] + p[1:]

        def unused(p):
            cats = dict(p[0][2])
            cats[16777214] = 2
            return [(p[0][0], p[0][1], cats)] + p[1:]
        return {
            "pan_not_json": (build(after=lambda res, ids: write(res, "predictions.json", "{")),
                             "pan_not_json", "predictions.json"),
            "pan_bad_json": (build(after=lambda res, ids: write(res, "predictions.json",
                                                                "{\"annotations\": 3}")),
                             "pan_bad_json", "predictions.json"),
            "pan_no_annotation": (build(edit=lambda a: a.pop(0)), "pan_no_annotation", "{0}"),
            "pan_image_twice": (build(edit=lambda a: a.append(dict(a[0]))), "pan_image_twice",
                                "{0}"),
            "pan_file_name": (build(edit=lambda a: a[0].update(file_name="x.png")),
                              "pan_file_name", "{0}"),
            "pan_segment_id": (build(edit=lambda a: first_segment(a).append(
                {"id": 0, "category_id": 2})), "pan_segment_id", "{0}"),
            "pan_segment_twice": (build(edit=lambda a: first_segment(a).append(
                dict(first_segment(a)[0]))), "pan_segment_twice", "{0}"),
            "pan_category_ignored": (build(edit=lambda a: first_segment(a)[0].update(
                category_id=6)), "pan_category", "{0}"),
            "pan_category_unknown": (build(edit=lambda a: first_segment(a)[0].update(
                category_id=99)), "pan_category", "{0}"),
            "pan_too_many_segments": (build(edit=lambda a: a[0].update(segments_info=[
                {"id": k + 1, "category_id": 2} for k in range(2049)])),
                "pan_too_many_segments", "{0}"),
            "pan_unlisted_segment": (build(preds=unlisted), "pan_unlisted_segment",
                                     "predictions/{0}.png"),
            "pan_unused_segment": (build(preds=unused), "pan_unused_segment",
                                   "predictions/{0}.png"),
            "pan_not_rgb": (build(after=lambda res, ids: image(
                res, ids, np.zeros(size, dtype=np.uint8), "L")), "pan_not_rgb",
                "predictions/{0}.png"),
            "pan_rgba": (build(after=lambda res, ids: image(
                res, ids, np.zeros(size + (4,), dtype=np.uint8), "RGBA")), "pan_not_rgb",
                "predictions/{0}.png"),
            "wrong_size": (build(after=lambda res, ids: image(
                res, ids, np.zeros((size[0] + 1, size[1], 3), dtype=np.uint8), "RGB")),
                "wrong_size", "predictions/{0}.png"),
            "not_png": (build(after=lambda res, ids: write(
                os.path.join(res, "predictions"), ids[0] + ".png", "text")), "not_png",
                "predictions/{0}.png"),
            "missing": (build(after=lambda res, ids: os.remove(
                os.path.join(res, "predictions", ids[0] + ".png"))), "missing",
                "predictions/{0}.png"),
            "pan_no_json": (build(after=lambda res, ids: os.remove(
                os.path.join(res, "predictions.json"))), "pan_no_json", "submission"),
            "pan_two_json": (build(after=lambda res, ids: (
                shutil.copytree(os.path.join(res, "predictions"), os.path.join(res, "old")),
                shutil.copy(os.path.join(res, "predictions.json"),
                            os.path.join(res, "old.json")))), "pan_two_json", "old.json"),
            "pan_no_folder": (build(after=lambda res, ids: os.rename(
                os.path.join(res, "predictions"), os.path.join(res, "pngs"))),
                "pan_no_folder", "predictions.json"),
        }


FIXTURES = {
    "agriculture-vision": AgricultureVisionFixtures(),
    "planetscapes-panoptic": PlanetscapesPanopticFixtures(),
    "planetscapes-semantic": PlanetscapesSemanticFixtures(),
    "planetscapes-vqa": PlanetscapesVQAFixtures(),
}
