"""The chaos thread: all along the soak, every 50-250 ms, strikes one random client -- a
pg_cancel_backend, a cancel request from the client's own connection (psycopg2's
conn.cancel(), libpq's PQcancel), or a pg_terminate_backend. Steady clients are cancelled but
never terminated: their backends' memory is measured from start to end.

Strikes go through pg_stat_activity by pid, so a client that has just reconnected (its old pid
gone) costs a no-op rather than the server's WARNING about a pid that is not a backend.
"""

import random
import threading

import psycopg2

STRIKE = 'SELECT {}(pid) FROM pg_stat_activity WHERE pid = %s'


class Chaos(threading.Thread):
    def __init__(self, soak, clients):
        super().__init__(name='chaos', daemon=True)
        self.soak = soak
        self.clients = clients
        self.rng = random.Random(soak.seed)
        self.stop = threading.Event()
        self.failure = None

    def run(self):
        try:
            conn = psycopg2.connect(self.soak.dsn(self.soak.superuser, 'soak chaos'))
            conn.autocommit = True
            while not self.stop.wait(self.rng.uniform(0.05, 0.25)):
                self.strike(conn, self.rng.choice(self.clients))
            conn.close()
        except Exception as error:  # the soak's own bug: counted as a failure
            self.failure = f'chaos: {type(error).__name__}: {error}'

    def strike(self, conn, client):
        roll = self.rng.random()
        pid, client_conn = client.pid, client.conn
        if pid is None or client_conn is None:
            return
        if roll < 0.35 and not client.steady:
            how = 'pg_terminate_backend'
        elif roll < 0.7:
            how = 'pg_cancel_backend'
        else:
            try:
                client_conn.cancel()
                self.soak.record.strike('conn.cancel()')
            except psycopg2.Error:
                pass  # the connection was closed just now
            return
        with conn.cursor() as cur:
            cur.execute(STRIKE.format(how), (pid,))
            row = cur.fetchone()
        if row is not None and row[0]:
            self.soak.record.strike(how)
