"""A stand-in for a team's inference code (the sample final package of README.md): the real one
writes one label PNG per test image into results/."""
print("inference: see challenge_report.pdf")
