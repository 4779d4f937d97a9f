#!/usr/bin/env python3
"""pgsem from Python (psycopg2): the README's client-side FNV-1a 64, advisory locks shared with
SQL, the seed article's unsigned-hash bug, and semaphores across connections and transactions.

Connects with the PG* environment variables (test/suites/client.sh sets PGDATABASE=pgsem_client,
a database with the extension). Prints one line per case and ends with the machine-readable line
    client-python: P passed, F failed
Exit status 0 only when every case passed. PGSEM_TEST_SEED fixes the random keys.
"""

import os
import random
import re
import sys
import threading
import time
import traceback

import psycopg2
import psycopg2.errorcodes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme  # noqa: E402


# --- The README's client-side code, read from the README itself ------------------------------------

def readme_block(language, marker):
    return readme.block(__file__, language, marker)


# The README blocks this file runs, pinned (test/lib/readme_blocks.py): change a pin only after
# checking that the cases below still test what the block says. readme-pin 03f90b0c5bb695c1


class RecordingCursor:
    """Stands in for the cursor of the README's usage line when its function is loaded."""

    def __init__(self):
        self.calls = []

    def execute(self, sql, params=()):
        self.calls.append((sql, params))


README_FNV_BLOCK = readme_block('python', 'def fnv1a_64')
_readme = {'cursor': RecordingCursor()}
exec(compile(README_FNV_BLOCK, 'README.md', 'exec'), _readme)
fnv1a_64 = _readme['fnv1a_64']
README_USAGE_CALLS = _readme['cursor'].calls

# --- end of the README's code ----------------------------------------------------------------------


TWO_63 = 1 << 63
TWO_64 = 1 << 64
STATEMENT_TIMEOUT_MS = 20000  # no case may hang the suite


def unsigned(key: str) -> int:
    """The seed article's value: the same 64 bits read as unsigned (>= 2^63 for half the keys)."""
    return fnv1a_64(key) % TWO_64


def connect(autocommit=False):
    conn = psycopg2.connect('', application_name='pgsem-client-python',
                            options=f'-c statement_timeout={STATEMENT_TIMEOUT_MS}')
    conn.autocommit = autocommit
    return conn


def one(conn, sql, params=()):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchone()[0]


def sqlstate_of(conn, sql, params=()):
    """Runs sql expecting an error; returns its SQLSTATE (None when it succeeded)."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
        return None
    except psycopg2.Error as e:
        return e.pgcode
    finally:
        conn.rollback()


def check(condition, message):
    if not condition:
        raise AssertionError(message)


# --- random keys -----------------------------------------------------------------------------------

SEED = int(os.environ.get('PGSEM_TEST_SEED', str(int(time.time()))))
RNG = random.Random(SEED)

# Code points from several scripts and planes; no NUL (text cannot hold it) and no surrogates.
ALPHABETS = [
    [chr(c) for c in range(0x20, 0x7f)],                     # ASCII printable
    [chr(c) for c in range(0xa0, 0x250)],                    # Latin-1, Latin Extended
    [chr(c) for c in range(0x400, 0x500)],                   # Cyrillic
    [chr(c) for c in range(0x4e00, 0x4f00)],                 # CJK
    [chr(c) for c in range(0x1f300, 0x1f650)],               # emoji (4-byte UTF-8)
    ['\t', '\n', '\r', '\\', "'", '"', '%', '\u0301', '\u200d', '\ufeff', '\U0010fffd'],
]


def random_key():
    length = RNG.choice([0, 1, 2, 3, 5, 8, 13, 21, 40, RNG.randint(0, 200)])
    alphabet = RNG.choice(ALPHABETS + [sum(ALPHABETS, [])])
    return ''.join(RNG.choice(alphabet) for _ in range(length))


def key_at_least_2_63(prefix):
    """A key whose unsigned hash is 2^63 or more (about every second key is)."""
    i = 0
    while unsigned(f'{prefix}-{i}') < TWO_63:
        i += 1
    return f'{prefix}-{i}'


def key_below_2_63(prefix):
    i = 0
    while unsigned(f'{prefix}-{i}') >= TWO_63:
        i += 1
    return f'{prefix}-{i}'


def server_hashes(conn, keys):
    with conn.cursor() as cur:
        cur.execute('SELECT k, fnv1a_64(k) FROM unnest(%s::text[]) WITH ORDINALITY AS u(k, i) '
                    'ORDER BY i', (keys,))
        rows = cur.fetchall()
    conn.rollback()
    check([r[0] for r in rows] == keys, 'the keys did not survive the round trip unchanged')
    return [r[1] for r in rows]


# --- cases -----------------------------------------------------------------------------------------

def test_extension_installed(conn):
    check(one(conn, "SELECT count(*) FROM pg_extension WHERE extname = 'pgsem'") == 1,
          'extension pgsem is not installed in this database')
    check(one(conn, 'SHOW server_encoding') == 'UTF8', 'the database encoding is not UTF8')
    conn.rollback()


def test_known_values(conn):
    expected = {'223 345': 3755351481708176604, '': -3750763034362895579,
                'a': -5808556873153909620, 'foobar': -8821353812377114648}
    for key, value in expected.items():
        check(fnv1a_64(key) == value, f'fnv1a_64({key!r}) = {fnv1a_64(key)}, expected {value}')
        server = one(conn, 'SELECT fnv1a_64(%s)', (key,))
        check(server == value, f'server fnv1a_64({key!r}) = {server}, expected {value}')
    conn.rollback()


def test_1000_random_keys_agree(conn):
    keys = ['', '223 345', 'é', 'ключ', '鍵', '🔒', 'e\u0301', 'tab\there', 'line\nbreak']
    keys += [key_at_least_2_63(f'high{i}') for i in range(5)]
    keys += [random_key() for _ in range(1000 - len(keys))]
    check(len(keys) == 1000, 'expected 1000 keys')
    server = server_hashes(conn, keys)
    mismatches = [(k, fnv1a_64(k), s) for k, s in zip(keys, server) if fnv1a_64(k) != s]
    for k, mine, theirs in mismatches[:5]:
        print(f'#   mismatch: key {k!r}: python {mine}, server {theirs}')
    check(not mismatches, f'{len(mismatches)} of 1000 keys hash differently')
    high = sum(1 for k in keys if unsigned(k) >= TWO_63)
    non_ascii = sum(1 for k in keys if any(ord(c) > 127 for c in k))
    check(high >= 300, f'only {high} keys had an unsigned hash >= 2^63')
    check(non_ascii >= 300, f'only {non_ascii} keys had non-ASCII characters')
    print(f'#   1000 keys agree ({high} with unsigned hash >= 2^63, {non_ascii} non-ASCII)')


def test_keys_at_least_2_63_agree(conn):
    keys = [key_at_least_2_63(f'big{i}') for i in range(100)]
    server = server_hashes(conn, keys)
    for k, s in zip(keys, server):
        check(s < 0, f'server hash of {k!r} should be negative, is {s}')
        check(fnv1a_64(k) == s, f'{k!r}: python {fnv1a_64(k)}, server {s}')
        check(-TWO_63 <= fnv1a_64(k) < TWO_63, f'{k!r}: {fnv1a_64(k)} is not a bigint')


def test_python_lock_blocks_sql_text_lock(conn):
    """pg_advisory_xact_lock(client hash) in one connection; advisory_try_lock_text elsewhere."""
    other = connect()
    try:
        for key in ('223 345', key_at_least_2_63('py-lock'), 'ключ-🔒'):
            one(conn, 'SELECT pg_advisory_xact_lock(%s)', (fnv1a_64(key),))
            check(one(other, 'SELECT advisory_try_lock_text(%s)', (key,)) is False,
                  f'{key!r}: advisory_try_lock_text got the lock the client hash holds')
            check(one(other, 'SELECT advisory_try_lock_text_shared(%s)', (key,)) is False,
                  f'{key!r}: advisory_try_lock_text_shared got it too')
            other.rollback()
            conn.rollback()  # ends the transaction: the lock goes
            check(one(other, 'SELECT advisory_try_lock_text(%s)', (key,)) is True,
                  f'{key!r}: advisory_try_lock_text failed after the client lock went')
            other.rollback()
    finally:
        other.close()


def test_sql_text_lock_blocks_python_lock(conn):
    """And vice versa: advisory_lock_text(key) blocks pg_try_advisory_xact_lock(client hash)."""
    other = connect()
    try:
        for key in ('223 345', key_at_least_2_63('py-lock-rev'), ''):
            one(other, 'SELECT advisory_lock_text(%s)::text', (key,))
            check(one(conn, 'SELECT pg_try_advisory_xact_lock(%s)', (fnv1a_64(key),)) is False,
                  f'{key!r}: pg_try_advisory_xact_lock(client hash) got a lock SQL holds')
            conn.rollback()
            other.rollback()
            check(one(conn, 'SELECT pg_try_advisory_xact_lock(%s)', (fnv1a_64(key),)) is True,
                  f'{key!r}: pg_try_advisory_xact_lock failed after the SQL lock went')
            conn.rollback()
        # Session locks and shared locks too.
        key = key_at_least_2_63('py-session')
        other.autocommit = True
        one(other, 'SELECT advisory_session_lock_text(%s)::text', (key,))
        check(one(conn, 'SELECT pg_try_advisory_lock(%s)', (fnv1a_64(key),)) is False,
              'pg_try_advisory_lock(client hash) got a session lock SQL holds')
        check(one(other, 'SELECT advisory_session_unlock_text(%s)', (key,)) is True,
              'advisory_session_unlock_text did not release')
        check(one(conn, 'SELECT pg_try_advisory_lock(%s)', (fnv1a_64(key),)) is True,
              'pg_try_advisory_lock(client hash) failed after the unlock')
        check(one(conn, 'SELECT pg_advisory_unlock(%s)', (fnv1a_64(key),)) is True,
              'pg_advisory_unlock(client hash) did not release')
        conn.rollback()
        other.autocommit = False
        one(other, 'SELECT pg_advisory_xact_lock_shared(%s)::text', (fnv1a_64(key),))
        check(one(conn, 'SELECT advisory_try_lock_text_shared(%s)', (key,)) is True,
              'a shared text lock conflicts with a shared client-hash lock')
        check(one(conn, 'SELECT advisory_try_lock_text(%s)', (key,)) is False,
              'an exclusive text lock did not conflict with a shared client-hash lock')
        conn.rollback()
        other.rollback()
    finally:
        other.close()


def test_seed_unsigned_value_is_rejected(conn):
    """The seed article sent the unsigned hash. For a key >= 2^63 Postgres refuses it."""
    key = key_at_least_2_63('seed')
    bad = unsigned(key)
    check(bad > TWO_63 - 1, 'the unsigned value should not fit a bigint')
    # psycopg2 sends a Python int as a bare literal: a number beyond bigint is a numeric, and there
    # is no pg_advisory_xact_lock(numeric).
    state = sqlstate_of(conn, 'SELECT pg_advisory_xact_lock(%s)', (bad,))
    check(state == psycopg2.errorcodes.UNDEFINED_FUNCTION,
          f'pg_advisory_xact_lock(%s) with {bad}: SQLSTATE {state}, expected 42883')
    # Cast to bigint, as a typed parameter would be: 22003 numeric_value_out_of_range.
    state = sqlstate_of(conn, 'SELECT pg_advisory_xact_lock(%s::bigint)', (bad,))
    check(state == psycopg2.errorcodes.NUMERIC_VALUE_OUT_OF_RANGE,
          f'pg_advisory_xact_lock(%s::bigint) with {bad}: SQLSTATE {state}, expected 22003')
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT pg_advisory_xact_lock(%s::bigint)', (bad,))
        raise AssertionError('the unsigned value was accepted')
    except psycopg2.errors.NumericValueOutOfRange as e:
        check('out of range' in str(e), f'unexpected message: {e}')
    finally:
        conn.rollback()
    # The signed value works, bare and cast, and is the lock advisory_lock_text takes.
    good = fnv1a_64(key)
    check(good < 0 and good == bad - TWO_64, 'the signed value is the unsigned one minus 2^64')
    one(conn, 'SELECT pg_advisory_xact_lock(%s)::text', (good,))
    one(conn, 'SELECT pg_advisory_xact_lock(%s::bigint)::text', (good,))
    check(one(conn, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND pid = pg_backend_pid()") == 1, 'expected one advisory lock')
    check(one(conn, 'SELECT fnv1a_64(%s) = %s', (key, good)) is True, 'server disagrees')
    conn.rollback()


def release_leftovers(conn, name):
    """A previous run that died may have left live claims (they would expire in 90 s)."""
    with conn.cursor() as cur:
        cur.execute('SELECT sem_release(id) FROM sem_holders WHERE name = %s', (name,))
    conn.commit()


def test_ten_threads_four_slots(conn):
    name = 'py-throttle'
    release_leftovers(conn, name)
    threads_n, slots = 10, 4
    barrier = threading.Barrier(threads_n)
    conns = [connect(autocommit=True) for _ in range(threads_n)]
    results = [None] * threads_n
    errors = []

    def worker(i):
        try:
            barrier.wait(timeout=30)
            results[i] = one(conns[i], 'SELECT sem_claim(%s, %s)', (name, slots))
        except Exception as e:  # reported below
            errors.append(f'thread {i}: {e!r}')

    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(threads_n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        check(not errors, '; '.join(errors))
        ids = [r for r in results if r is not None]
        check(len(ids) == slots and results.count(None) == threads_n - slots,
              f'expected {slots} ids and {threads_n - slots} None, got {results}')
        check(len(set(ids)) == slots, f'claim ids repeat: {ids}')
        with conn.cursor() as cur:
            cur.execute('SELECT slot, id FROM sem_holders WHERE name = %s ORDER BY slot', (name,))
            holders = cur.fetchall()
        conn.rollback()
        check([s for s, _ in holders] == list(range(slots)), f'slots held: {holders}')
        check(sorted(i for _, i in holders) == sorted(ids), 'sem_holders shows other ids')
        # Each holder releases its own claim: true; a second release: false.
        for i, r in enumerate(results):
            if r is not None:
                check(one(conns[i], 'SELECT sem_release(%s)', (r,)) is True,
                      f'release of {r} was not true')
        for i, r in enumerate(results):
            if r is not None:
                check(one(conns[i], 'SELECT sem_release(%s)', (r,)) is False,
                      f'second release of {r} was not false')
        check(one(conn, 'SELECT count(*) FROM sem_holders WHERE name = %s', (name,)) == 0,
              'slots still held after the releases')
        conn.rollback()
    finally:
        for c in conns:
            c.close()


def test_claim_in_open_transaction(conn):
    """A claim in an uncommitted transaction already holds its slot; rollback frees it."""
    name = 'py-txn'
    release_leftovers(conn, name)
    other = connect(autocommit=True)
    try:
        check(conn.autocommit is False, 'conn should not autocommit')
        claim = one(conn, 'SELECT sem_claim(%s, 1)', (name,))
        check(claim is not None, 'the first claim was refused')
        check(one(other, 'SELECT sem_claim(%s, 1)', (name,)) is None,
              'another connection got the slot of an uncommitted claim')
        check(one(other, 'SELECT sem_held(%s)', (claim,)) is True,
              'sem_held() from another connection: the uncommitted claim is not held')
        check(one(other, 'SELECT count(*) FROM sem_holders WHERE name = %s AND NOT committed',
                  (name,)) == 1,
              'sem_holders does not show the uncommitted claim, as not committed, to another '
              'connection')
        conn.rollback()
        check(one(other, 'SELECT sem_held(%s)', (claim,)) is False,
              'the rolled-back claim is still held')
        again = one(other, 'SELECT sem_claim(%s, 1)', (name,))
        check(again is not None, 'the slot was not freed by the rollback')
        check(again > claim, 'claim ids must grow even across a rollback')
        # Committed, the claim is visible to everyone, and its holder releases it.
        check(one(conn, 'SELECT sem_claim(%s, 1)', (name,)) is None, 'slot should be taken')
        conn.rollback()
        check(one(other, 'SELECT sem_release(%s)', (again,)) is True, 'release failed')
        claim = one(conn, 'SELECT sem_claim(%s, 1)', (name,))
        conn.commit()
        check(one(other, 'SELECT count(*) FROM sem_holders WHERE id = %s', (claim,)) == 1,
              'the committed claim is not in sem_holders')
        check(one(conn, 'SELECT sem_release(%s)', (claim,)) is True, 'release failed')
        conn.commit()
    finally:
        other.close()


def test_readme_usage_line(conn):
    """The README's block, run as written with a real cursor, takes advisory_lock_text's lock."""
    check(len(README_USAGE_CALLS) == 1, 'the README block should run one statement')
    sql, params = README_USAGE_CALLS[0]
    check(params == (fnv1a_64('223 345'),) and -TWO_63 <= params[0] < TWO_63,
          f'the README passes {params}, not the signed hash of 223 345')
    other = connect(autocommit=True)
    try:
        with conn.cursor() as cursor:
            exec(compile(README_FNV_BLOCK, 'README.md', 'exec'), {'cursor': cursor})
        check(one(other, "SELECT advisory_try_lock_text('223 345')") is False,
              "after the README's pg_advisory_xact_lock, advisory_try_lock_text('223 345') got it")
        conn.rollback()
        check(one(other, "SELECT advisory_session_try_lock_text('223 345')") is True,
              'the lock should end with the transaction')
        one(other, "SELECT advisory_session_unlock_text('223 345')")
    finally:
        other.close()


CASES = [
    test_extension_installed,
    test_readme_usage_line,
    test_known_values,
    test_1000_random_keys_agree,
    test_keys_at_least_2_63_agree,
    test_python_lock_blocks_sql_text_lock,
    test_sql_text_lock_blocks_python_lock,
    test_seed_unsigned_value_is_rejected,
    test_ten_threads_four_slots,
    test_claim_in_open_transaction,
]


def main():
    print(f'# PGSEM_TEST_SEED={SEED}')
    passed = failed = 0
    try:
        conn = connect()
    except psycopg2.Error as e:
        print(f'not ok - connect: {e}')
        print('client-python: 0 passed, 1 failed')
        return 1
    for n, case in enumerate(CASES, 1):
        name = case.__name__[len('test_'):]
        try:
            case(conn)
            passed += 1
            print(f'ok {n} - {name}')
        except Exception as e:  # a case fails, the run goes on
            failed += 1
            first_line = (str(e).strip().splitlines() or [type(e).__name__])[0]
            print(f'not ok {n} - {name}: {first_line}')
            for line in traceback.format_exc().rstrip().splitlines():
                print(f'#   {line}')
            try:
                conn.rollback()
            except psycopg2.Error:
                conn.close()
                conn = connect()
    conn.close()
    print(f'client-python: {passed} passed, {failed} failed')
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
