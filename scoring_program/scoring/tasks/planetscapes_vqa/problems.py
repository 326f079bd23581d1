"""The problems a VQA results file or a VQA reference can have: headline and fix for each.

Messages name question ids and entry numbers, which the participant already has; never an
answer of the reference.
"""
from ...problems import Kind

# Fixes go through str.format (ProblemLog.describe): literal braces are doubled.
RESULTS_NAME = "a .json file holding a JSON list of {{\"question_id\": <int>, \"answer\": <string>}}"

# The submission's files.
NO_RESULTS = Kind(
    "vqa_no_results", "no .json results file found in the submission",
    "put exactly one .json file in the submission: " + RESULTS_NAME + " (in a competition that "
    "scores several tasks on one zip, beside the other tasks' files: make_submission.py --add).")
TWO_RESULTS = Kind(
    "vqa_two_results", ".json files that each could be the results",
    "keep exactly one .json file in the submission.")
NOT_REGULAR = Kind(
    "vqa_not_regular", "results file that is a link or a special file, not a regular file",
    "put the .json file itself in the submission: links, FIFOs and device files are never "
    "followed or read.")
TOO_LARGE = Kind(
    "vqa_too_large", "results file above the size limit",
    "write one short answer per question (VQA answers are a few words).")
NOT_JSON = Kind(
    "vqa_not_json", "results file that is not valid JSON",
    "write it with json.dump(results, f) (UTF-8); look at the line and column given.")
NOT_LIST = Kind(
    "vqa_not_list", "results file that is not a JSON list",
    "the file must be a list: [{{\"question_id\": 1, \"answer\": \"yes\"}}, ...], not an object "
    "or a single value.")
NOT_OBJECT = Kind(
    "vqa_not_object", "entries that are not JSON objects",
    "every entry of the list must be an object {{\"question_id\": <int>, \"answer\": <string>}}.")
NO_QUESTION_ID = Kind(
    "vqa_no_question_id", "entries without a \"question_id\"",
    "give every entry the key \"question_id\" (spelled exactly so).")
BAD_QUESTION_ID = Kind(
    "vqa_bad_question_id", "entries whose question_id is not an integer",
    "write question_id as a JSON integer, as in questions.json (e.g. 458752000, not "
    "\"458752000\" nor 458752000.0).")
NO_ANSWER = Kind(
    "vqa_no_answer", "entries without an \"answer\"",
    "give every entry the key \"answer\" (spelled exactly so) holding a string.")
BAD_ANSWER = Kind(
    "vqa_bad_answer", "entries whose answer is not a string",
    "write every answer as a JSON string, e.g. \"2\" rather than 2, \"yes\" rather than true, "
    "\"\" rather than null.")
DUPLICATED_IDS = Kind(
    "vqa_duplicated_ids", "question ids answered more than once",
    "give exactly one answer per question (the official code silently keeps the last one; this "
    "scorer refuses).")
UNKNOWN_IDS = Kind(
    "vqa_unknown_ids", "question ids that are not test questions",
    "answer only the questions of the test questions.json (check that you used the right split).")
MISSING_IDS = Kind(
    "vqa_missing_ids", "test questions without an answer",
    "answer every question of the test questions.json (an empty string is a valid answer).")
EXTRA_FILE = Kind(
    "vqa_extra_file", "files that are not the results (ignored)",
    "nothing to do if they are intended; they are not scored.", fatal=False)

# The reference (organizers).
REF_FILE = Kind(
    "vqa_ref_file", "reference files missing or unreadable",
    "the reference must hold questions.json and annotations.json in the official VQA formats.")
REF_FORMAT = Kind(
    "vqa_ref_format", "reference entries not in the official VQA format",
    "questions.json: {{\"questions\": [{{image_id, question, question_id}}]}}; annotations.json: "
    "{{\"annotations\": [{{question_id, image_id, question_type, answer_type, "
    "multiple_choice_answer, answers}}]}} with answer_type one of yes/no, number, other.")
REF_ANSWERS = Kind(
    "vqa_ref_answers", "annotations without ten human answers",
    "every annotation needs exactly ten answers, each an object with a string \"answer\".")
REF_DUPLICATE = Kind(
    "vqa_ref_duplicate", "question ids listed twice in the reference",
    "each question_id must appear once in questions.json and once in annotations.json.")
REF_DISAGREE = Kind(
    "vqa_ref_disagree", "questions.json and annotations.json disagree",
    "both files must list the same question ids with the same image ids: were they taken from "
    "the same split?")
REF_EMPTY = Kind(
    "vqa_ref_empty", "reference without a single question",
    "questions.json and annotations.json must list the test questions.")
REF_PACKED = Kind(
    "vqa_ref_packed", "packed reference damaged, incomplete or not this version's",
    "pack the raw reference again (python3 organizer/pack.py RAW_DIR NEW_DIR) and replace "
    "the packed one with the new folder, whole; never edit a packed reference by hand.")
