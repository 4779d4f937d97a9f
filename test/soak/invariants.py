"""The workload's own correctness, judged coarsely and cheaply from the server afterwards.

- Never more than n holders of a semaphore: leases from the server's history, [claimed_at,
  ended_at or expires_at) per slot row; transaction and session claims from soak_log, whose
  intervals lie inside the real holds (workload.py). All on the server's clock; at one instant an
  end counts before a start. A sweep over those intervals per name must never pass n.
- Never more than n permits of the sliding window in any window of its length.
- A retry with a request key answered the first attempt's id while that claim lived: where it
  answered another id (or none), the first claim had ended by the time the retry looked. And no
  two claims with one key overlapped.
Each returns (ok, what it saw).
"""

import names

DEPTH = """
WITH spans AS (
    SELECT name, claimed_at AS s, coalesce(ended_at, expires_at) AS e, 1 AS w
      FROM pgsem.claims WHERE name = ANY(%(names)s) AND NOT coalesce(rate, false)
    UNION ALL
    SELECT name, started, ended, permits FROM soak_log WHERE ended IS NOT NULL
), events AS (
    SELECT name, s AS t, w AS d FROM spans
    UNION ALL
    SELECT name, e, -w FROM spans
), depths AS (
    SELECT name, sum(d) OVER (PARTITION BY name ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS depth
      FROM events
)
SELECT name, max(depth), (SELECT count(*) FROM spans p WHERE p.name = d.name)
  FROM depths d GROUP BY name ORDER BY name
"""

WINDOW = """
SELECT count(*), coalesce(max(c), 0) FROM (
    SELECT count(*) OVER (ORDER BY claimed_at RANGE BETWEEN %(per)s::interval
                          - interval '1 microsecond' PRECEDING AND CURRENT ROW) AS c
      FROM pgsem.claims WHERE name = %(name)s AND rate) w
"""

KEY_OVERLAPS = """
SELECT count(*) FROM pgsem.claims a JOIN pgsem.claims b
    ON b.name = a.name AND b.holder_role = a.holder_role AND b.request_key = a.request_key
   AND b.id > a.id
 WHERE b.claimed_at < coalesce(a.ended_at, a.expires_at)
"""

FIRST_ENDED = 'SELECT coalesce(ended_at, expires_at) <= %s FROM pgsem.claims WHERE id = %s LIMIT 1'


def rows(conn, sql, params):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def never_more_than_n(conn):
    found = rows(conn, DEPTH, {'names': sorted(names.SEMAPHORES)})
    over = [(name, depth) for name, depth, _ in found if depth > names.SEMAPHORES[name]]
    seen = ', '.join(f'{name}: at most {depth} of {names.SEMAPHORES[name]} '
                     f'({spans} holds)' for name, depth, spans in found)
    # Every semaphore must have been held, or the sweep proved nothing.
    ok = not over and len(found) == len(names.SEMAPHORES)
    return ok, seen or 'no holds at all'


def window_within_n(conn):
    grants, widest = rows(conn, WINDOW, {'name': names.WINDOW, 'per': names.WINDOW_PER})[0]
    return (grants > 0 and widest <= names.WINDOW_N,
            f'{grants} permits of {names.WINDOW} granted, at most {widest} in any '
            f'{names.WINDOW_PER} (n = {names.WINDOW_N})')


def keyed_retries(conn, retries):
    overlaps = rows(conn, KEY_OVERLAPS, {})[0][0]
    same = sum(1 for first, again, _ in retries if again == first)
    wrong = []
    for first, again, at in retries:
        if again == first:
            continue
        ended = rows(conn, FIRST_ENDED, (at, first))
        if not ended or not ended[0][0]:
            wrong.append((first, again))
    ok = overlaps == 0 and not wrong and same > 0
    return ok, (f'{len(retries)} retries of granted keyed claims: {same} answered the same id, '
                f'{len(retries) - same - len(wrong)} another after the first had ended, '
                f'{len(wrong)} another while it lived {wrong[:5]}; {overlaps} overlapping '
                f'claims of one key')
