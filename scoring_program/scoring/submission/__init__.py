"""Finding a submission's files and unpacking its zip: the first step of every run, the same for
every task (a task names its file suffix and words)."""
