"""Collects check results per group and prints them."""


def _show(value):
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).hex()
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 160 else text[:120] + "…(%d chars)" % len(text)


class Checker:
    def __init__(self, quiet=False):
        self.quiet = quiet
        self.groups = []  # (name, passed, failures)
        self._current = None

    def run_group(self, name, fn, *args):
        """Runs fn(self, *args) as one group; an exception fails the group, not the run."""
        self._current = [name, 0, []]
        try:
            fn(self, *args)
        except Exception as exc:  # a crash is a failure of this group, reported with its cause
            self._current[2].append("stopped early: %s: %s" % (type(exc).__name__, exc))
        self.groups.append(tuple(self._current))
        if not self.quiet:
            self._print(self.groups[-1])

    def check(self, what, expected, got):
        if expected == got:
            self._current[1] += 1
            return True
        self._current[2].append("%s: expected %s, got %s" % (what, _show(expected), _show(got)))
        return False

    def true(self, what, condition, detail=""):
        if condition:
            self._current[1] += 1
            return True
        self._current[2].append("%s%s" % (what, ": " + detail if detail else ""))
        return False

    def fail(self, what):
        self._current[2].append(what)

    @staticmethod
    def _print(group):
        name, passed, failures = group
        if not failures:
            print("%s: %d checks passed" % (name, passed))
            return
        print("%s: %d passed, %d FAILED" % (name, passed, len(failures)))
        for f in failures:
            print("  FAIL %s" % f)

    @property
    def passed(self):
        return sum(g[1] for g in self.groups)

    @property
    def failed(self):
        return sum(len(g[2]) for g in self.groups)
