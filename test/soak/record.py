"""What the soak's threads tell the checks: counts of what they did, the errors they met, the
retries whose answer needs the server's history to judge. One lock for all of it: the threads
touch it a few times per operation, far less often than they wait on the server.
"""

import collections
import threading

# SQLSTATEs the soak provokes on purpose: cancels and statement_timeout (57014), lock_timeout
# (55P03), deadlocks between transaction claims taken in two orders (40P01), terminations
# (57P01). Anything else a call raises is a finding.
PROVOKED = {'57014', '55P03', '40P01', '57P01'}


class Record:
    def __init__(self):
        self._lock = threading.Lock()
        self.ops = collections.Counter()       # operation -> calls made
        self.granted = collections.Counter()   # operation -> calls that got what they asked
        self.errors = collections.Counter()    # SQLSTATE (or 'connection lost') -> count
        self.unexpected = 0                    # errors and notices not provoked
        self.examples = []                     # the first of them, described
        self.strikes = collections.Counter()   # chaos: how -> strikes that landed
        self.reconnects = 0
        self.keyed_retries = []                # (first id, retry's id or None, retry's server time)

    def op(self, name, granted):
        with self._lock:
            self.ops[name] += 1
            if granted:
                self.granted[name] += 1

    def error(self, state, what):
        with self._lock:
            self.errors[state] += 1
            if state not in PROVOKED and state != 'connection lost':
                self._unexpected(f'{state}: {what}')

    def notice(self, text):
        with self._lock:
            self._unexpected(f'notice: {text}')

    def _unexpected(self, what):
        self.unexpected += 1
        if len(self.examples) < 20:
            self.examples.append(what)

    def strike(self, how):
        with self._lock:
            self.strikes[how] += 1

    def reconnected(self):
        with self._lock:
            self.reconnects += 1

    def keyed_retry(self, first, again, at):
        with self._lock:
            self.keyed_retries.append((first, again, at))
