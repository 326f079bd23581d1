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


class PlanetscapesInstanceFixtures:
    """The small test table of planetscapes_util (rock 4, rover 5, probe 7 evaluated; lander 6
    ignored with instances), images of 30 x 40 with instances of 100 px and more, and per image
    a .txt of masks near them (masks/<id>_<n>.png)."""

    size = (30, 40)

    def make_reference(self, root):
        import instance_util
        ids = ["site%d_img%02d" % (k % 2, k) for k in range(9)]
        rng = np.random.RandomState(13)
        images = []
        for i in ids:
            lab, inst, _ = instance_util.scene(rng, *self.size, things=[4, 5, 7], ignored=[6],
                                               stuff=[0, 1, 2, 3, 8], max_instances=6)
            lab[0:12, 0:10] = 4     # one rock of 120 px in every image: AP is defined
            inst[0:12, 0:10] = 4999
            images.append((i, lab, inst))
        instance_util.write_instance_reference(root, planetscapes_util.ROWS, images)
        self._scenes = {i: inst for i, _, inst in images}
        return ids

    def _instances(self, root, image_id):
        from PIL import Image
        return np.array(Image.open(os.path.join(root, "instances", image_id + ".png")))

    def make_submission(self, res_dir, root, ids, seed=0):
        import instance_util
        rng = np.random.RandomState(seed)
        preds = []
        for i in ids:
            inst = self._instances(root, i)
            masks = []
            for v in np.unique(inst[inst >= 1000]):
                m = inst == v
                if rng.rand() < 0.3:
                    m = np.roll(m, rng.randint(-2, 3), axis=int(rng.randint(2)))
                masks.append((m, int(v) // 1000, round(float(rng.rand()), 3)))
            masks.append((rng.rand(*self.size) < 0.1, 5, 0.2))
            preds.append((i, masks))
        instance_util.write_submission(res_dir, preds)

    @staticmethod
    def _edit(res, image_id, change):
        path = os.path.join(res, image_id + ".txt")
        with open(path) as f:
            lines = f.read().splitlines()
        with open(path, "w") as f:
            f.write("\n".join(change(lines)) + "\n")

    def _mask_file(self, res, image_id, arr, mode=None):
        from PIL import Image
        img = Image.fromarray(arr)
        if mode:
            img = img.convert(mode)
        img.save(os.path.join(res, "masks", image_id + "_0.png"))

    @property
    def broken(self):
        ms, edit, mask = self.make_submission, self._edit, self._mask_file
        h, w = self.size

        def build(change=None, after=None):
            def run(res, root, ids):
                ms(res, root, ids)
                if change:
                    edit(res, ids[0], change)
                if after:
                    after(res, ids)
            return run

        def first(line_change):
            return lambda lines: [line_change(lines[0])] + lines[1:]

        def field(k, value):
            return first(lambda line: " ".join(value if j == k else f
                                               for j, f in enumerate(line.split())))

        def many(res, ids):   # 101 per image: each file within its bound, the total not
            for i in ids:
                with open(os.path.join(res, i + ".txt"), "a") as f:
                    f.write("".join("masks/x{}.png 4 0.5\n".format(k) for k in range(101)))

        def too_large(res, ids):
            with open(os.path.join(res, ids[0] + ".txt"), "a") as f:
                f.write(" " * (1 << 20))

        two = np.zeros((h, w), dtype=np.uint8)
        two[0:5, 0:5], two[5:9, 5:9] = 255, 128
        return {
            "inst_missing_txt": (build(after=lambda res, ids: os.remove(
                os.path.join(res, ids[0] + ".txt"))), "missing", "{0}.txt"),
            "inst_bad_line": (build(first(lambda line: line + " extra")), "inst_bad_line",
                              "{0}.txt"),
            "inst_label_not_a_number": (build(field(1, "car")), "inst_bad_line", "{0}.txt"),
            "inst_unknown_label": (build(field(1, "99")), "inst_bad_label", "{0}.txt"),
            "inst_label_without_instances": (build(field(1, "2")), "inst_bad_label", "{0}.txt"),
            "inst_nan_confidence": (build(field(2, "nan")), "inst_bad_confidence", "{0}.txt"),
            "inst_inf_confidence": (build(field(2, "-inf")), "inst_bad_confidence", "{0}.txt"),
            "inst_duplicate_line": (build(lambda lines: lines + lines[:1]),
                                    "inst_duplicate_line", "{0}.txt"),
            "inst_outside": (build(field(0, "../../secret.png")), "inst_path_outside",
                             "{0}.txt"),
            "inst_absolute": (build(field(0, "/etc/passwd")), "inst_path_outside", "{0}.txt"),
            "inst_mask_missing": (build(field(0, "masks/nowhere.png")), "inst_mask_missing",
                                  "{0}.txt"),
            "inst_mask_wrong_size": (build(after=lambda res, ids: mask(
                res, ids[0], np.zeros((h + 1, w), dtype=np.uint8))), "wrong_size", "{0}.txt"),
            "inst_mask_not_binary": (build(after=lambda res, ids: mask(res, ids[0], two)),
                                     "inst_mask_not_binary", "{0}.txt"),
            "inst_mask_palette": (build(after=lambda res, ids: mask(res, ids[0], two, "P")),
                                  "inst_mask_palette", "{0}.txt"),
            "inst_mask_colour": (build(after=lambda res, ids: mask(res, ids[0], two, "RGB")),
                                 "not_single_channel", "{0}.txt"),
            "inst_mask_not_png": (build(after=lambda res, ids: open(os.path.join(
                res, "masks", ids[0] + "_0.png"), "w").write("not a png")), "not_png",
                "{0}.txt"),
            "inst_too_many_in_image": (build(lambda lines: lines + [
                "masks/m{}.png 4 0.5".format(k) for k in range(1001)]), "inst_too_many",
                "{0}.txt"),
            "inst_too_many_in_total": (build(after=many), "inst_too_many", "submission"),
            "inst_txt_too_large": (build(after=too_large), "inst_txt_too_large", "{0}.txt"),
        }


FIXTURES = {
    "agriculture-vision": AgricultureVisionFixtures(),
    "planetscapes-panoptic": PlanetscapesPanopticFixtures(),
    "planetscapes-semantic": PlanetscapesSemanticFixtures(),
    "planetscapes-instance": PlanetscapesInstanceFixtures(),
    "planetscapes-vqa": PlanetscapesVQAFixtures(),
}
