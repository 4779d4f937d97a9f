\echo Use "CREATE EXTENSION pgsem" to load this file. \quit

-- pgsem 1.0. Conventions (see README "Security"): no CREATE OR REPLACE, no IF NOT EXISTS,
-- builtin operators and functions schema-qualified. None of the C functions changes the current
-- user or resolves a name through search_path (they reach pgsem.claims by schema and name, and
-- everything else by OID), so none needs SECURITY DEFINER or a pinned search_path.

------------------------------------------------------------------------------------------------
-- FNV-1a 64 and text-keyed advisory locks
------------------------------------------------------------------------------------------------

CREATE FUNCTION @extschema@.fnv1a_64(key text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'pgsem_fnv1a_64_text'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.fnv1a_64(text) IS
    '64-bit FNV-1a of the key''s bytes in the database encoding, as a two''s-complement bigint';

CREATE FUNCTION @extschema@.fnv1a_64(key bytea) RETURNS bigint
    AS 'MODULE_PATHNAME', 'pgsem_fnv1a_64_bytea'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.fnv1a_64(bytea) IS
    '64-bit FNV-1a of the bytes, as a two''s-complement bigint';

-- Each lock function takes exactly the lock its pg_advisory_* twin takes on fnv1a_64(key).
-- They are not STRICT: a null key is an error, never a silent "locked nothing".
CREATE FUNCTION @extschema@.advisory_lock_text(key text) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_advisory_lock_text'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_lock_text(text) IS
    'pg_advisory_xact_lock(fnv1a_64(key)): exclusive, until the transaction ends';

CREATE FUNCTION @extschema@.advisory_lock_text_shared(key text) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_advisory_lock_text_shared'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_lock_text_shared(text) IS
    'pg_advisory_xact_lock_shared(fnv1a_64(key)): shared, until the transaction ends';

CREATE FUNCTION @extschema@.advisory_try_lock_text(key text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_advisory_try_lock_text'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_try_lock_text(text) IS
    'pg_try_advisory_xact_lock(fnv1a_64(key)): exclusive if free now, until the transaction ends';

CREATE FUNCTION @extschema@.advisory_try_lock_text_shared(key text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_advisory_try_lock_text_shared'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_try_lock_text_shared(text) IS
    'pg_try_advisory_xact_lock_shared(fnv1a_64(key)): shared if available now';

CREATE FUNCTION @extschema@.advisory_session_lock_text(key text) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_advisory_session_lock_text'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_session_lock_text(text) IS
    'pg_advisory_lock(fnv1a_64(key)): exclusive, until unlocked or the session ends';

CREATE FUNCTION @extschema@.advisory_session_lock_text_shared(key text) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_advisory_session_lock_text_shared'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_session_lock_text_shared(text) IS
    'pg_advisory_lock_shared(fnv1a_64(key)): shared, until unlocked or the session ends';

CREATE FUNCTION @extschema@.advisory_session_try_lock_text(key text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_advisory_session_try_lock_text'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_session_try_lock_text(text) IS
    'pg_try_advisory_lock(fnv1a_64(key)): exclusive if free now, until unlocked';

CREATE FUNCTION @extschema@.advisory_session_try_lock_text_shared(key text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_advisory_session_try_lock_text_shared'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_session_try_lock_text_shared(text) IS
    'pg_try_advisory_lock_shared(fnv1a_64(key)): shared if available now, until unlocked';

CREATE FUNCTION @extschema@.advisory_session_unlock_text(key text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_advisory_session_unlock_text'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_session_unlock_text(text) IS
    'pg_advisory_unlock(fnv1a_64(key))';

CREATE FUNCTION @extschema@.advisory_session_unlock_text_shared(key text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_advisory_session_unlock_text_shared'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.advisory_session_unlock_text_shared(text) IS
    'pg_advisory_unlock_shared(fnv1a_64(key))';

------------------------------------------------------------------------------------------------
-- Leased counting semaphores
------------------------------------------------------------------------------------------------

-- Internal objects live in a schema of their own that PUBLIC cannot use: only the extension's
-- owner can read or write the table directly; everyone else goes through the functions and views.
CREATE SCHEMA pgsem;
REVOKE ALL ON SCHEMA pgsem FROM PUBLIC;

-- Claim ids: fencing tokens. A sequence never hands out a value twice, also across crashes.
CREATE SEQUENCE pgsem.claim_id AS bigint NO CYCLE;

CREATE TABLE pgsem.claims (
    id               bigint      NOT NULL,
    name             text        COLLATE "C" NOT NULL,  -- names compare bytewise
    slot             integer     NOT NULL,
    slots            integer     NOT NULL,               -- the n this claim was made with
    claimed_at       timestamptz NOT NULL,               -- server clock when granted
    expires_at       timestamptz NOT NULL,
    lease            interval    NOT NULL,
    ended_at         timestamptz,                        -- NULL while the row holds its slot
    outcome          text,                               -- 'released' or 'timed out'
    holder_pid       integer     NOT NULL,
    holder_role      oid         NOT NULL,
    application_name text        NOT NULL,
    CONSTRAINT claims_pkey PRIMARY KEY (id)
);
-- No CHECK constraints: only the C functions write this table and they validate every value
-- (slot in [0, slots), outcome set exactly when ended_at is); a CHECK would be compiled again on
-- every claim and release, a measurable share of their cost.
REVOKE ALL ON TABLE pgsem.claims FROM PUBLIC;
REVOKE ALL ON SEQUENCE pgsem.claim_id FROM PUBLIC;

-- The final arbiter: at most one unended row per slot of a semaphore.
CREATE UNIQUE INDEX claims_live_slot ON pgsem.claims (name, slot) WHERE ended_at IS NULL;

-- pg_dump keeps the history and, above all, the id sequence: ids must never repeat.
SELECT pg_catalog.pg_extension_config_dump('pgsem.claims', '');
SELECT pg_catalog.pg_extension_config_dump('pgsem.claim_id', '');

CREATE FUNCTION @extschema@.sem_claim(name text, n integer,
                                      timeout interval DEFAULT '90 seconds')
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'pgsem_sem_claim'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_claim(text, integer, interval) IS
    'takes a free slot below n of semaphore name for a lease of timeout; the claim id, or NULL when all are held';

CREATE FUNCTION @extschema@.sem_release(id bigint) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_sem_release'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_release(bigint) IS
    'gives a claim''s slot back; true if it was live, false if released, timed out or unknown';

CREATE FUNCTION @extschema@.sem_renew(id bigint, timeout interval DEFAULT NULL) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_sem_renew'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_renew(bigint, interval) IS
    'extends a live lease from now (by its own timeout when NULL); false if the claim is lost';

CREATE FUNCTION @extschema@.sem_held(id bigint) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_sem_held'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION @extschema@.sem_held(bigint) IS 'whether the claim holds its slot right now';

CREATE FUNCTION @extschema@.sem_fence(id bigint) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_fence'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_fence(bigint) IS
    'errors unless the claim is live; otherwise keeps it live until this transaction ends';

CREATE FUNCTION @extschema@.sem_prune_history(max_rows bigint DEFAULT 10000) RETURNS bigint
    AS 'MODULE_PATHNAME', 'pgsem_sem_prune_history'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_prune_history(bigint) IS
    'deletes up to max_rows claims that ended more than pgsem.history_retention ago';

-- Monitoring. Views run with their owner's rights, so PUBLIC can read them without any right on
-- the table. They show committed rows only.
CREATE VIEW @extschema@.sem_holders AS
    SELECT c.name, c.slot, c.id, c.claimed_at, c.expires_at,
           c.holder_pid AS pid, c.holder_role::pg_catalog.regrole AS role, c.application_name
      FROM pgsem.claims c
     WHERE c.ended_at IS NULL
       AND c.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp();
COMMENT ON VIEW @extschema@.sem_holders IS 'live claims: one row per held slot';

CREATE VIEW @extschema@.sem_summary AS
    SELECT c.name,
           pg_catalog.count(*) FILTER (
               WHERE c.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()) AS live,
           pg_catalog.count(*) FILTER (
               WHERE c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())
               AS expired_unreaped,
           pg_catalog.max(c.slots) AS max_n
      FROM pgsem.claims c
     WHERE c.ended_at IS NULL
     GROUP BY c.name;
COMMENT ON VIEW @extschema@.sem_summary IS
    'per semaphore: live claims, and expired claims whose slot no claimer has reused yet';

CREATE VIEW @extschema@.sem_history AS
    SELECT c.id, c.name, c.slot, c.slots AS n, c.claimed_at, c.expires_at, c.lease,
           CASE WHEN c.ended_at IS NOT NULL THEN c.outcome
                WHEN c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
                    THEN 'timed out'
                ELSE 'held' END AS status,
           CASE WHEN c.ended_at IS NOT NULL THEN c.ended_at
                WHEN c.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
                    THEN c.expires_at END AS ended_at,
           c.holder_pid AS pid, c.holder_role::pg_catalog.regrole AS role, c.application_name
      FROM pgsem.claims c;
COMMENT ON VIEW @extschema@.sem_history IS
    'every claim still kept: held, released, or timed out (the holder never released it)';

GRANT SELECT ON @extschema@.sem_holders, @extschema@.sem_summary, @extschema@.sem_history
    TO PUBLIC;
