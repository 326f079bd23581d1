"""Planetscapes visual question answering: the official VQA accuracy, exactly, with strict
checks of the results file. The Task class is in task.py (registered in scoring/tasks)."""
