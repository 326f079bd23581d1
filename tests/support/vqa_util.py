"""Writing a VQA reference folder for the tests (config.yaml, questions.json, annotations.json)."""
import json
import os


def write_vqa_reference(folder, annotations, questions=None):
    """questions default to one per annotation, with its image id."""
    os.makedirs(folder, exist_ok=True)
    if questions is None:
        questions = [{"image_id": a["image_id"], "question": "?",
                      "question_id": a["question_id"]} for a in annotations]
    with open(os.path.join(folder, "config.yaml"), "w") as f:
        f.write("task: planetscapes-vqa\n")
    with open(os.path.join(folder, "questions.json"), "w") as f:
        json.dump({"questions": questions}, f)
    with open(os.path.join(folder, "annotations.json"), "w") as f:
        json.dump({"annotations": annotations}, f)  # ensure_ascii: lone surrogates as \udXXX
    return folder
