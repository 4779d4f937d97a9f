\echo Use "ALTER EXTENSION pgsem UPDATE TO '1.1'" to load this file. \quit

-- pgsem 1.0 -> 1.1. A fresh CREATE EXTENSION pgsem runs pgsem--1.0.sql and then this script, so
-- a fresh 1.1 install and an upgraded one have the same objects. Conventions as in 1.0; the views
-- are redefined with CREATE OR REPLACE, which only appends columns (dependent views keep
-- working) and is safe here: they are members of this extension already.

------------------------------------------------------------------------------------------------
-- Claims of open and prepared transactions are visible
------------------------------------------------------------------------------------------------

-- Every unended claim, committed or not, read with a dirty snapshot: an uncommitted claim holds
-- its slot already, and the views must show who holds it. Reached through the views only (the
-- schema pgsem is closed to PUBLIC).
CREATE FUNCTION pgsem.live_claims(
    OUT id bigint, OUT name text, OUT slot integer, OUT n integer,
    OUT claimed_at timestamptz, OUT expires_at timestamptz, OUT lease interval,
    OUT pid integer, OUT role oid, OUT application_name text,
    OUT committed boolean, OUT xid xid, OUT transaction_pid integer,
    OUT transaction_started timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'pgsem_live_claims'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

------------------------------------------------------------------------------------------------
-- Claims that wait their turn, and claims scoped to a transaction or a session
------------------------------------------------------------------------------------------------

-- sem_claim gains a fourth argument: how long to wait in line for a slot. Three-argument calls
-- keep their meaning (wait 0: answer at once). The 1.0 entry point stays in the library for 1.0
-- installs that run on it until they are updated.
--
-- A function's arguments cannot change in place, so sem_claim is dropped and created anew. What a
-- DBA set on the old one carries over: its owner and its privileges (a DBA who revoked it from
-- PUBLIC must not find it open again), and those privileges stay the DBA's own rather than the
-- extension's initial ones, so pg_dump still dumps them. Objects of the DBA's that call the old
-- function (a view, a BEGIN ATOMIC function) stop the update with a clear error, nothing changed.
--
-- The block runs as a superuser with the extension's schema on its search_path, where whoever may
-- create objects there can plant an operator or function that matches an unqualified call better
-- than pg_catalog's: every operator and function in it is schema-qualified. (Those of 1.1 as
-- first published were not; this mend changed no object the script creates. README "Security".)
DO $update$
DECLARE
    old_function regprocedure := '@extschema@.sem_claim(text, integer, interval)'::regprocedure;
    new_function regprocedure;
    old_owner oid;
    saved aclitem[];
    dependents text;
    grantee record;
BEGIN
    SELECT pg_catalog.string_agg(
               CASE WHEN d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::regclass
                    THEN pg_catalog.pg_describe_object('pg_catalog.pg_class'::regclass,  -- the view
                                                       r.ev_class, 0)
                    ELSE pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)
               END, ', ')
      INTO dependents
      FROM pg_catalog.pg_depend d
      LEFT JOIN pg_catalog.pg_rewrite r
        ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::regclass
       AND r.oid OPERATOR(pg_catalog.=) d.objid
     WHERE refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::regclass
       AND refobjid OPERATOR(pg_catalog.=) old_function
       AND deptype OPERATOR(pg_catalog.=) 'n';
    IF dependents IS NOT NULL THEN
        RAISE EXCEPTION 'pgsem 1.1 replaces sem_claim(text, integer, interval), and % depends on it',
                        dependents
              USING ERRCODE = 'dependent_objects_still_exist',
                    HINT = 'Drop those objects, run ALTER EXTENSION pgsem UPDATE, and create them '
                           'again unchanged: three-argument calls of sem_claim keep their meaning.';
    END IF;
    SELECT proowner, proacl INTO old_owner, saved FROM pg_catalog.pg_proc
     WHERE oid OPERATOR(pg_catalog.=) old_function;

    DROP FUNCTION @extschema@.sem_claim(text, integer, interval);
    CREATE FUNCTION @extschema@.sem_claim(name text, n integer,
                                          timeout interval DEFAULT '90 seconds',
                                          wait interval DEFAULT '0')
        RETURNS bigint
        AS 'MODULE_PATHNAME', 'pgsem_sem_claim_1_1'
        LANGUAGE C VOLATILE PARALLEL UNSAFE;
    new_function := '@extschema@.sem_claim(text, integer, interval, interval)'::regprocedure;

    IF old_owner OPERATOR(pg_catalog.<>) (SELECT proowner FROM pg_catalog.pg_proc
                                            WHERE oid OPERATOR(pg_catalog.=) new_function) THEN
        EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', new_function,
                                  pg_catalog.pg_get_userbyid(old_owner));
    END IF;
    IF saved IS NOT NULL THEN  -- NULL: the default privileges, which the new function has too
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', new_function);
        FOR grantee IN
            SELECT a.grantee AS role, pg_catalog.bool_or(a.is_grantable) AS grantable
              FROM pg_catalog.aclexplode(saved) a
             WHERE a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'
               AND a.grantee OPERATOR(pg_catalog.<>) old_owner
             GROUP BY a.grantee
        LOOP
            EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s%s', new_function,
                CASE WHEN grantee.role OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                     ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(grantee.role)) END,
                CASE WHEN grantee.grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        END LOOP;
        DELETE FROM pg_catalog.pg_init_privs
         WHERE classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::regclass
           AND objoid OPERATOR(pg_catalog.=) new_function
           AND objsubid OPERATOR(pg_catalog.=) 0;
    END IF;
END
$update$;
COMMENT ON FUNCTION @extschema@.sem_claim(text, integer, interval, interval) IS
    'takes a free slot below n of semaphore name for a lease of timeout, waiting in line up to wait; the claim id, or NULL';

CREATE FUNCTION @extschema@.sem_claim_xact(name text, n integer, wait interval DEFAULT '0')
    RETURNS integer
    AS 'MODULE_PATHNAME', 'pgsem_sem_claim_xact'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_claim_xact(text, integer, interval) IS
    'takes a free slot below n of semaphore name until this transaction ends, waiting in line up to wait; the slot, or NULL';

CREATE FUNCTION @extschema@.sem_claim_session(name text, n integer, wait interval DEFAULT '0')
    RETURNS integer
    AS 'MODULE_PATHNAME', 'pgsem_sem_claim_session'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_claim_session(text, integer, interval) IS
    'takes a free slot below n of semaphore name until released or this session ends, waiting in line up to wait; the slot, or NULL';

CREATE FUNCTION @extschema@.sem_release_session(name text, slot integer)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_sem_release_session'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_release_session(text, integer) IS
    'gives back a session claim of this session; false if it holds none of that slot';

-- Transaction and session claims are locks, and waits are places in line: the lock manager says
-- who holds and who waits; a registry in shared memory adds names and times. Reached through the
-- views only.
CREATE FUNCTION pgsem.lock_claims(
    OUT name text, OUT slot integer, OUT kind text, OUT n integer, OUT since timestamptz,
    OUT pid integer, OUT role oid, OUT application_name text,
    OUT transaction_started timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'pgsem_lock_claims'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION pgsem.waiters(
    OUT name text, OUT n integer, OUT kind text, OUT pid integer, OUT role oid,
    OUT application_name text, OUT waiting_since timestamptz, OUT "position" integer)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'pgsem_waiters'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE OR REPLACE VIEW @extschema@.sem_holders AS
    SELECT c.name COLLATE pg_catalog."C" AS name, c.slot, c.id, c.claimed_at, c.expires_at,
           c.pid, c.role::pg_catalog.regrole AS role, c.application_name, c.committed,
           p.gid AS prepared_gid,
           CASE WHEN NOT c.committed
                THEN COALESCE(p.prepared, c.transaction_started) END AS open_since,
           'lease' AS kind
      FROM pgsem.live_claims() c
      LEFT JOIN pg_catalog.pg_prepared_xacts p
        ON p.transaction OPERATOR(pg_catalog.=) c.xid
     WHERE NOT c.committed
        OR c.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
    UNION ALL
    SELECT l.name COLLATE pg_catalog."C", l.slot, NULL, l.since, NULL, l.pid,
           l.role::pg_catalog.regrole, l.application_name, NULL, NULL, l.transaction_started,
           l.kind
      FROM pgsem.lock_claims() l;
COMMENT ON VIEW @extschema@.sem_holders IS
    'one row per held slot: live leases, leases of transactions still open or prepared, transaction and session claims';

CREATE OR REPLACE VIEW @extschema@.sem_summary AS
    SELECT a.name,
           pg_catalog.count(*) FILTER (
               WHERE a.kind OPERATOR(pg_catalog.<>) 'waiting'
                 AND (a.kind OPERATOR(pg_catalog.<>) 'lease' OR NOT a.committed
                      OR a.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()))
               AS live,
           pg_catalog.count(*) FILTER (
               WHERE a.kind OPERATOR(pg_catalog.=) 'lease' AND a.committed
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
                   c.expires_at, c.n
              FROM pgsem.live_claims() c
            UNION ALL
            SELECT l.name COLLATE pg_catalog."C", l.kind, NULL, NULL, l.n
              FROM pgsem.lock_claims() l
             WHERE l.name IS NOT NULL
            UNION ALL
            SELECT w.name COLLATE pg_catalog."C", 'waiting', NULL, NULL, w.n
              FROM pgsem.waiters() w) a
     GROUP BY a.name;
COMMENT ON VIEW @extschema@.sem_summary IS
    'per semaphore with claims or waiters: claims holding a slot by kind, expired claims whose slot no claimer has reused yet, waiters';

CREATE VIEW @extschema@.sem_waiters AS
    SELECT w.name COLLATE pg_catalog."C" AS name, w.n, w.pid,
           w.role::pg_catalog.regrole AS role, w.waiting_since, w."position", w.kind,
           w.application_name
      FROM pgsem.waiters() w;
COMMENT ON VIEW @extschema@.sem_waiters IS
    'one row per claim waiting in line for a slot; position 1 is the first waiter';
GRANT SELECT ON @extschema@.sem_waiters TO PUBLIC;

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
      FROM pgsem.live_claims() u
     WHERE NOT u.committed;
COMMENT ON VIEW @extschema@.sem_history IS
    'every claim still kept: held, released, timed out (the holder never released it), or uncommitted';

------------------------------------------------------------------------------------------------
-- Logical replication passes pgsem.claims by
------------------------------------------------------------------------------------------------

-- Claims belong to one database. Row changes that a logical replication worker brings (a FOR
-- ALL TABLES publication includes pgsem.claims) are dropped, so a subscriber's own claims never
-- collide with the publisher's and the subscription keeps flowing; every other writer is left
-- alone. ALWAYS: the workers run with session_replication_role = replica.
CREATE FUNCTION pgsem.skip_replicated_change() RETURNS trigger
    AS 'MODULE_PATHNAME', 'pgsem_skip_replicated_change'
    LANGUAGE C;
CREATE TRIGGER claims_not_replicated
    BEFORE INSERT OR UPDATE OR DELETE ON pgsem.claims
    FOR EACH ROW EXECUTE FUNCTION pgsem.skip_replicated_change();
ALTER TABLE pgsem.claims ENABLE ALWAYS TRIGGER claims_not_replicated;

------------------------------------------------------------------------------------------------
-- The database owner can dump the database
------------------------------------------------------------------------------------------------

-- pg_dump reads the claims and the id sequence (pg_extension_config_dump), so that ids keep
-- growing after a restore. Read access only: nobody but the extension's owner writes them.
GRANT USAGE ON SCHEMA pgsem TO pg_database_owner;
GRANT SELECT ON TABLE pgsem.claims TO pg_database_owner;
GRANT SELECT ON SEQUENCE pgsem.claim_id TO pg_database_owner;
