"""The fault injector: on a schedule (each kind once early in the run, so a run of 30 s has them
all) and at random after that, it

  pause_client    SIGSTOPs a worker's client process (preferably one whose backend holds a lease
                  on a resource) for longer than a lease, then SIGCONTs it: the paused holder of
                  Kleppmann's fencing argument resumes after its lease ran out and writes;
  pause_backend   SIGSTOPs a worker's backend (preferably one holding a claim), likewise;
  cancel          pg_cancel_backend of a worker's backend;
  terminate       pg_terminate_backend of a worker's backend;
  kill_backend    SIGKILLs a worker's backend: the postmaster ends every backend and recovers;
  stop_immediate  pg_ctl stop -m immediate, a second's downtime, then a restart.

Each fault is logged (injector.jsonl) with its monotonic and wall times, the pids it hit and,
for the two that restart the server, when the server answered again ("recovered"). Paused
backends are resumed before a restart (a stopped process would hold up the postmaster's
shutdown) and everything paused is resumed when the injector stops.
"""
import os
import random
import signal
import subprocess
import time

import psycopg2

from record import Recorder

KINDS = ["pause_client", "cancel", "terminate", "pause_backend", "kill_backend",
         "stop_immediate"]
# Where in the run each kind first strikes (fraction of the run), then random ones follow.
SCHEDULE = [(0.08, "pause_client"), (0.14, "cancel"), (0.20, "terminate"),
            (0.26, "pause_backend"), (0.36, "kill_backend"), (0.56, "stop_immediate")]
WEIGHTS = {"pause_client": 3, "cancel": 3, "terminate": 2, "pause_backend": 2,
           "kill_backend": 0.3, "stop_immediate": 0.25}


class Injector:
    def __init__(self, config, record_dir, worker_pids, pgctl, seed):
        """worker_pids: {worker index: OS pid}. pgctl: the pg_ctl command as a list, with -D,
        or None when the server is not ours to restart."""
        self.cfg = config
        self.rec = Recorder(os.path.join(record_dir, "injector.jsonl"))
        self.worker_pids = worker_pids
        self.pgctl = pgctl
        self.rng = random.Random(seed)
        self.conn = None
        self.paused = []  # (resume at, kind, pid)
        self.app_prefix = "chaos-%s-w" % config["run"]
        self.unfenced = not config["fenced"]

    # ---- the server ------------------------------------------------------------------------

    def cursor(self):
        if self.conn is None or self.conn.closed:
            self.conn = psycopg2.connect(self.cfg["dsn"], connect_timeout=3,
                                         application_name="chaos-%s-injector" % self.cfg["run"])
            self.conn.autocommit = True
        return self.conn.cursor()

    def query(self, sql, params=None):
        try:
            cur = self.cursor()
            cur.execute(sql, params)
            return cur.fetchall()
        except psycopg2.Error:
            self.conn = None
            return None

    def worker_backends(self):
        """{backend pid: worker index} of the workers' live backends."""
        rows = self.query("SELECT pid, application_name FROM pg_stat_activity"
                          " WHERE application_name LIKE %s", (self.app_prefix + "%",)) or []
        return {pid: int(app[len(self.app_prefix):]) for pid, app in rows}

    def holders(self, lease_on_resource):
        """{backend pid: worker} of the worker backends that made the claims held now (leases
        on a resource only, if asked)."""
        sql = ("SELECT DISTINCT pid, application_name FROM sem_holders"
               " WHERE name LIKE %s AND application_name LIKE %s")
        pattern = self.cfg["prefix"] + ("res.%" if lease_on_resource else "%")
        if lease_on_resource:
            sql += " AND kind = 'lease'"
        rows = self.query(sql, (pattern, self.app_prefix + "%")) or []
        return {pid: int(app[len(self.app_prefix):]) for pid, app in rows if pid is not None}

    def wait_for_server(self, deadline):
        while time.monotonic() < deadline:
            if self.query("SELECT 1") is not None:
                return True
            time.sleep(0.1)
        return False

    # ---- faults ----------------------------------------------------------------------------

    def log(self, kind, **fields):
        self.rec.write(ev="fault", kind=kind, wall=time.time(), **fields)

    def pick_backend(self, prefer_holders):
        backends = self.worker_backends()
        if not backends:
            return None, None
        pool = self.holders(False) if prefer_holders else {}
        pool = {p: w for p, w in pool.items() if p in backends} or backends
        pid = self.rng.choice(sorted(pool))
        return pid, pool[pid]

    def pause_length(self):
        return self.rng.uniform(1.3, 2.0) * self.cfg["lease"]

    def strike(self, kind):
        if kind == "pause_client":
            holders = self.holders(True)
            candidates = sorted(set(holders.values())) or sorted(self.worker_pids)
            w = self.rng.choice(candidates)
            pid = self.worker_pids[w]
            already = {p for _, _, p in self.paused}
            if pid in already:
                return False
            length = self.pause_length()
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                return False
            self.log(kind, t=time.monotonic(), pids=[pid], workers=[w], seconds=length,
                     holder=bool(holders))
            self.paused.append((time.monotonic() + length, kind, pid))
            return True
        if kind in ("pause_backend", "cancel", "terminate", "kill_backend"):
            pid, w = self.pick_backend(prefer_holders=(kind == "pause_backend"))
            if pid is None or pid in {p for _, _, p in self.paused}:
                return False
            t = time.monotonic()
            if kind == "pause_backend":
                length = self.pause_length()
                try:
                    os.kill(pid, signal.SIGSTOP)
                except (ProcessLookupError, PermissionError):
                    return False
                self.log(kind, t=t, pids=[pid], workers=[w], seconds=length)
                self.paused.append((time.monotonic() + length, kind, pid))
                return True
            if kind == "kill_backend":
                self.resume_backends()
                t = time.monotonic()
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    return False
                self.conn = None
                self.log(kind, t=t, pids=[pid], workers=[w])
                self.recovered(kind, t)
                return True
            fn = "pg_cancel_backend" if kind == "cancel" else "pg_terminate_backend"
            # Logged before it is sent: the fault's time is never after its effect.
            self.log(kind, t=t, pids=[pid], workers=[w])
            self.query("SELECT " + fn + "(%s)", (pid,))
            return True
        if kind == "stop_immediate":
            self.resume_backends()
            t = time.monotonic()
            self.log(kind, t=t, pids=[])
            self.conn = None
            subprocess.run(self.pgctl + ["-m", "immediate", "stop"], cwd="/",
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            time.sleep(1.0)
            # pg_ctl restart with no server running starts it with the options it had.
            subprocess.run(self.pgctl + ["-w", "-t", "60", "restart"], cwd="/",
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            self.recovered(kind, t)
            return True
        raise ValueError(kind)

    def recovered(self, kind, t):
        ok = self.wait_for_server(time.monotonic() + 90)
        self.rec.write(ev="recovered", kind=kind, fault_t=t, ok=ok, wall=time.time())

    def resume(self, pid, kind):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        self.rec.write(ev="resume", kind=kind, pid=pid, wall=time.time())

    def resume_backends(self):
        keep = []
        for entry in self.paused:
            if entry[1] == "pause_backend":
                self.resume(entry[2], entry[1])
            else:
                keep.append(entry)
        self.paused = keep

    def resume_due(self, now):
        due = [e for e in self.paused if e[0] <= now]
        self.paused = [e for e in self.paused if e[0] > now]
        for _, kind, pid in due:
            self.resume(pid, kind)

    def resume_all(self):
        for _, kind, pid in self.paused:
            self.resume(pid, kind)
        self.paused = []

    # ---- the schedule ----------------------------------------------------------------------

    def run(self, start, deadline):
        """Strikes until the deadline (monotonic); resumes everything it paused."""
        length = deadline - start
        plan = [(start + frac * length, kind) for frac, kind in SCHEDULE]
        weights = dict(WEIGHTS)
        if self.unfenced:
            weights["pause_client"] = 12  # paused lease holders make the stale writes
        kinds = list(weights)
        mean_gap = 0.6 if self.unfenced else 1.0
        next_random = start + 1.0
        try:
            while True:
                now = time.monotonic()
                self.resume_due(now)
                # No new fault in the run's last seconds: everything paused resumes in time.
                if now >= deadline - 1.5 * self.cfg["lease"] - 1:
                    break
                if plan and plan[0][0] <= now:
                    _, kind = plan.pop(0)
                    if not self.strike(kind):
                        plan.insert(0, (now + 0.3, kind))  # no target yet: again soon
                    continue
                if now >= next_random:
                    self.strike(self.rng.choices(kinds, [weights[k] for k in kinds])[0])
                    next_random = time.monotonic() + self.rng.expovariate(1.0 / mean_gap)
                    continue
                wake = min([next_random] + [e[0] for e in self.paused] +
                           ([plan[0][0]] if plan else []))
                time.sleep(max(0.01, min(0.2, wake - time.monotonic())))
            while self.paused:
                now = time.monotonic()
                self.resume_due(now)
                if self.paused:
                    time.sleep(max(0.01, min(e[0] for e in self.paused) - now))
        finally:
            self.resume_all()
            if self.conn is not None:
                self.conn.close()
            self.rec.close()
