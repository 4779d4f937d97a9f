\echo Use "ALTER EXTENSION pgsem UPDATE TO '1.2'" to load this file. \quit

-- pgsem 1.1 -> 1.2. A fresh CREATE EXTENSION pgsem runs pgsem--1.0.sql, pgsem--1.0--1.1.sql and
-- then this script, so a fresh 1.2 install and an upgraded one have the same objects. Conventions
-- as in 1.0: no CREATE OR REPLACE (but for the extension's own views), no IF NOT EXISTS, every
-- builtin operator and function schema-qualified.

------------------------------------------------------------------------------------------------
-- Bad input is an error, not NULL
------------------------------------------------------------------------------------------------

-- sem_prune_history(NULL) answered NULL (the function was STRICT); it is 22004 now, like every
-- other NULL that pgsem refuses.
ALTER FUNCTION @extschema@.sem_prune_history(bigint) CALLED ON NULL INPUT;

------------------------------------------------------------------------------------------------
-- A lease past its lease that an open transaction still holds shows in the views
------------------------------------------------------------------------------------------------

-- A fence, or a release or renewal in flight, keeps a lease's slot past its lease until that
-- transaction ends (claimers count it as held), but the views of 1.1 showed such a claim as free:
-- expired and committed. The rows behind the views gain the transaction that locks each
-- committed claim; pgsem.live_claims() gives way to pgsem.unended_claims(), the same rows with
-- those three columns more, served by the same C function. Reached through the views only.
CREATE FUNCTION pgsem.unended_claims(
    OUT id bigint, OUT name text, OUT slot integer, OUT n integer,
    OUT claimed_at timestamptz, OUT expires_at timestamptz, OUT lease interval,
    OUT pid integer, OUT role oid, OUT application_name text,
    OUT committed boolean, OUT xid xid, OUT transaction_pid integer,
    OUT transaction_started timestamptz,
    OUT locker_xid xid, OUT locker_pid integer, OUT locker_started timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'pgsem_live_claims'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE OR REPLACE VIEW @extschema@.sem_holders AS
    SELECT c.name COLLATE pg_catalog."C" AS name, c.slot, c.id, c.claimed_at, c.expires_at,
           c.pid, c.role::pg_catalog.regrole AS role, c.application_name, c.committed,
           p.gid AS prepared_gid,
           CASE WHEN NOT c.committed
                THEN COALESCE(p.prepared, c.transaction_started)
                WHEN c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
                THEN COALESCE(p.prepared, c.locker_started) END AS open_since,
           'lease' AS kind
      FROM pgsem.unended_claims() c
      LEFT JOIN pg_catalog.pg_prepared_xacts p
        ON p.transaction OPERATOR(pg_catalog.=)
           CASE WHEN NOT c.committed THEN c.xid
                WHEN c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
                THEN c.locker_xid END
     WHERE NOT c.committed
        OR c.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
        OR c.locker_xid IS NOT NULL
    UNION ALL
    SELECT l.name COLLATE pg_catalog."C", l.slot, NULL, l.since, NULL, l.pid,
           l.role::pg_catalog.regrole, l.application_name, NULL, NULL, l.transaction_started,
           l.kind
      FROM pgsem.lock_claims() l;
COMMENT ON VIEW @extschema@.sem_holders IS
    'one row per held slot: live leases, leases of transactions still open or prepared, leases past their lease that an open or prepared transaction fences or changes, transaction and session claims';

CREATE OR REPLACE VIEW @extschema@.sem_summary AS
    SELECT a.name,
           pg_catalog.count(*) FILTER (
               WHERE a.kind OPERATOR(pg_catalog.<>) 'waiting'
                 AND (a.kind OPERATOR(pg_catalog.<>) 'lease' OR NOT a.committed OR a.locked
                      OR a.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()))
               AS live,
           pg_catalog.count(*) FILTER (
               WHERE a.kind OPERATOR(pg_catalog.=) 'lease' AND a.committed AND NOT a.locked
                 AND a.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())
               AS expired_unreaped,
           pg_catalog.max(a.n) FILTER (WHERE a.kind OPERATOR(pg_catalog.<>) 'waiting') AS max_n,
           pg_catalog.count(*) FILTER (
               WHERE a.kind OPERATOR(pg_catalog.=) 'lease' AND NOT a.committed) AS uncommitted,
           pg_catalog.count(*) FILTER (WHERE a.kind OPERATOR(pg_catalog.=) 'transaction')
               AS transaction_claims,
           pg_catalog.count(*) FILTER (WHERE a.kind OPERATOR(pg_catalog.=) 'session')
               AS session_claims,
           pg_catalog.count(*) FILTER (WHERE a.kind OPERATOR(pg_catalog.=) 'waiting')
               AS waiting
      FROM (SELECT c.name COLLATE pg_catalog."C" AS name, 'lease' AS kind, c.committed,
                   c.locker_xid IS NOT NULL AS locked, c.expires_at, c.n
              FROM pgsem.unended_claims() c
            UNION ALL
            SELECT l.name COLLATE pg_catalog."C", l.kind, NULL, NULL, NULL, l.n
              FROM pgsem.lock_claims() l
             WHERE l.name IS NOT NULL
            UNION ALL
            SELECT w.name COLLATE pg_catalog."C", 'waiting', NULL, NULL, NULL, w.n
              FROM pgsem.waiters() w) a
     GROUP BY a.name;
COMMENT ON VIEW @extschema@.sem_summary IS
    'per semaphore with claims or waiters: claims holding a slot by kind, expired claims whose slot no claimer has reused yet, waiters';

CREATE OR REPLACE VIEW @extschema@.sem_history AS
    SELECT c.id, c.name, c.slot, c.slots AS n, c.claimed_at, c.expires_at, c.lease,
           CASE WHEN c.ended_at IS NOT NULL THEN c.outcome
                WHEN c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
                    THEN 'timed out'
                ELSE 'held' END AS status,
           CASE WHEN c.ended_at IS NOT NULL THEN c.ended_at
                WHEN c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
                    THEN c.expires_at END AS ended_at,
           c.holder_pid AS pid, c.holder_role::pg_catalog.regrole AS role, c.application_name
      FROM pgsem.claims c
    UNION ALL
    SELECT u.id, u.name COLLATE pg_catalog."C", u.slot, u.n, u.claimed_at, u.expires_at, u.lease,
           'uncommitted', NULL, u.pid, u.role::pg_catalog.regrole, u.application_name
      FROM pgsem.unended_claims() u
     WHERE NOT u.committed;

DROP FUNCTION pgsem.live_claims();
