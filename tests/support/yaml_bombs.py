"""YAML "billion laughs": each level a list of `width` aliases of the level before, so level n
(line n + 1) stands for width ** (n + 1) strings in a few hundred bytes."""


def laughs(levels, width=9, key=None):
    """Levels l0..l<levels-1>, one per line; with key, a last line `key: *l<levels-1>` (the
    key a config must have, so that only the bomb can be what is refused)."""
    lines = ['l0: &l0 [{}]'.format(", ".join(['"lol"'] * width))]
    for i in range(1, levels):
        lines.append("l{0}: &l{0} [{1}]".format(i, ", ".join(["*l{}".format(i - 1)] * width)))
    if key:
        lines.append("{}: *l{}".format(key, levels - 1))
    return "\n".join(lines) + "\n"
