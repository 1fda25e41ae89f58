#!/usr/bin/env python3
"""Clean-room checker for the NotifBridge protocol vectors.

    python3 Tests/CleanRoom/check.py [VECTORS_DIR]     check every vector file
    python3 Tests/CleanRoom/check.py --mutants [DIR]   show that altered vectors are caught

Standard library only (Python 3.11). See README.md.
"""
import os
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ in the repository
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mutants  # noqa: E402
import suite  # noqa: E402
from checker import Checker  # noqa: E402


def main(argv):
    args = [a for a in argv if a != "--mutants"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: check.py [--mutants] [VECTORS_DIR]", file=sys.stderr)
        return 2
    directory = args[0] if args else os.path.join(HERE, "..", "Vectors")
    try:
        vectors = suite.load(directory)
    except (OSError, ValueError) as exc:
        print("cannot load the vectors from %s: %s" % (directory, exc), file=sys.stderr)
        return 2
    start = time.monotonic()
    if "--mutants" in argv:
        return mutants.run(vectors)
    c = Checker()
    suite.run(c, vectors)
    print("total: %d checks passed, %d failed (%.1f s)" % (c.passed, c.failed, time.monotonic() - start))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
