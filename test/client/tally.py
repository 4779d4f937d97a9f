"""Counting for the Python client tests: one numbered line per check, and a summary line.

Every test_*.py here prints `ok N - what` or `FAILED N - what` per check and ends with
`<label>: P passed, F failed`, which test/suites/client.sh counts; a run that stops early must
still print that line (with a failure), so that the suite never counts a crash as a pass.
"""


class Tally:
    def __init__(self, label):
        self.label = label
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f'{"ok" if ok else "FAILED"} {self.passed + self.failed} - {what}', flush=True)
        return ok

    def finish(self):
        """Prints the summary line; returns the exit status (0 only when nothing failed)."""
        print(f'{self.label}: {self.passed} passed, {self.failed} failed', flush=True)
        return 0 if self.failed == 0 else 1
