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
-- Claims of several permits: the table
------------------------------------------------------------------------------------------------

-- A claim of k permits holds k slots at once: a lease is k rows sharing one id, one per slot, so
-- the primary key becomes (id, name, slot) (a claim on several semaphores at once, sem_claim_all,
-- has rows of one id on each); each row carries the claim's k (NULL in rows made before
-- 1.2, which hold one). Releases, renewals and fences act on all rows of an id.
ALTER TABLE pgsem.claims ADD COLUMN permits integer;
ALTER TABLE pgsem.claims DROP CONSTRAINT claims_pkey,
                         ADD CONSTRAINT claims_pkey PRIMARY KEY (id, name, slot);

------------------------------------------------------------------------------------------------
-- Retry-safe claims: the table
------------------------------------------------------------------------------------------------

-- A lease claimed with a request key carries it on the row of its lowest slot. At most one live
-- claim per semaphore, role and key: a retry whose first attempt was granted gets that claim
-- (sem_claim serializes callers of one key on a lock of its own; this index is the final
-- arbiter). Once the claim ends, the key is free again.
ALTER TABLE pgsem.claims ADD COLUMN request_key text COLLATE "C";
CREATE UNIQUE INDEX claims_request_key ON pgsem.claims (name, holder_role, request_key)
    WHERE ended_at IS NULL AND request_key IS NOT NULL;

------------------------------------------------------------------------------------------------
-- Rate limits: the table
------------------------------------------------------------------------------------------------

-- A grant of a sliding-window rate limit (sem_rate) is a lease of its permits whose lease is the
-- window; `rate` marks its rows (NULL on every other row), which sem_release, sem_renew and
-- sem_fence refuse to end, extend or hold: each permit comes back exactly one window after it
-- was granted.
ALTER TABLE pgsem.claims ADD COLUMN rate boolean;
-- A rate limit's grant takes the slot whose grant's window passed first: its unended grants in
-- the order they were granted (the order their windows pass in, all of one name being of one
-- per) find it in a few reads, whatever n is (a search of the slots would read up to n). By
-- claimed_at, which nothing changes, not expires_at: an index on expires_at would make every
-- renewal of every lease a non-HOT update.
CREATE INDEX claims_rate_grants ON pgsem.claims (name, claimed_at) WHERE ended_at IS NULL AND rate;

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
    OUT locker_xid xid, OUT locker_pid integer, OUT locker_started timestamptz,
    OUT permits integer)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'pgsem_live_claims'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION pgsem.line_waiters(
    OUT name text, OUT n integer, OUT kind text, OUT pid integer, OUT role oid,
    OUT application_name text, OUT waiting_since timestamptz, OUT "position" integer,
    OUT permits integer)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'pgsem_waiters'
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
              FROM pgsem.line_waiters() w) a
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
           c.holder_pid AS pid, c.holder_role::pg_catalog.regrole AS role, c.application_name,
           COALESCE(c.permits, 1) AS permits
      FROM pgsem.claims c
    UNION ALL
    SELECT u.id, u.name COLLATE pg_catalog."C", u.slot, u.n, u.claimed_at, u.expires_at, u.lease,
           'uncommitted', NULL, u.pid, u.role::pg_catalog.regrole, u.application_name, u.permits
      FROM pgsem.unended_claims() u
     WHERE NOT u.committed;

DROP FUNCTION pgsem.live_claims();

------------------------------------------------------------------------------------------------
-- sem_waiters shows the permits each waiter waits for
------------------------------------------------------------------------------------------------

-- pgsem.waiters() gives way to pgsem.line_waiters(), the same rows with the permits each waiter
-- waits for, served by the same C function (which serves 1.1's eight columns too until this
-- update). Reached through the views only; sem_summary reads it above.
CREATE OR REPLACE VIEW @extschema@.sem_waiters AS
    SELECT w.name COLLATE pg_catalog."C" AS name, w.n, w.pid,
           w.role::pg_catalog.regrole AS role, w.waiting_since, w."position", w.kind,
           w.application_name, w.permits
      FROM pgsem.line_waiters() w;
COMMENT ON VIEW @extschema@.sem_waiters IS
    'one row per claim waiting in line for a slot (for permits slots at once); position 1 is the first waiter';

DROP FUNCTION pgsem.waiters();

------------------------------------------------------------------------------------------------
-- Claims of several permits
------------------------------------------------------------------------------------------------


-- The three claim functions gain `permits integer DEFAULT 1` after their last argument, and n
-- gains a default, NULL: the n of the semaphore's declaration (below). Calls that pass neither
-- keep their meaning. A function cannot gain an argument in place, so each is
-- dropped and created again, keeping its owner and the EXECUTE grants made on it (as 1.1 did for
-- sem_claim); objects of the database that depend on one stop the update with a hint.
DO $update$
DECLARE
    f record;
    new_function regprocedure;
    old_owner oid;
    saved aclitem[];
    dependents text;
    grantee record;
BEGIN
    FOR f IN
        SELECT *
          FROM (VALUES
            ('@extschema@.sem_claim(text, integer, interval, interval)'::regprocedure,
             $create$CREATE FUNCTION @extschema@.sem_claim(name text,
                                                  n integer DEFAULT NULL,
                                                  timeout interval DEFAULT '90 seconds',
                                                  wait interval DEFAULT '0',
                                                  permits integer DEFAULT 1,
                                                  request_key text DEFAULT NULL)
                RETURNS bigint
                AS 'MODULE_PATHNAME', 'pgsem_sem_claim_1_1'
                LANGUAGE C VOLATILE PARALLEL UNSAFE$create$,
             '@extschema@.sem_claim(text, integer, interval, interval, integer, text)'),
            ('@extschema@.sem_claim_xact(text, integer, interval)'::regprocedure,
             $create$CREATE FUNCTION @extschema@.sem_claim_xact(name text,
                                                       n integer DEFAULT NULL,
                                                       wait interval DEFAULT '0',
                                                       permits integer DEFAULT 1)
                RETURNS integer
                AS 'MODULE_PATHNAME', 'pgsem_sem_claim_xact'
                LANGUAGE C VOLATILE PARALLEL UNSAFE$create$,
             '@extschema@.sem_claim_xact(text, integer, interval, integer)'),
            ('@extschema@.sem_claim_session(text, integer, interval)'::regprocedure,
             $create$CREATE FUNCTION @extschema@.sem_claim_session(name text,
                                                          n integer DEFAULT NULL,
                                                          wait interval DEFAULT '0',
                                                          permits integer DEFAULT 1)
                RETURNS integer
                AS 'MODULE_PATHNAME', 'pgsem_sem_claim_session'
                LANGUAGE C VOLATILE PARALLEL UNSAFE$create$,
             '@extschema@.sem_claim_session(text, integer, interval, integer)')
          ) AS v(old_function, create_sql, new_signature)
    LOOP
        SELECT pg_catalog.string_agg(
                   CASE WHEN d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::regclass
                        THEN pg_catalog.pg_describe_object('pg_catalog.pg_class'::regclass,
                                                           r.ev_class, 0)
                        ELSE pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)
                   END, ', ')
          INTO dependents
          FROM pg_catalog.pg_depend d
          LEFT JOIN pg_catalog.pg_rewrite r
            ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::regclass
           AND r.oid OPERATOR(pg_catalog.=) d.objid
         WHERE refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::regclass
           AND refobjid OPERATOR(pg_catalog.=) f.old_function
           AND deptype OPERATOR(pg_catalog.=) 'n';
        IF dependents IS NOT NULL THEN
            RAISE EXCEPTION 'pgsem 1.2 replaces %, and % depends on it', f.old_function, dependents
                  USING ERRCODE = 'dependent_objects_still_exist',
                        HINT = 'Drop those objects, run ALTER EXTENSION pgsem UPDATE, and create '
                               'them again unchanged: calls without permits keep their meaning.';
        END IF;
        SELECT proowner, proacl INTO old_owner, saved FROM pg_catalog.pg_proc
         WHERE oid OPERATOR(pg_catalog.=) f.old_function;

        EXECUTE pg_catalog.format('DROP FUNCTION %s', f.old_function);
        EXECUTE f.create_sql;
        new_function := f.new_signature::regprocedure;

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
    END LOOP;
END
$update$;
COMMENT ON FUNCTION @extschema@.sem_claim(text, integer, interval, interval, integer, text) IS
    'takes permits free slots below n of semaphore name (all or none) for a lease of timeout, waiting in line up to wait; the claim id, or NULL; with a request_key that names a live claim of this role on name, that claim''s id';
COMMENT ON FUNCTION @extschema@.sem_claim_xact(text, integer, interval, integer) IS
    'takes permits free slots below n of semaphore name (all or none) until this transaction ends, waiting in line up to wait; the lowest of them, or NULL';
COMMENT ON FUNCTION @extschema@.sem_claim_session(text, integer, interval, integer) IS
    'takes permits free slots below n of semaphore name (all or none) until released or this session ends, waiting in line up to wait; the lowest of them, or NULL';
COMMENT ON FUNCTION @extschema@.sem_release_session(text, integer) IS
    'gives back the session claim of this session that holds slot (every slot of it); false if it holds none of that slot';

------------------------------------------------------------------------------------------------
-- Claims on several semaphores at once
------------------------------------------------------------------------------------------------

-- One claim on every semaphore of a set, all or none, waiting up to one wait for the whole set:
-- the lines, keys and slots of its semaphores are taken in one canonical order (names compared
-- bytewise), whatever order the caller names them in. A lease set is one claim id on every
-- semaphore (released, renewed and fenced by one call); transaction and session claims answer
-- each semaphore's lowest slot. A window in pers[i] makes names[i] a rate limit of ns[i] per
-- pers[i], granted in the same all-or-nothing look as sem_rate grants it (a grant of the window
-- that nothing ends early; release, renewal and fences act on the set's semaphores alone). Not
-- STRICT: NULL arguments are errors, but ns (NULL, or a NULL in it: the declared n), permits
-- (NULL: one each), request_key (NULL: no key) and pers (NULL, or a NULL in it: a semaphore).
CREATE FUNCTION @extschema@.sem_claim_all(names text[], ns integer[] DEFAULT NULL,
                                          timeout interval DEFAULT '90 seconds',
                                          wait interval DEFAULT '0',
                                          permits integer[] DEFAULT NULL,
                                          request_key text DEFAULT NULL,
                                          pers interval[] DEFAULT NULL)
    RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'pgsem_sem_claim_all'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_claim_all(text[], integer[], interval, interval, integer[], text, interval[]) IS
    'takes permits[i] (default 1) free slots below ns[i] of every semaphore names[i], all or none, for one lease of timeout, or, where pers[i] is given, permits[i] of rate limit names[i] (ns[i] per pers[i]); waits up to wait for the whole set; the claim id for each name, or NULL';

CREATE FUNCTION @extschema@.sem_claim_xact_all(names text[], ns integer[] DEFAULT NULL,
                                               wait interval DEFAULT '0',
                                               permits integer[] DEFAULT NULL)
    RETURNS integer[]
    AS 'MODULE_PATHNAME', 'pgsem_sem_claim_xact_all'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_claim_xact_all(text[], integer[], interval, integer[]) IS
    'takes permits[i] (default 1) free slots below ns[i] of every semaphore names[i], all or none, until this transaction ends, waiting up to wait for the whole set; each name''s lowest slot, or NULL';

CREATE FUNCTION @extschema@.sem_claim_session_all(names text[], ns integer[] DEFAULT NULL,
                                                  wait interval DEFAULT '0',
                                                  permits integer[] DEFAULT NULL)
    RETURNS integer[]
    AS 'MODULE_PATHNAME', 'pgsem_sem_claim_session_all'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_claim_session_all(text[], integer[], interval, integer[]) IS
    'takes permits[i] (default 1) free slots below ns[i] of every semaphore names[i], all or none, until released (sem_release_session, per name) or this session ends, waiting up to wait for the whole set; each name''s lowest slot, or NULL';

------------------------------------------------------------------------------------------------
-- Declared semaphores
------------------------------------------------------------------------------------------------

-- An operator declares a semaphore, or every name that begins with a prefix ('tenant:*'): its n,
-- which callers may then leave out, and optionally the longest lease and wait a caller may ask
-- for; and who may claim it. A name falls under its own declaration, else under the longest
-- declared prefix it begins with; undeclared names are claimed as before (unless the superuser
-- setting pgsem.require_declared refuses them). Written only through the functions below (as
-- the table's owner, after checking the caller's rights); every backend reads a copy, which the
-- trigger tells it to load again once a change commits. pg_dump keeps the rows (roles by name,
-- as regrole prints them), for the database's owner too.
CREATE TABLE pgsem.declarations (
    pattern text COLLATE "C" PRIMARY KEY
        CHECK (pg_catalog.octet_length(pattern) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(pattern) OPERATOR(pg_catalog.<=) 256),
    n integer NOT NULL
        CHECK (n OPERATOR(pg_catalog.>=) 1 AND n OPERATOR(pg_catalog.<=) 1000000),
    -- Above n after a lowering (or a declaration made over live claims): holders may remain on
    -- slots up to here, and count against n until they are gone. Set by sem_declare.
    peak_n integer CHECK (peak_n OPERATOR(pg_catalog.>) n),
    max_lease interval CHECK (max_lease OPERATOR(pg_catalog.>) '0'::pg_catalog.interval),
    max_wait interval CHECK (max_wait OPERATOR(pg_catalog.>=) '0'::pg_catalog.interval),
    -- A rate limit (sem_declare_rate, sem_declare_bucket): n permits per `per`, counted in a
    -- sliding window or a token bucket that holds up to burst; NULL for a semaphore.
    kind text NOT NULL DEFAULT 'semaphore'
        CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['semaphore', 'window', 'bucket'])),
    per interval
        CHECK (per OPERATOR(pg_catalog.>) '0'::pg_catalog.interval
               AND per OPERATOR(pg_catalog.<=) '1 day'::pg_catalog.interval),
    burst integer
        CHECK (burst OPERATOR(pg_catalog.>=) 1 AND burst OPERATOR(pg_catalog.<=) 1000000),
    CHECK ((kind OPERATOR(pg_catalog.=) 'semaphore') OPERATOR(pg_catalog.=) (per IS NULL)),
    CHECK ((kind OPERATOR(pg_catalog.=) 'bucket') OPERATOR(pg_catalog.=) (burst IS NOT NULL)),
    CHECK (kind OPERATOR(pg_catalog.=) 'semaphore' OR max_lease IS NULL),
    owner regrole NOT NULL CHECK (owner::pg_catalog.oid OPERATOR(pg_catalog.<>) 0::pg_catalog.oid),
    public_claims boolean NOT NULL DEFAULT false,
    grantees regrole[] NOT NULL DEFAULT '{}'
        CHECK (pg_catalog.array_position(grantees, NULL) IS NULL),
    declared_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    changed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON TABLE pgsem.declarations FROM PUBLIC;
GRANT SELECT ON TABLE pgsem.declarations TO pg_database_owner;
SELECT pg_catalog.pg_extension_config_dump('pgsem.declarations', '');

CREATE FUNCTION pgsem.declarations_changed() RETURNS trigger
    AS 'MODULE_PATHNAME', 'pgsem_declarations_changed'
    LANGUAGE C;
REVOKE ALL ON FUNCTION pgsem.declarations_changed() FROM PUBLIC;
-- Declarations belong to one database, as claims do: their owners and grantees are roles of
-- its cluster, and a pattern both sides declare would stop a subscription with a duplicate key.
-- Row changes a logical replication worker brings are dropped (pgsem--1.0--1.1.sql says how).
CREATE TRIGGER declarations_not_replicated
    BEFORE INSERT OR UPDATE OR DELETE ON pgsem.declarations
    FOR EACH ROW EXECUTE FUNCTION pgsem.skip_replicated_change();
ALTER TABLE pgsem.declarations ENABLE ALWAYS TRIGGER declarations_not_replicated;
-- Every other change tells every backend, once it commits: per row (a restore's COPY too), and
-- per TRUNCATE statement. ALWAYS: also where session_replication_role is replica.
CREATE TRIGGER declarations_changed
    AFTER INSERT OR UPDATE OR DELETE ON pgsem.declarations
    FOR EACH ROW EXECUTE FUNCTION pgsem.declarations_changed();
CREATE TRIGGER declarations_truncated
    AFTER TRUNCATE ON pgsem.declarations
    FOR EACH STATEMENT EXECUTE FUNCTION pgsem.declarations_changed();
ALTER TABLE pgsem.declarations ENABLE ALWAYS TRIGGER declarations_changed;
ALTER TABLE pgsem.declarations ENABLE ALWAYS TRIGGER declarations_truncated;

-- Not STRICT: NULLs are errors, but the maxima (NULL: none).
CREATE FUNCTION @extschema@.sem_declare(name text, n integer,
                                        max_lease interval DEFAULT NULL,
                                        max_wait interval DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_declare'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_declare(text, integer, interval, interval) IS
    'declares semaphore name (or, ending in *, every name with that prefix) with n slots, and optionally the longest lease and wait a claim may ask for; or changes its declaration (its owner); new declarations: the database owner and superusers';

-- Rate limits, declared as semaphores are: callers name the limit alone (sem_rate(name),
-- sem_bucket(name), or a member of sem_claim_all), and the declaration's rule is the only one the
-- name is granted under. Not STRICT: NULLs are errors, but max_wait (none) and burst (n).
CREATE FUNCTION @extschema@.sem_declare_rate(name text, n integer, per interval,
                                             max_wait interval DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_declare_rate'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_declare_rate(text, integer, interval, interval) IS
    'declares name (or, ending in *, every name with that prefix) a sliding window of at most n permits in any window of length per, granted by sem_rate(name), and optionally the longest wait; or changes its declaration (its owner)';

CREATE FUNCTION @extschema@.sem_declare_bucket(name text, n integer, per interval,
                                               burst integer DEFAULT NULL,
                                               max_wait interval DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_declare_bucket'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_declare_bucket(text, integer, interval, integer, interval) IS
    'declares name (or, ending in *, every name with that prefix) a token bucket of n permits per per, up to burst (NULL: n) at once, granted by sem_bucket(name), and optionally the longest wait; or changes its declaration (its owner)';

CREATE FUNCTION @extschema@.sem_undeclare(name text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_sem_undeclare'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_undeclare(text) IS
    'removes the declaration of name (its owner); false if there is none; live claims stay';

CREATE FUNCTION @extschema@.sem_grant(name text, grantee regrole) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_grant'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_grant(text, regrole) IS
    'lets grantee (and roles with its privileges) claim and wait on the semaphores of declaration name (its owner)';

CREATE FUNCTION @extschema@.sem_revoke(name text, grantee regrole) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_revoke'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_revoke(text, regrole) IS
    'takes back what sem_grant gave grantee: its next claim is refused; live claims stay';

CREATE FUNCTION @extschema@.sem_grant_public(name text) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_grant_public'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_grant_public(text) IS
    'lets every role claim and wait on the semaphores of declaration name (its owner)';

CREATE FUNCTION @extschema@.sem_revoke_public(name text) RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_revoke_public'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_revoke_public(text) IS
    'takes back what sem_grant_public gave';

CREATE VIEW @extschema@.sem_declarations AS
    SELECT d.pattern AS name,
           pg_catalog.right(d.pattern, 1) OPERATOR(pg_catalog.=) '*' AS is_prefix,
           d.kind, d.n, d.per, d.burst, d.peak_n, d.max_lease, d.max_wait, d.owner,
           (CASE WHEN d.public_claims THEN ARRAY['PUBLIC']::text[] ELSE '{}'::text[] END)
               OPERATOR(pg_catalog.||) d.grantees::text[] AS may_claim,
           d.declared_at, d.changed_at
      FROM pgsem.declarations d;
COMMENT ON VIEW @extschema@.sem_declarations IS
    'declared semaphores, rate limits and prefixes (*): kind (semaphore, window or bucket), n (per per, up to burst at once, for rate limits), peak_n (after a lowering: holders above n count against n up to here), longest lease and wait, owner, roles that may claim besides the owner';
GRANT SELECT ON @extschema@.sem_declarations TO PUBLIC;

------------------------------------------------------------------------------------------------
-- Quotas per role
------------------------------------------------------------------------------------------------

-- Per role, the most live claim slots (every kind, each permit) and waiting sessions it may have
-- in this database, set by a superuser with sem_set_quota; NULL: no maximum of that kind, 0:
-- none at all. A claim reads its role's row from a copy each backend keeps, loaded again when a
-- change commits (the trigger below, shared with pgsem.declarations). Dumped by pg_dump.
CREATE TABLE pgsem.quotas (
    role regrole PRIMARY KEY CHECK (role::pg_catalog.oid OPERATOR(pg_catalog.<>) 0::pg_catalog.oid),
    max_claims integer
        CHECK (max_claims OPERATOR(pg_catalog.>=) 0 AND max_claims OPERATOR(pg_catalog.<=) 1000000),
    max_waiters integer
        CHECK (max_waiters OPERATOR(pg_catalog.>=) 0
               AND max_waiters OPERATOR(pg_catalog.<=) 1000000),
    changed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON TABLE pgsem.quotas FROM PUBLIC;
GRANT SELECT ON TABLE pgsem.quotas TO pg_database_owner;
SELECT pg_catalog.pg_extension_config_dump('pgsem.quotas', '');
CREATE TRIGGER quotas_not_replicated
    BEFORE INSERT OR UPDATE OR DELETE ON pgsem.quotas
    FOR EACH ROW EXECUTE FUNCTION pgsem.skip_replicated_change();
ALTER TABLE pgsem.quotas ENABLE ALWAYS TRIGGER quotas_not_replicated;
CREATE TRIGGER quotas_changed
    AFTER INSERT OR UPDATE OR DELETE ON pgsem.quotas
    FOR EACH ROW EXECUTE FUNCTION pgsem.declarations_changed();
CREATE TRIGGER quotas_truncated
    AFTER TRUNCATE ON pgsem.quotas
    FOR EACH STATEMENT EXECUTE FUNCTION pgsem.declarations_changed();
ALTER TABLE pgsem.quotas ENABLE ALWAYS TRIGGER quotas_changed;
ALTER TABLE pgsem.quotas ENABLE ALWAYS TRIGGER quotas_truncated;

-- Not STRICT: NULL maxima are none (both NULL: the role has no quota).
CREATE FUNCTION @extschema@.sem_set_quota(role regrole, max_claims integer,
                                          max_waiters integer DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'pgsem_sem_set_quota'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_set_quota(regrole, integer, integer) IS
    'bounds the live claim slots (every kind, each permit) and the waiting sessions of role in this database (NULL: no maximum; both NULL: no quota); superusers only';

CREATE VIEW @extschema@.sem_quotas AS
    SELECT q.role, q.max_claims, q.max_waiters, q.changed_at FROM pgsem.quotas q;
COMMENT ON VIEW @extschema@.sem_quotas IS
    'quotas per role: the most live claim slots and waiting sessions (NULL: no maximum)';
GRANT SELECT ON @extschema@.sem_quotas TO PUBLIC;

------------------------------------------------------------------------------------------------
-- Rate limits
------------------------------------------------------------------------------------------------

-- A sliding window: at most n permits granted in any window of length per, counted at the grant.
-- Waits in the same line as claims of the name (FIFO, lock_timeout, cancels). Not STRICT: NULL
-- arguments are errors, but n and per, which a declaration (sem_declare_rate) gives.
CREATE FUNCTION @extschema@.sem_rate(name text, n integer DEFAULT NULL,
                                     per interval DEFAULT NULL,
                                     permits integer DEFAULT 1,
                                     wait interval DEFAULT '0')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_sem_rate'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_rate(text, integer, interval, integer, interval) IS
    'grants permits of rate limit name, at most n in any window of length per, waiting in line up to wait; true when granted';

-- Pauses: no grants on a name before a time (a Retry-After honoured by every caller). Written
-- only through sem_pause (as the table's owner, after checking the caller's right to claim the
-- name); every backend reads a copy, loaded again once a change commits (the trigger shared with
-- pgsem.declarations, which also wakes every first waiter). Not dumped: a pause lasts a day at
-- most, and one that has passed is removed by the next sem_pause.
CREATE TABLE pgsem.pauses (
    name text COLLATE "C" PRIMARY KEY
        CHECK (pg_catalog.octet_length(name) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 256),
    until timestamptz NOT NULL,
    paused_by regrole NOT NULL,
    paused_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
REVOKE ALL ON TABLE pgsem.pauses FROM PUBLIC;
GRANT SELECT ON TABLE pgsem.pauses TO pg_database_owner;
CREATE TRIGGER pauses_not_replicated
    BEFORE INSERT OR UPDATE OR DELETE ON pgsem.pauses
    FOR EACH ROW EXECUTE FUNCTION pgsem.skip_replicated_change();
ALTER TABLE pgsem.pauses ENABLE ALWAYS TRIGGER pauses_not_replicated;
CREATE TRIGGER pauses_changed
    AFTER INSERT OR UPDATE OR DELETE ON pgsem.pauses
    FOR EACH ROW EXECUTE FUNCTION pgsem.declarations_changed();
CREATE TRIGGER pauses_truncated
    AFTER TRUNCATE ON pgsem.pauses
    FOR EACH STATEMENT EXECUTE FUNCTION pgsem.declarations_changed();
ALTER TABLE pgsem.pauses ENABLE ALWAYS TRIGGER pauses_changed;
ALTER TABLE pgsem.pauses ENABLE ALWAYS TRIGGER pauses_truncated;

-- Not STRICT: a NULL name is an error, a NULL until lifts the pause.
CREATE FUNCTION @extschema@.sem_pause(name text, until timestamptz)
    RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'pgsem_sem_pause'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_pause(text, timestamptz) IS
    'no grants or claims on name before until (at most a day ahead; a pause only moves later), NULL lifts it; for roles that may claim name; the pause in force afterwards, or NULL';

CREATE VIEW @extschema@.sem_pauses AS
    SELECT p.name, p.until, p.paused_by, p.paused_at
      FROM pgsem.pauses p
     WHERE p.until OPERATOR(pg_catalog.>) pg_catalog.now();
COMMENT ON VIEW @extschema@.sem_pauses IS
    'names paused by sem_pause: nothing is granted on them before until';
GRANT SELECT ON @extschema@.sem_pauses TO PUBLIC;

-- Token buckets: n permits per per, up to burst at once (the generic cell rate algorithm). A
-- bucket's whole state is one time, the theoretical arrival time (tat: when it would be full
-- again), the latest of its name's rows. Written only by sem_bucket: each grant inserts a row with
-- a later tat and deletes the settled ones it read, under the name's mutex in the lock manager,
-- which it holds for the read and the write alone: the next grant reads the rows with a dirty
-- read, the grants in flight (not yet committed) too, so no grant waits for another's commit and
-- none is counted out (a grant that rolls back leaves a later tat behind it: fewer grants, never
-- more). It reads and writes the rows directly, as the claims, so no snapshot of the caller's
-- and no SSI read is involved. A bucket refills in a day at most, so its tat is never more than
-- a day ahead; rows whose tat passed an hour ago are a full bucket, the same as none, and are
-- removed by a later grant that makes a new name's row near them. Not dumped, like the claims:
-- a restored database starts with full buckets. Not replicated either: a subscriber's buckets
-- are its own.
CREATE TABLE pgsem.buckets (
    name text COLLATE "C" NOT NULL
        CHECK (pg_catalog.octet_length(name) OPERATOR(pg_catalog.>=) 1
               AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 256),
    tat timestamptz NOT NULL,
    n integer NOT NULL,
    per interval NOT NULL,
    burst integer NOT NULL,
    granted_at timestamptz NOT NULL,
    PRIMARY KEY (name, tat)
);
REVOKE ALL ON TABLE pgsem.buckets FROM PUBLIC;
GRANT SELECT ON TABLE pgsem.buckets TO pg_database_owner;
CREATE TRIGGER buckets_not_replicated
    BEFORE INSERT OR UPDATE OR DELETE ON pgsem.buckets
    FOR EACH ROW EXECUTE FUNCTION pgsem.skip_replicated_change();
ALTER TABLE pgsem.buckets ENABLE ALWAYS TRIGGER buckets_not_replicated;

-- Not STRICT: NULL arguments are errors, but n, per and burst, which a declaration
-- (sem_declare_bucket) gives; undeclared, a NULL burst is n.
CREATE FUNCTION @extschema@.sem_bucket(name text, n integer DEFAULT NULL,
                                       per interval DEFAULT NULL,
                                       permits integer DEFAULT 1,
                                       wait interval DEFAULT '0',
                                       burst integer DEFAULT NULL)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'pgsem_sem_bucket'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.sem_bucket(text, integer, interval, integer, interval, integer) IS
    'grants permits of token bucket name: n per per, up to burst (default n) at once, waiting in line up to wait; true when granted';

-- One row per bucket, its latest. available: the permits a grant could have now, with the
-- grant's own interval (per / n rounded up to a whole microsecond, core/token_bucket.hpp);
-- full_at: when the bucket is full again. A tat more than a day ahead (edited by hand; no rule
-- sets one) counts as a day ahead, as the grants count it, and a tat of -infinity as a full
-- bucket: the view never fails on a row.
CREATE VIEW @extschema@.sem_buckets AS
    SELECT b.name, b.n, b.per, b.burst,
           LEAST(b.burst::pg_catalog.numeric, GREATEST(0::pg_catalog.numeric,
               b.burst::pg_catalog.numeric OPERATOR(pg_catalog.-) pg_catalog.ceil(
                   (pg_catalog.extract('epoch', t.tat OPERATOR(pg_catalog.-) pg_catalog.now())
                        OPERATOR(pg_catalog.*) 1000000::pg_catalog.numeric)
                   OPERATOR(pg_catalog./)
                   GREATEST(1::pg_catalog.numeric, pg_catalog.ceil(
                       (pg_catalog.extract('epoch', b.per) OPERATOR(pg_catalog.*) 1000000::pg_catalog.numeric)
                       OPERATOR(pg_catalog./) b.n::pg_catalog.numeric)))))::integer
               AS available,
           t.tat AS full_at,
           b.granted_at
      FROM (SELECT DISTINCT ON (l.name) l.*
              FROM pgsem.buckets l
             ORDER BY l.name, l.tat DESC) b,
           LATERAL (SELECT GREATEST(pg_catalog.now(),
                                    LEAST(b.tat, pg_catalog.now() OPERATOR(pg_catalog.+)
                                                 '1 day'::pg_catalog.interval)) AS tat) t;
COMMENT ON VIEW @extschema@.sem_buckets IS
    'token buckets (sem_bucket): the rule of the last grant, the permits available now, when the bucket is full again';
GRANT SELECT ON @extschema@.sem_buckets TO PUBLIC;

------------------------------------------------------------------------------------------------
-- Counters: sem_stats, sem_stats_reset
------------------------------------------------------------------------------------------------

-- The counters of each name since the server started (or since sem_stats_reset), kept in shared
-- memory when pgsem is in shared_preload_libraries (src/pg/store/name_stats.hpp); without it,
-- no rows and a notice. name is NULL on the row of the names folded to make room
-- (pgsem.stats_max_names).
CREATE FUNCTION pgsem.stats(
    OUT name text, OUT names_folded bigint, OUT since timestamptz, OUT last_active timestamptz,
    OUT granted bigint, OUT granted_after_wait bigint, OUT refused bigint, OUT timed_out bigint,
    OUT wait_errors bigint, OUT released bigint, OUT expired_permits bigint, OUT renewed bigint,
    OUT permits_granted bigint, OUT wait_seconds double precision,
    OUT wait_max_seconds double precision, OUT held_seconds double precision,
    OUT paused_seconds double precision)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'pgsem_stats'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Counters beside what holds and waits now. A name appears once it has a counted event, a
-- holder or a waiter.
CREATE VIEW @extschema@.sem_stats AS
    SELECT COALESCE(c.name, h.name, w.name) AS name,
           c.name IS NULL AND c.names_folded IS NOT NULL AS other,
           c.names_folded, c.since, c.last_active,
           c.granted, c.granted_after_wait, c.refused, c.timed_out, c.wait_errors, c.released,
           c.expired_permits, c.renewed, c.permits_granted, c.wait_seconds, c.wait_max_seconds,
           c.held_seconds, c.paused_seconds,
           COALESCE(h.leases, 0) AS leases,
           COALESCE(h.transaction_slots, 0) AS transaction_slots,
           COALESCE(h.session_slots, 0) AS session_slots,
           COALESCE(h.permits_in_use, 0) AS permits_in_use,
           COALESCE(w.waiters, 0) AS waiters,
           COALESCE(w.permits_waited, 0) AS permits_waited,
           pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) w.oldest_since AS oldest_wait
      FROM pgsem.stats() c
      FULL JOIN (SELECT s.name,
                        pg_catalog.count(DISTINCT s.id) AS leases,
                        pg_catalog.count(*) FILTER (WHERE s.kind OPERATOR(pg_catalog.=) 'transaction')
                            AS transaction_slots,
                        pg_catalog.count(*) FILTER (WHERE s.kind OPERATOR(pg_catalog.=) 'session')
                            AS session_slots,
                        pg_catalog.count(*) AS permits_in_use
                   FROM @extschema@.sem_holders s
                  WHERE s.name IS NOT NULL  -- a session's claims past the 16 the registry lists
                  GROUP BY s.name) h ON h.name OPERATOR(pg_catalog.=) c.name
      FULL JOIN (SELECT v.name, pg_catalog.count(*) AS waiters,
                        pg_catalog.sum(v.permits) AS permits_waited,
                        pg_catalog.min(v.waiting_since) AS oldest_since
                   FROM @extschema@.sem_waiters v
                  WHERE v.name IS NOT NULL
                  GROUP BY v.name) w
        ON w.name OPERATOR(pg_catalog.=) COALESCE(c.name, h.name);
COMMENT ON VIEW @extschema@.sem_stats IS
    'per semaphore, rate limit or bucket: counters since the server started or sem_stats_reset (needs pgsem in shared_preload_libraries), and what holds and waits now';
GRANT SELECT ON @extschema@.sem_stats TO PUBLIC;

-- Forgets the counters of one name, or of all (NULL). Not for PUBLIC: every monitoring system
-- reading the counters sees them go back to zero. A superuser grants it to an operator's role.
CREATE FUNCTION @extschema@.sem_stats_reset(name text DEFAULT NULL)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'pgsem_stats_reset'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION @extschema@.sem_stats_reset(text) IS
    'forgets the sem_stats counters of name (NULL: of every name); returns how many rows it forgot';
REVOKE ALL ON FUNCTION @extschema@.sem_stats_reset(text) FROM PUBLIC;
