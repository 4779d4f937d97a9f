-- Tables for the plain-SQL approaches, next to pgsem, in one database.
CREATE EXTENSION pgsem;
CREATE TABLE seed_requests (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    created_at timestamptz NOT NULL,
    completed_at timestamptz,
    timed_out_at timestamptz,
    slot integer NOT NULL
);
CREATE UNIQUE INDEX one_per_slot ON seed_requests (name, slot)
    WHERE completed_at IS NULL AND timed_out_at IS NULL;
CREATE TABLE floor_claims (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    claimed_at timestamptz NOT NULL,
    released_at timestamptz
);
-- The same waiting hand-off made of bare Postgres parts, as a limit for pgsem's waiting cell:
-- a claimer waits in the lock manager's queue of one of 4 session advisory locks (its slot,
-- chosen by the caller), then inserts its claim and commits durably; the release updates it,
-- commits without waiting for the flush (as pgsem's does) and unlocks. No FIFO across slots, no
-- choice of a free slot, no lease, no crash safety for the lock: what pgsem's waits add to this.
CREATE FUNCTION limit_claim(slot integer) RETURNS bigint LANGUAGE sql AS $$
    SELECT pg_advisory_lock(4242, slot);
    INSERT INTO floor_claims (name, claimed_at) VALUES ('limit', now()) RETURNING id;
$$;
CREATE FUNCTION limit_release(claim bigint, slot integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE floor_claims SET released_at = now() WHERE id = claim;
    RETURN pg_advisory_unlock(4242, slot);
END $$;
-- Declared semaphores (1.2): an application role that may claim 'bench-15000001' through a
-- group role it is a member of, against the undeclared 'bench-14000001', both claimed as that
-- role (bench/run.py's "as a role" cells). A few more declarations, so that the lookup is not
-- of a single entry. Skipped where the extension has no declarations (an older build measured
-- by bench/compare_builds.sh).
CREATE ROLE bench_workers;
CREATE ROLE bench_app LOGIN IN ROLE bench_workers;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO bench_app;
DO $$
BEGIN
    IF to_regprocedure('sem_declare(text, integer, interval, interval)') IS NOT NULL THEN
        PERFORM sem_declare('bench-15000001', 4);
        PERFORM sem_grant('bench-15000001', 'bench_workers');
        PERFORM sem_declare('tenant:' || i || ':*', 2) FROM generate_series(1, 20) i;
        PERFORM sem_declare('payments-' || i, 8) FROM generate_series(1, 20) i;
    END IF;
END $$;
