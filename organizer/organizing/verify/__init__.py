"""The organizer's verification of a prize winner's final submission (verify.py,
docs/verify.md), and its parameter counter (params/), which the starting kit's check_final.py
shares. Nothing here is imported by score.py: the worker never needs it."""
