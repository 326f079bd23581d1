"""Run cityscapesScripts' evalInstanceLevelSemanticLabeling in this Python (an environment with
cityscapesscripts and numpy < 2.4) on the files given; print JSON: the evaluation call's wall
and CPU seconds and every score. Used by bench/planetscapes_instance.py.

    python bench/cityscapes_instance_anchor.py GT_LIST_FILE PRED_ROOT WORK_DIR
"""
import json
import os
import sys
import time


def main(argv):
    gt_list, pred_root, work = argv
    import cityscapesscripts.evaluation.evalInstanceLevelSemanticLabeling as ev
    with open(gt_list) as f:
        gts = f.read().split()
    preds = [os.path.join(pred_root, os.path.basename(g).replace("_gtFine_instanceIds.png",
                                                                 ".txt")) for g in gts]
    args = ev.args
    args.quiet, args.JSONOutput = True, False
    args.gtInstancesFile = os.path.join(work, "gtInstances.json")
    args.predictionPath = os.path.abspath(pred_root)
    if os.path.exists(args.gtInstancesFile):
        os.remove(args.gtInstancesFile)
    os.chdir(work)
    wall, cpu = time.time(), time.process_time()
    out = ev.evaluateImgLists(preds, gts, args)
    wall, cpu = time.time() - wall, time.process_time() - cpu
    scores = {"ap": out["averages"]["allAp"], "ap50": out["averages"]["allAp50%"]}
    for name, d in out["averages"]["classes"].items():
        scores["ap_" + name] = d["ap"]
        scores["ap50_" + name] = d["ap50%"]
    json.dump({"seconds": wall, "cpu": cpu, "scores": scores}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
