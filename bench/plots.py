"""The plots of a bench/run.py run, drawn with matplotlib (Debian's python3-matplotlib) into
bench/ beside RESULTS.md:

- throughput.png: successful pairs/s against clients, pgsem and its peers (the seed articles'
  SQL, the write floor, the Redis fair semaphore, transaction claims) on one semaphore of 4;
- handoff.png: the hand-off latency of each kind of claim as a distribution (its samples);
- rate_grants.png: the grants of a limit of 200 per second over time, 32 clients waiting.

Only what the run measured is drawn: a run with --only draws the plots it has data for."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# Throughput series: label in the plot -> the cells' label (bench/run.py), by clients.
THROUGHPUT_SERIES = [
    ("pgsem sem_claim + sem_release", "pgsem, n=4, 1 name"),
    ("seed SQL (LOCK TABLE)", "seed SQL, n=4, 1 name"),
    ("floor: INSERT + UPDATE", "floor (INSERT+UPDATE), 1 name"),
    ("pgsem sem_claim_xact", "sem_claim_xact, n=4"),
    ("Redis fair semaphore (no persistence)", "Redis fair semaphore, n=4"),
]


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")  # no display
    import matplotlib.pyplot as plt
    return plt


def throughput(med, path):
    """med: {(cell label, clients): (tps, pairs)}. Returns the path, or None with nothing to draw."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    drawn = 0
    for shown, cell in THROUGHPUT_SERIES:
        points = sorted((c, v[1]) for (label, c), v in med.items() if label == cell and v[1])
        if len(points) < 2:
            continue
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=shown)
        drawn += 1
    if drawn == 0:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    ax.set_xticks([1, 8, 32])
    ax.set_xticklabels(["1", "8", "32"])
    ax.set_xlabel("clients")
    ax.set_ylabel("claims granted and released per second")
    ax.set_title("One semaphore of n = 4: successful pairs/s (medians of the rounds)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def handoff(samples, path):
    """samples: {what: [ms, ...]}: one empirical distribution per kind of hand-off."""
    samples = {k: sorted(v) for k, v in samples.items() if v}
    if not samples:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for what, values in samples.items():
        n = len(values)
        ax.step(values, [(i + 1) / n for i in range(n)], where="post",
                label=f"{what} ({n} samples)")
    ax.set_xscale("log")
    ax.set_xlabel("ms from the release to the waiter's grant")
    ax.set_ylabel("fraction of hand-offs at most that long")
    ax.set_title("Hand-off latency: one slot, one waiter in line")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def rate_grants(grant_seconds, limit, path):
    """grant_seconds: grant times in seconds from the first grant. Grants per 100 ms, and the most
    any 100 ms may hold on average at `limit` per second."""
    if not grant_seconds:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    end = max(grant_seconds)
    bins = [i / 10 for i in range(int(end * 10) + 2)]
    ax.hist(grant_seconds, bins=bins, color="tab:blue", alpha=0.8, label="grants per 100 ms")
    ax.axhline(limit / 10, color="tab:red", linestyle="--",
               label=f"{limit} per second, spread evenly")
    ax.set_xlabel("seconds from the first grant")
    ax.set_ylabel("grants")
    ax.set_title(f"A sliding window of {limit} per second, 32 clients waiting in line")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
