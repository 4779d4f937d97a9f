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

CREATE OR REPLACE VIEW @extschema@.sem_holders AS
    SELECT c.name COLLATE pg_catalog."C" AS name, c.slot, c.id, c.claimed_at, c.expires_at,
           c.pid, c.role::pg_catalog.regrole AS role, c.application_name, c.committed, p.gid AS prepared_gid,
           CASE WHEN NOT c.committed
                THEN COALESCE(p.prepared, c.transaction_started) END AS open_since
      FROM pgsem.live_claims() c
      LEFT JOIN pg_catalog.pg_prepared_xacts p
        ON p.transaction OPERATOR(pg_catalog.=) c.xid
     WHERE NOT c.committed
        OR c.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp();
COMMENT ON VIEW @extschema@.sem_holders IS
    'one row per held slot: live claims, and claims of transactions still open or prepared';

CREATE OR REPLACE VIEW @extschema@.sem_summary AS
    SELECT c.name COLLATE pg_catalog."C" AS name,
           pg_catalog.count(*) FILTER (
               WHERE NOT c.committed
                  OR c.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()) AS live,
           pg_catalog.count(*) FILTER (
               WHERE c.committed
                 AND c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())
               AS expired_unreaped,
           pg_catalog.max(c.n) AS max_n,
           pg_catalog.count(*) FILTER (WHERE NOT c.committed) AS uncommitted
      FROM pgsem.live_claims() c
     GROUP BY c.name COLLATE pg_catalog."C";
COMMENT ON VIEW @extschema@.sem_summary IS
    'per semaphore: claims holding a slot (uncommitted ones among them), and expired claims whose slot no claimer has reused yet';

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
