"""One thread per client connection: runs random operations (workload.py) until told to stop,
under timeouts of its own now and then; survives cancels, timeouts and deadlocks, and
reconnects when the chaos thread terminates its backend. Steady clients (the chaos thread never
terminates them) also measure their backend's memory (memory.py).

Once stopped, a client gives back what it knows it holds -- its session claims, an open
transaction -- and stays connected, idle, until the soak lets it go: the leftover checks run
once with every client connected and once with all gone.
"""

import random
import threading
import time

import psycopg2
import psycopg2.extensions

import memory
import workload

# A terminate that reaches an idle connection arrives as this notice; every other notice
# (a WARNING such as 25P01) is unexpected in this workload.
TERMINATED_NOTICE = 'terminating connection due to administrator command'


class Lost(Exception):
    """The connection is gone (terminated), and the operation with it."""


class Client(threading.Thread):
    errors = (psycopg2.Error,)

    def __init__(self, soak, index, steady):
        super().__init__(name=f'client {index}', daemon=True)
        self.soak = soak
        self.record = soak.record
        self.index = index
        self.steady = steady
        self.rng = random.Random(soak.seed * 1000 + index)
        self.application_name = f'soak {"steady" if steady else "client"} {index}'
        self.conn = None
        self.pid = None
        self.sessions = []        # (name, slot) of the session claims this client holds
        self.settings = None      # (lock_timeout, statement_timeout) in force, as set
        self.keys = 0
        self.calls = 0            # operations begun
        self.memory = memory.Samples() if steady else None
        self.failure = None       # what stopped the thread, if anything did
        self.idle = threading.Event()

    # ---- the connection ---------------------------------------------------------------------

    def connect(self):
        for attempt in range(50):
            try:
                self.conn = psycopg2.connect(self.soak.dsn(self.soak.worker, self.application_name))
                self.conn.autocommit = True
                self.pid = self.conn.get_backend_pid()
                self.settings = ('0', '0')
                self.sessions = []
                return
            except psycopg2.OperationalError:
                # A server busy forking 150 backends may refuse for a moment.
                time.sleep(0.1 * (attempt + 1))
        raise RuntimeError(f'{self.application_name}: cannot connect')

    def lost(self):
        return self.conn is None or self.conn.closed != 0

    def reconnect_if_lost(self):
        if self.conn is not None and self.conn.closed == 0:
            return
        if self.conn is not None:
            self.record.reconnected()
        self.connect()

    # ---- calls ------------------------------------------------------------------------------

    def execute(self, sql, *args):
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            rows = cur.fetchall() if cur.description else None
        self.read_notices()
        return rows

    def row(self, sql, *args):
        return self.execute(sql, *args)[0]

    def value(self, sql, *args):
        return self.row(sql, *args)[0]

    def read_notices(self):
        if not self.conn.notices:
            return
        for text in self.conn.notices:
            if TERMINATED_NOTICE not in text:
                self.record.notice(f'{self.application_name}: {text.strip()}')
        del self.conn.notices[:]

    def note_error(self, error):
        if isinstance(error, psycopg2.OperationalError) and self.lost():
            self.record.error(error.pgcode or 'connection lost', str(error).strip())
        else:
            state = error.pgcode or type(error).__name__
            self.record.error(state, f'{self.application_name}: {str(error).strip()}')

    def wait(self):
        """A wait in line: mostly a short one, sometimes none (a caller that may not pass the
        line), rarely longer than the others hold."""
        roll = self.rng.random()
        if roll < 0.2:
            return '0'
        return f'{self.rng.randint(20, 300 if roll < 0.8 else 1500)} milliseconds'

    def hold(self):
        time.sleep(self.rng.uniform(0, 0.05))

    def next_key(self):
        self.keys += 1
        return f'soak-{self.index}-{self.pid}-{self.keys}'

    def release_session(self, name, slot):
        released = self.value('SELECT sem_release_session(%s, %s)', name, slot)
        self.sessions.remove((name, slot))
        if released is not True:
            self.record.error('release', f'{self.application_name}: sem_release_session'
                              f'({name}, {slot}) of a claim it held answered {released}')

    def set_timeouts(self):
        """Now and then a lock_timeout or a statement_timeout shorter than the wait."""
        roll = self.rng.random()
        wanted = ('0', '0')
        if roll < 0.12:
            wanted = (f'{self.rng.randint(50, 400)}ms', '0')
        elif roll < 0.24:
            wanted = ('0', f'{self.rng.randint(100, 600)}ms')
        if wanted != self.settings:
            self.execute('SELECT set_config(%s, %s, false), set_config(%s, %s, false)',
                         'lock_timeout', wanted[0], 'statement_timeout', wanted[1])
            self.settings = wanted

    # ---- the loop ---------------------------------------------------------------------------

    def run(self):
        try:
            self.connect()
            operations = list(workload.OPERATIONS)
            weights = list(workload.OPERATIONS.values())
            while not self.soak.stop.is_set():
                try:
                    self.reconnect_if_lost()
                    self.set_timeouts()
                    self.calls += 1
                    self.rng.choices(operations, weights)[0](self)
                except self.errors as error:
                    self.note_error(error)
                    self.recover()
                if self.memory is not None:
                    self.memory.maybe_sample(self)
            self.clean_up()
            if self.memory is not None:
                for _ in range(5):
                    if self.lost() or self.memory.sample(self, 'end'):
                        break
        except Exception as error:  # a bug of the soak itself: reported, counted as a failure
            self.failure = f'{self.application_name}: {type(error).__name__}: {error}'
        finally:
            self.idle.set()
        self.soak.release.wait()
        if self.conn is not None:
            self.conn.close()

    def recover(self):
        """After an error: end a transaction left open, give back session claims the operation
        took, so that the next operation starts clean. A cancel can land here too."""
        for _ in range(5):
            if self.lost():
                return
            try:
                if self.conn.info.transaction_status != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                    self.execute('ROLLBACK')
                for name, slot in list(self.sessions):
                    # False is no finding here: the error may have come after the release.
                    self.value('SELECT sem_release_session(%s, %s)', name, slot)
                    self.sessions.remove((name, slot))
                return
            except self.errors as error:
                self.note_error(error)

    def clean_up(self):
        """The soak is over: no timeouts of its own, no transaction, no session claim."""
        for _ in range(5):
            try:
                if self.lost():
                    return
                self.recover()
                if self.settings != ('0', '0'):
                    self.execute('RESET lock_timeout; RESET statement_timeout')
                    self.settings = ('0', '0')
                return
            except self.errors as error:
                # A cancel sent just before the chaos thread stopped may land late.
                self.note_error(error)
