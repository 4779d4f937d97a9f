"""The chaos workers: one OS process each (so the injector can SIGSTOP a client), looping over
operations of every kind pgsem offers until the deadline, recording every call.

An operation on a resource is a client-side read-modify-write of one row of chaos_resource,
guarded by that resource's semaphore of n = 1 (a lease, a transaction claim, a session claim or a
set that names it): read the row's head (the last operation written), then, after the client has
"computed", append this operation to the resource's list (a row of chaos_write pointing at the
head it read) and make it the new head. Lost updates are then visible: an operation whose write
committed but that the head's chain does not reach was overwritten by a writer that read a stale
head. A leased write is fenced (sem_fence, and the token condition token <= id) unless the run is
--unfenced.
"""
import os
import random
import signal
import time

import psycopg2

from record import Recorder

# Weights of the kinds of operation; every kind runs in a run of 30 s with 32 workers.
KINDS = {
    "lease_write": 5,    # sem_claim with a wait, fenced write, sem_release
    "renew_write": 3,    # the same with a sem_renew before the write
    "xact_write": 4,     # sem_claim_xact and the write in one transaction
    "session_write": 3,  # sem_claim_session, the write, sem_release_session
    "set_write": 3,      # sem_claim_all of a resource and a pool, fenced write by the set's id
    "permits_lease": 2,  # sem_claim(permits => 2) of a pool
    "permits_xact": 1,   # sem_claim_xact(permits => 2) of a pool
    "permits_session": 1,
    "pool_set": 2,       # sem_claim_all of both pools, permits 1 and 2
    "xact_set": 1,       # sem_claim_xact_all of both pools in a transaction
    "session_set": 1,    # sem_claim_session_all of both pools, released name by name
    "keyed_lease": 2,    # sem_claim with a request_key, asked again after a lost answer
    "rate_set": 1,       # sem_claim_all of a pool and the rate limit (pers), its grant logged
    "rate": 2,           # sem_rate, its grant logged by the granting statement
    "bucket": 2,         # sem_bucket, likewise
}


class ConnLost(Exception):
    """The connection is gone; the call in flight (if any) was recorded as indeterminate."""


class CallFailed(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code


def server_identity(cur):
    """What tells one server (incarnation) from another: a failover changes the address, a
    restart the postmaster's start time."""
    cur.execute("SELECT pg_backend_pid(), inet_server_addr()::text, inet_server_port(),"
                " (extract(epoch FROM pg_postmaster_start_time()) * 1e6)::bigint")
    pid, addr, port, started = cur.fetchone()
    try:
        cur.execute("SELECT system_identifier::text FROM pg_control_system()")
        sysid = cur.fetchone()[0]
    except psycopg2.Error:
        sysid = None
    return pid, {"addr": addr, "port": port, "started": started, "sysid": sysid}


class Worker:
    def __init__(self, idx, config, record_dir, seed):
        self.idx = idx
        self.cfg = config
        self.rng = random.Random(seed)
        self.rec = Recorder(os.path.join(record_dir, "worker-%02d.jsonl" % idx))
        self.conn = None
        self.cur = None
        self.pid = None
        self.conn_no = 0
        self.seq = 0
        self.op_seq = 0
        self.deadline = config["deadline"]

    # ---- connections -----------------------------------------------------------------------

    def connect(self):
        backoff = 0.05
        while time.monotonic() < self.deadline:
            conn = None
            try:
                conn = psycopg2.connect(self.cfg["dsn"], connect_timeout=3,
                                        application_name="chaos-%s-w%02d" % (self.cfg["run"],
                                                                             self.idx))
                conn.autocommit = True
                cur = conn.cursor()
                cur.execute("SET statement_timeout = '20s'")
                # pgsem makes every claim, renewal and grant durable whatever the session says
                # (README, Guarantees and limits): off here, a claim it did not would be lost in
                # the injector's crashes and show as an acknowledged claim missing.
                cur.execute("SET synchronous_commit = off")
                # The history must stay whole for the checkers (superusers only; the runner's
                # cluster sets both server-wide anyway).
                for setting in ("pgsem.history_max_claims = -1",
                                "pgsem.history_retention = '7d'"):
                    try:
                        cur.execute("SET " + setting)
                    except psycopg2.Error:
                        pass
                pid, ident = server_identity(cur)
                self.conn, self.cur, self.pid = conn, cur, pid
                self.conn_no += 1
                self.rec.write(ev="connect", w=self.idx, conn=self.conn_no, pid=pid,
                               server=ident, wall=time.time())
                return True
            except psycopg2.Error as e:
                # A cancel or a restart can strike while the session is being set up.
                if conn is not None:
                    conn.close()
                err = " ".join(str(e).split())
                self.rec.write(ev="connect_failed", w=self.idx, err=err[-300:])
                time.sleep(backoff * (0.5 + self.rng.random()))
                backoff = min(backoff * 2, 1.0)
        return False

    def drop(self):
        try:
            if self.conn is not None:
                self.conn.close()
        except psycopg2.Error:
            pass
        self.conn = self.cur = self.pid = None

    # ---- one recorded call -----------------------------------------------------------------

    def call(self, op, kind, f, sql, params=None, args=None):
        """Runs one statement and records it; returns its first row (None if it has none)."""
        self.seq += 1
        c = self.seq
        self.rec.write(ev="invoke", w=self.idx, c=c, op=op, kind=kind, f=f, args=args or {},
                       pid=self.pid, conn=self.conn_no, wall=time.time())
        try:
            self.cur.execute(sql, params)
            row = self.cur.fetchone() if self.cur.description else None
        except psycopg2.Error as e:
            msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
            if self.conn.closed:
                self.rec.write(ev="info", w=self.idx, c=c, code=e.pgcode, err=msg)
                self.drop()
                raise ConnLost(msg) from None
            self.rec.write(ev="fail", w=self.idx, c=c, code=e.pgcode, err=msg)
            raise CallFailed(e.pgcode, msg) from None
        v = list(row) if row is not None and len(row) > 1 else (row[0] if row else None)
        self.rec.write(ev="ok", w=self.idx, c=c, v=v)
        return row

    def value(self, op, kind, f, sql, params=None, args=None):
        row = self.call(op, kind, f, sql, params, args)
        return row[0] if row else None

    def rollback(self, op, kind):
        try:
            self.call(op, kind, "rollback", "ROLLBACK")
        except CallFailed:
            pass

    # ---- operations ------------------------------------------------------------------------

    def think(self, low, high):
        time.sleep(self.rng.uniform(low, high))

    def write(self, op, kind, k, claim, fenced_by):
        """The read-modify-write of resource k in a transaction of its own, or in the open one
        (xact claims). fenced_by: the lease or set id to fence, or None. Returns normally when
        the write committed; raises otherwise."""
        run = self.cfg["run"]
        fence_at = None
        if fenced_by is not None and self.cfg["fenced"]:
            fence_at = self.value(op, kind, "fence",
                                  "SELECT (extract(epoch FROM clock_timestamp()) * 1e6)::bigint"
                                  " FROM (SELECT sem_fence(%s)) f", (fenced_by,),
                                  {"id": fenced_by})
        head = self.value(op, kind, "read",
                          "SELECT v FROM chaos_resource WHERE run = %s AND k = %s", (run, k),
                          {"k": k})
        if fenced_by is not None and self.rng.random() < self.cfg["stall"]:
            # A holder that stalls between its read and its write for longer than its lease (a
            # GC pause, a swap storm): the injector's pauses rarely land in this window, and it
            # is the one where only the fence keeps a second holder from reading the same head.
            stall = self.cfg["lease"] * self.rng.uniform(1.2, 1.6)
            self.rec.write(ev="stall", w=self.idx, op=op, seconds=stall, t=time.monotonic())
            time.sleep(stall)
        self.think(0.005, 0.03)  # the client computes the new value
        token = "%(claim)s" if fenced_by is not None else "token"
        guard = " AND token <= %(claim)s" if fenced_by is not None and self.cfg["fenced"] else ""
        sql = ("WITH u AS (UPDATE chaos_resource SET v = %(op)s, token = " + token +
               ", claim = %(claim)s, at = clock_timestamp()"
               " WHERE run = %(run)s AND k = %(k)s" + guard + " RETURNING at)"
               " INSERT INTO chaos_write (run, k, op, prev, claim, kind, at, fence_at, pid)"
               " SELECT %(run)s, %(k)s, %(op)s, %(prev)s, %(claim)s, %(kind)s,"
               " (extract(epoch FROM u.at) * 1e6)::bigint, %(fence_at)s, pg_backend_pid()"
               " FROM u RETURNING at")
        at = self.value(op, kind, "write", sql,
                        {"op": op, "claim": claim, "run": run, "k": k, "prev": head,
                         "kind": kind, "fence_at": fence_at},
                        {"k": k, "prev": head, "claim": claim})
        if at is None:
            raise CallFailed("refused", "the token condition refused the write")

    def transaction(self, op, kind, body):
        """BEGIN, body(), COMMIT; ROLLBACK on a failed call. A lost connection propagates.
        The session runs with synchronous_commit off, so that a claim that pgsem failed to make
        durable could be lost in a crash; the workload's own writes commit durably."""
        self.call(op, kind, "begin", "BEGIN")
        try:
            self.call(op, kind, "sync_on", "SET LOCAL synchronous_commit = on")
            body()
        except CallFailed:
            self.rollback(op, kind)
            return False
        self.call(op, kind, "commit", "COMMIT")
        return True

    def op_lease_write(self, op, kind, renew=False, set_member=None):
        n = self.cfg["n"]
        k = self.rng.randrange(self.cfg["resources"])
        res = self.cfg["names"]["res"][k]
        lease, wait = self.cfg["lease"], self.cfg["wait"]
        if set_member is None:
            claim = self.value(op, kind, "claim",
                               "SELECT sem_claim(%s, %s, make_interval(secs => %s),"
                               " make_interval(secs => %s))", (res, n[res], lease, wait),
                               {"names": [res], "ns": [n[res]], "permits": [1], "lease": lease})
        else:
            names = [res, set_member]
            ns = [n[res], n[set_member]]
            ids = self.value(op, kind, "claim_all",
                             "SELECT sem_claim_all(%s::text[], %s::int[], make_interval(secs => %s),"
                             " make_interval(secs => %s))", (names, ns, lease, wait),
                             {"names": names, "ns": ns, "permits": [1, 1], "lease": lease})
            claim = ids[0] if ids else None
        if claim is None:
            return
        try:
            # The holder works a little before it writes: a pause that lands here outlasts the
            # lease, and the write must then be refused (fenced) or is stale (unfenced).
            self.think(0.01, 0.06)
            if renew:
                self.value(op, kind, "renew", "SELECT sem_renew(%s, make_interval(secs => %s))",
                           (claim, lease), {"id": claim, "lease": lease})
            self.transaction(op, kind, lambda: self.write(op, kind, k, claim, claim))
        finally:
            if self.conn is not None:
                self.value(op, kind, "release", "SELECT sem_release(%s)", (claim,), {"id": claim})

    def op_xact_write(self, op, kind):
        k = self.rng.randrange(self.cfg["resources"])
        res = self.cfg["names"]["res"][k]
        n = self.cfg["n"][res]

        def body():
            slot = self.value(op, kind, "claim_xact",
                              "SELECT sem_claim_xact(%s, %s, make_interval(secs => %s))",
                              (res, n, self.cfg["wait"]), {"names": [res], "ns": [n],
                                                           "permits": [1]})
            if slot is None:
                raise CallFailed(None, "no slot")
            self.write(op, kind, k, 0, None)

        self.transaction(op, kind, body)

    def op_session_write(self, op, kind):
        k = self.rng.randrange(self.cfg["resources"])
        res = self.cfg["names"]["res"][k]
        n = self.cfg["n"][res]
        slot = self.value(op, kind, "claim_session",
                          "SELECT sem_claim_session(%s, %s, make_interval(secs => %s))",
                          (res, n, self.cfg["wait"]), {"names": [res], "ns": [n], "permits": [1]})
        if slot is None:
            return
        try:
            self.transaction(op, kind, lambda: self.write(op, kind, k, 0, None))
        finally:
            if self.conn is not None:
                self.value(op, kind, "release_session", "SELECT sem_release_session(%s, %s)",
                           (res, slot), {"names": [res], "slot": slot})

    def op_permits(self, op, kind):
        pool = self.cfg["names"]["pool_a"]
        n = self.cfg["n"][pool]
        args = {"names": [pool], "ns": [n], "permits": [2]}
        wait, lease = self.cfg["wait"], self.cfg["lease"]
        if kind == "permits_lease":
            args["lease"] = lease
            claim = self.value(op, kind, "claim",
                               "SELECT sem_claim(%s, %s, make_interval(secs => %s),"
                               " make_interval(secs => %s), permits => 2)",
                               (pool, n, lease, wait), args)
            if claim is None:
                return
            self.think(0.01, 0.1)
            if self.rng.random() < 0.5:
                self.value(op, kind, "renew", "SELECT sem_renew(%s, make_interval(secs => %s))",
                           (claim, lease), {"id": claim, "lease": lease})
                self.think(0.01, 0.05)
            self.value(op, kind, "release", "SELECT sem_release(%s)", (claim,), {"id": claim})
        elif kind == "permits_xact":
            def body():
                self.value(op, kind, "claim_xact",
                           "SELECT sem_claim_xact(%s, %s, make_interval(secs => %s),"
                           " permits => 2)", (pool, n, wait), args)
                self.think(0.01, 0.1)
            self.transaction(op, kind, body)
        else:
            slot = self.value(op, kind, "claim_session",
                              "SELECT sem_claim_session(%s, %s, make_interval(secs => %s),"
                              " permits => 2)", (pool, n, wait), args)
            if slot is None:
                return
            self.think(0.01, 0.1)
            self.value(op, kind, "release_session", "SELECT sem_release_session(%s, %s)",
                       (pool, slot), {"names": [pool], "slot": slot})

    def op_pool_set(self, op, kind):
        names = [self.cfg["names"]["pool_a"], self.cfg["names"]["pool_b"]]
        if self.rng.random() < 0.5:
            names.reverse()  # any order: sets take their semaphores in one canonical order
        ns = [self.cfg["n"][x] for x in names]
        permits = [1, 2]
        lease = self.cfg["lease"]
        ids = self.value(op, kind, "claim_all",
                         "SELECT sem_claim_all(%s::text[], %s::int[], make_interval(secs => %s),"
                         " make_interval(secs => %s), %s::int[])",
                         (names, ns, lease, self.cfg["wait"], permits),
                         {"names": names, "ns": ns, "permits": permits, "lease": lease})
        if not ids:
            return
        self.think(0.01, 0.1)
        self.value(op, kind, "release", "SELECT sem_release(%s)", (ids[0],), {"id": ids[0]})

    def op_lock_set(self, op, kind):
        """A set of transaction claims (held until COMMIT) or of session claims (released name
        by name) on both pools."""
        names = [self.cfg["names"]["pool_a"], self.cfg["names"]["pool_b"]]
        if self.rng.random() < 0.5:
            names.reverse()
        ns = [self.cfg["n"][x] for x in names]
        permits = [1, self.rng.choice([1, 2])]
        args = {"names": names, "ns": ns, "permits": permits}
        wait = self.cfg["wait"]
        if kind == "xact_set":
            def body():
                slots = self.value(op, kind, "claim_xact_all",
                                   "SELECT sem_claim_xact_all(%s::text[], %s::int[],"
                                   " make_interval(secs => %s), %s::int[])",
                                   (names, ns, wait, permits), args)
                if slots is None:
                    raise CallFailed(None, "no slots")
                self.think(0.01, 0.1)
            self.transaction(op, kind, body)
            return
        slots = self.value(op, kind, "claim_session_all",
                           "SELECT sem_claim_session_all(%s::text[], %s::int[],"
                           " make_interval(secs => %s), %s::int[])", (names, ns, wait, permits),
                           args)
        if slots is None:
            return
        self.think(0.01, 0.1)
        for name, slot in zip(names, slots):
            self.value(op, kind, "release_session", "SELECT sem_release_session(%s, %s)",
                       (name, slot), {"names": [name], "slot": slot})

    def op_keyed_lease(self, op, kind):
        """A lease with a request key: when the answer is lost (a terminate, a restart), the
        worker reconnects and asks again with the same key, which answers with the first
        attempt's claim if it committed and is live, or makes one."""
        pool = self.cfg["names"]["pool_a"]
        n = self.cfg["n"][pool]
        lease, wait = self.cfg["lease"], self.cfg["wait"]
        key = "w%d-op%d" % (self.idx, op)
        args = {"names": [pool], "ns": [n], "permits": [1], "lease": lease, "key": key}
        sql = ("SELECT sem_claim(%s, %s, make_interval(secs => %s), make_interval(secs => %s),"
               " request_key => %s)")
        try:
            claim = self.value(op, kind, "claim", sql, (pool, n, lease, wait, key), args)
        except ConnLost:
            if not self.connect():
                return
            claim = self.value(op, kind, "claim", sql, (pool, n, lease, wait, key), args)
        if claim is None:
            return
        self.think(0.01, 0.1)
        self.value(op, kind, "release", "SELECT sem_release(%s)", (claim,), {"id": claim})

    def op_rate_set(self, op, kind):
        """A set of a pool's lease and a grant of the sliding window (pers), all or nothing, the
        grant logged by the statement that makes it, as sem_rate's are; then the lease released
        (the grant counts until its window has passed)."""
        r = self.cfg["rate"]
        pool, rate = self.cfg["names"]["pool_b"], self.cfg["names"]["rate"]
        names, ns = [pool, rate], [self.cfg["n"][pool], r["n"]]
        permits = [1, self.rng.choice([1, 1, 2])]
        lease, wait = self.cfg["lease"], self.rng.choice([0, 0.2])
        sql = ("WITH g AS (SELECT sem_claim_all(%(names)s::text[], %(ns)s::int[],"
               " make_interval(secs => %(lease)s), make_interval(secs => %(wait)s),"
               " %(permits)s::int[], pers => ARRAY[NULL, make_interval(secs => %(per)s)]) AS ids),"
               " l AS (INSERT INTO chaos_grant (run, name, kind, op, permits, pid, s_at, c_at)"
               " SELECT %(run)s, %(rate)s, %(kind)s, %(op)s, %(p)s, pg_backend_pid(),"
               " (extract(epoch FROM statement_timestamp()) * 1e6)::bigint,"
               " (extract(epoch FROM clock_timestamp()) * 1e6)::bigint"
               " FROM g WHERE g.ids IS NOT NULL RETURNING 1)"
               " SELECT ids FROM g")  # l runs whether read or not
        ids = self.value(op, kind, "claim_all", sql,
                        {"names": names, "ns": ns, "lease": lease, "wait": wait,
                         "permits": permits, "per": r["per"], "run": self.cfg["run"],
                         "rate": rate, "kind": kind, "op": op, "p": permits[1]},
                        {"names": names, "ns": ns, "permits": permits, "lease": lease,
                         "rate_member": rate})
        if not ids:
            return
        self.think(0.01, 0.1)
        self.value(op, kind, "release", "SELECT sem_release(%s)", (ids[0],), {"id": ids[0]})

    def op_grant(self, op, kind):
        """A rate or bucket grant, logged by the statement that makes it (both commit, or
        neither does)."""
        permits = self.rng.choice([1, 1, 2])
        wait = self.rng.choice([0, 0.2])
        if kind == "rate":
            r = self.cfg["rate"]
            name = self.cfg["names"]["rate"]
            fn = ("sem_rate(%(name)s, %(n)s, make_interval(secs => %(per)s), permits => %(p)s,"
                  " wait => make_interval(secs => %(wait)s))")
            params = {"name": name, "n": r["n"], "per": r["per"], "p": permits, "wait": wait}
        else:
            r = self.cfg["bucket"]
            name = self.cfg["names"]["bucket"]
            fn = ("sem_bucket(%(name)s, %(n)s, make_interval(secs => %(per)s), permits => %(p)s,"
                  " wait => make_interval(secs => %(wait)s), burst => %(burst)s)")
            params = {"name": name, "n": r["n"], "per": r["per"], "p": permits, "wait": wait,
                      "burst": r["burst"]}
        params.update(run=self.cfg["run"], kind=kind, op=op)
        sql = ("INSERT INTO chaos_grant (run, name, kind, op, permits, pid, s_at, c_at)"
               " SELECT %(run)s, %(name)s, %(kind)s, %(op)s, %(p)s, pg_backend_pid(),"
               " (extract(epoch FROM statement_timestamp()) * 1e6)::bigint,"
               " (extract(epoch FROM clock_timestamp()) * 1e6)::bigint"
               " WHERE " + fn + " RETURNING c_at")
        self.value(op, kind, kind, sql, params, {"names": [name], "permits": [permits]})

    def run_op(self, kind):
        self.op_seq += 1
        op = (self.idx + 1) * 1_000_000 + self.op_seq  # unique in the run, never 0
        if kind in ("lease_write", "renew_write"):
            self.op_lease_write(op, kind, renew=(kind == "renew_write"))
        elif kind == "set_write":
            self.op_lease_write(op, kind, set_member=self.cfg["names"]["pool_b"])
        elif kind == "xact_write":
            self.op_xact_write(op, kind)
        elif kind == "session_write":
            self.op_session_write(op, kind)
        elif kind in ("permits_lease", "permits_xact", "permits_session"):
            self.op_permits(op, kind)
        elif kind == "pool_set":
            self.op_pool_set(op, kind)
        elif kind in ("xact_set", "session_set"):
            self.op_lock_set(op, kind)
        elif kind == "keyed_lease":
            self.op_keyed_lease(op, kind)
        elif kind == "rate_set":
            self.op_rate_set(op, kind)
        else:
            self.op_grant(op, kind)

    def loop(self):
        kinds = list(KINDS)
        weights = [KINDS[k] for k in kinds]
        # The first operations go through every kind, so each runs in any run.
        first = kinds[self.idx % len(kinds):] + kinds[:self.idx % len(kinds)]
        while time.monotonic() < self.deadline:
            if self.conn is None and not self.connect():
                break
            kind = first.pop(0) if first else self.rng.choices(kinds, weights)[0]
            try:
                self.run_op(kind)
            except ConnLost:
                pass
            except CallFailed:
                # A failed call outside a transaction (a cancel, a timeout): the next op.
                pass
            self.think(0.0, 0.01)
        self.drop()
        self.rec.close()


def worker_main(idx, config, record_dir, seed):
    # The runner stops stragglers with SIGTERM: exit at once, the record is flushed per line.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(3))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    Worker(idx, config, record_dir, seed).loop()
