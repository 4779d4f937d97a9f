"""The names the soak claims, their n, and the rate limits' rules: one place, read by the
workload and by the checks afterwards.

Small n on few names, so that most of the clients wait in line at any moment.
"""

LEASE = '2 seconds'  # short: once the clients stop, every lease runs out within seconds
LEASE_SECONDS = 2

SEMAPHORES = {'soak.a': 4, 'soak.b': 2, 'soak.c': 6, 'soak.d': 3}

# A sliding window, claimed alone (sem_rate) and as a member of lease sets, with one rule.
WINDOW = 'soak.window'
WINDOW_N = 30
WINDOW_PER = '1 second'
WINDOW_PER_SECONDS = 1

BUCKET = 'soak.bucket'
BUCKET_N = 20
BUCKET_PER = '1 second'
BUCKET_BURST = 5

ALL = sorted([*SEMAPHORES, WINDOW, BUCKET])
