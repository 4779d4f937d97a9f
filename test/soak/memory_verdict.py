"""Did the steady backends' memory grow? Compares each one's 'end' sample with its 'warm' one
(memory.py) and prints every sample.

The criterion, per backend, from warm-up to end:
- its memory contexts (the sum of pg_backend_memory_contexts' total_bytes, measured with the
  backend idle, so no statement's context is in it) grew by less than CONTEXTS_LIMIT;
- its anonymous memory (smaps_rollup's Anonymous: malloc'd memory, which the contexts' blocks
  come from) grew by less than ANONYMOUS_LIMIT.
Memory is no timing: a backend that keeps what it allocates per claim grows with the claims it
makes, thousands in a run, and crosses either limit; one that frees it stays flat.
"""

CONTEXTS_LIMIT = 128 * 1024
ANONYMOUS_LIMIT = 512 * 1024

KB = 1024


def judge(steady):
    contexts_ok = anonymous_ok = bool(steady)
    print('   steady backends (kB): pid, then per sample: label@s contexts/top/private/anonymous')
    growths = []
    for client in steady:
        samples = client.memory.rows
        print(f'   {client.pid}: ' + ', '.join(
            f'{label}@{at:.0f} {c // KB}/{t // KB}/{(p or 0) // KB}/{(a or 0) // KB}'
            for label, at, _, c, t, p, a, _ in samples))
        warm, end = client.memory.first('warm'), client.memory.first('end')
        if warm is None or end is None or warm[2] != end[2] or None in (warm[6], end[6]):
            contexts_ok = anonymous_ok = False
            growths.append(f'{client.application_name}: no warm and end samples of one backend')
            continue
        grown = {'contexts': end[3] - warm[3], 'top': end[4] - warm[4],
                 'private': end[5] - warm[5], 'anonymous': end[6] - warm[6],
                 'calls': end[7] - warm[7]}
        growths.append(grown)
        contexts_ok = contexts_ok and grown['contexts'] < CONTEXTS_LIMIT
        anonymous_ok = anonymous_ok and grown['anonymous'] < ANONYMOUS_LIMIT
    numbers = [g for g in growths if isinstance(g, dict)]

    def span(key):
        values = [g[key] // KB for g in numbers]
        return f'{min(values)} to {max(values)} kB' if values else 'none'

    problems = [g for g in growths if not isinstance(g, dict)]
    if numbers:
        # What the limit catches: a leak of this many bytes a call crosses it in every backend.
        fewest = min(g['calls'] for g in numbers)
        print(f'   calls after warm-up per steady backend: {fewest} to '
              f'{max(g["calls"] for g in numbers)}; a leak of '
              f'{CONTEXTS_LIMIT // max(fewest, 1)} bytes a call would cross the contexts limit')
    return [
        (contexts_ok, f'steady backends: memory contexts grew less than '
                      f'{CONTEXTS_LIMIT // KB} kB each after warm-up (grew {span("contexts")}; '
                      f'TopMemoryContext {span("top")}) {problems[:2]}'),
        (anonymous_ok, f'steady backends: anonymous memory grew less than '
                       f'{ANONYMOUS_LIMIT // KB} kB each after warm-up (grew {span("anonymous")}; '
                       f'private {span("private")}) {problems[:2]}'),
    ]
