-- Version skew and upgrade. Between `make install` of a new library and ALTER EXTENSION pgsem
-- UPDATE, the library of this release runs against the SQL objects of 1.0: they keep working.
-- Claims taken under 1.0 survive the update, held and releasable. A fresh install and an
-- upgraded one have the same objects.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
SET client_min_messages = warning;
DROP EXTENSION pgsem;
CREATE EXTENSION pgsem VERSION '1.0';
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'pgsem';

-- The 1.0 API on this library.
SELECT sem_claim('skew', 2, '1 hour') AS kept \gset
SELECT sem_claim('skew', 2, '1 hour') AS released \gset
SELECT sem_claim('skew', 2, '1 hour') IS NULL AS full;
SELECT sem_release(:released) AS release, sem_renew(:kept, '2 hours') AS renew,
       sem_held(:kept) AS held;
BEGIN;
SELECT sem_fence(:kept);
COMMIT;
SELECT name, slot, id = :kept AS kept FROM sem_holders WHERE name = 'skew';
SELECT live, expired_unreaped, max_n FROM sem_summary WHERE name = 'skew';
SELECT status FROM sem_history WHERE name = 'skew' ORDER BY id;
SELECT sem_prune_history() >= 0 AS prunes;
SELECT try('SELECT sem_claim(NULL, 1)');
BEGIN;
SELECT advisory_lock_text('skew'), fnv1a_64('skew') = fnv1a_64('skew'::bytea) AS same_hash;
COMMIT;

-- The update, with a claim held.
ALTER EXTENSION pgsem UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgsem';
SELECT sem_held(:kept) AS still_held;
SELECT name, slot, committed FROM sem_holders WHERE id = :kept;
SELECT sem_claim('skew', 2, '1 hour') IS NOT NULL AS second_slot,
       sem_claim('skew', 2, '1 hour') IS NULL AS full_again;
SELECT sem_release(:kept) AS released_after_update;

-- A fresh install of the default version has exactly the objects of the upgraded one, with the
-- same definitions and privileges.
CREATE TEMP TABLE upgraded AS
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       coalesce(pg_get_functiondef(p.oid), pg_get_viewdef(c.oid), '') AS definition,
       coalesce(p.proacl::text, c.relacl::text, n.nspacl::text, '') AS acl
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
  LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
  LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
  LEFT JOIN pg_namespace n ON d.classid = 'pg_namespace'::regclass AND n.oid = d.objid
 WHERE d.deptype = 'e';
SET client_min_messages = warning;
DROP EXTENSION pgsem;
CREATE EXTENSION pgsem;
RESET client_min_messages;
CREATE TEMP TABLE fresh AS
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       coalesce(pg_get_functiondef(p.oid), pg_get_viewdef(c.oid), '') AS definition,
       coalesce(p.proacl::text, c.relacl::text, n.nspacl::text, '') AS acl
  FROM pg_depend d
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
  LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
  LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
  LEFT JOIN pg_namespace n ON d.classid = 'pg_namespace'::regclass AND n.oid = d.objid
 WHERE d.deptype = 'e';
SELECT count(*) AS members FROM fresh;
(SELECT * FROM upgraded EXCEPT SELECT * FROM fresh)
UNION ALL
(SELECT * FROM fresh EXCEPT SELECT * FROM upgraded);
DROP TABLE upgraded, fresh;

-- sem_claim is dropped and created anew by the update (its arguments change). A DBA's own objects
-- that call it stop the update, nothing changed; the privileges a DBA set carry over, and stay
-- the DBA's (not the extension's initial privileges), so that pg_dump still dumps them.
SET client_min_messages = warning;
DROP EXTENSION pgsem;
CREATE EXTENSION pgsem VERSION '1.0';
RESET client_min_messages;
CREATE ROLE regress_upgrade_app;
CREATE ROLE regress_upgrade_other;
REVOKE EXECUTE ON FUNCTION sem_claim(text, integer, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sem_claim(text, integer, interval) TO regress_upgrade_app;
CREATE VIEW claims_one AS SELECT sem_claim('dependent', 1) AS id;
SELECT try('ALTER EXTENSION pgsem UPDATE');
SELECT extversion FROM pg_extension WHERE extname = 'pgsem';
DROP VIEW claims_one;
ALTER EXTENSION pgsem UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'pgsem';
SELECT has_function_privilege('regress_upgrade_app', 'sem_claim(text, integer, interval, interval)', 'EXECUTE') AS app_may,
       has_function_privilege('regress_upgrade_other', 'sem_claim(text, integer, interval, interval)', 'EXECUTE') AS others_may,
       (SELECT count(*) FROM pg_init_privs
         WHERE objoid = 'sem_claim(text, integer, interval, interval)'::regprocedure) AS recorded_as_initial;
-- 1.2 replaces sem_claim again (permits), and sem_claim_xact and sem_claim_session: the same
-- rules for each.
REVOKE EXECUTE ON FUNCTION sem_claim_xact(text, integer, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sem_claim_xact(text, integer, interval) TO regress_upgrade_app;
CREATE VIEW session_one AS SELECT sem_claim_session('dependent', 1) AS slot;
SELECT try('ALTER EXTENSION pgsem UPDATE');
SELECT extversion FROM pg_extension WHERE extname = 'pgsem';
DROP VIEW session_one;
ALTER EXTENSION pgsem UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgsem';
SELECT f AS function,
       has_function_privilege('regress_upgrade_app', f, 'EXECUTE') AS app_may,
       has_function_privilege('regress_upgrade_other', f, 'EXECUTE') AS others_may,
       (SELECT count(*) FROM pg_init_privs WHERE objoid = f::regprocedure) AS recorded_as_initial
  FROM unnest(ARRAY['sem_claim(text, integer, interval, interval, integer, text)',
                    'sem_claim_xact(text, integer, interval, integer)',
                    'sem_claim_session(text, integer, interval, integer)']) f;
SET client_min_messages = warning;
DROP EXTENSION pgsem;
CREATE EXTENSION pgsem;
RESET client_min_messages;
DROP ROLE regress_upgrade_app, regress_upgrade_other;
DROP FUNCTION try(text);
