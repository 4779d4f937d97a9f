"""A steady client's backend memory, measured by the client itself between operations: the sum
of its memory contexts and TopMemoryContext's own blocks (pg_backend_memory_contexts), and its
private and anonymous memory as the kernel counts it (/proc/<pid>/smaps_rollup; the soak runs on
the server's machine, as root or as the server's user).

Samples: 'warm' once the warm-up is over (every statement has been planned and every cache
filled), then every `every` seconds, and 'end' once the client has stopped and given everything
back. The verdict compares 'end' with 'warm'.
"""

import time

QUERY = ("SELECT sum(total_bytes), sum(total_bytes) FILTER (WHERE name = 'TopMemoryContext') "
         "FROM pg_backend_memory_contexts")


def smaps(pid):
    """Private_Clean + Private_Dirty and Anonymous of a process, in bytes (None if unreadable)."""
    fields = {}
    try:
        with open(f'/proc/{pid}/smaps_rollup') as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == 'kB':
                    fields[parts[0].rstrip(':')] = int(parts[1]) * 1024
    except OSError:
        return None, None
    return fields.get('Private_Clean', 0) + fields.get('Private_Dirty', 0), fields.get('Anonymous')


class Samples:
    def __init__(self):
        # (label, seconds into the run, pid, contexts, top, private, anonymous, calls so far)
        self.rows = []
        self.next_at = None

    def maybe_sample(self, client):
        soak = client.soak
        now = time.monotonic()
        if self.next_at is None:
            self.next_at = soak.started + soak.warmup
        if now < self.next_at or client.lost():
            return
        label = 'warm' if not self.rows else 'during'
        if self.sample(client, label, prime=not self.rows):
            self.next_at = now + soak.sample_every

    def sample(self, client, label, prime=False):
        """One sample, on the client's own connection; False if a cancel cut it off. The
        first run of the query in a session plans a view never planned there before, and the
        statement's own context (MessageContext, counted in the sum) is 32 kB larger for it:
        `prime` runs it once unrecorded."""
        try:
            if prime:
                client.row(QUERY)
            contexts, top = client.row(QUERY)
        except client.errors as error:
            client.note_error(error)
            client.recover()
            return False
        private, anonymous = smaps(client.pid)
        self.rows.append((label, time.monotonic() - client.soak.started, client.pid,
                          int(contexts), int(top), private, anonymous, client.calls))
        return True

    def first(self, label):
        return next((r for r in self.rows if r[0] == label), None)
