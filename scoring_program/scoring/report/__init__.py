"""The report: scores.txt and scores.json, the detailed results page's building blocks, the terminal table."""
