-- Least privilege: PUBLIC calls the functions and reads the views; only the owner touches the
-- table; a claim is released, renewed or fenced only by its role, that role's members, or a
-- superuser.
-- try(sql) reports an error instead of failing (sql/helpers/try.sql; the path is relative to
-- the directory pg_regress runs in, the top of the tree).
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
CREATE ROLE regress_alice;
CREATE ROLE regress_bob;
CREATE ROLE regress_carol IN ROLE regress_alice;

SET ROLE regress_alice;
SELECT sem_claim('priv', 2) AS a \gset
SELECT role FROM sem_holders WHERE id = :a;

-- Another role: 42501, and nothing changes.
SET ROLE regress_bob;
SELECT try(format('SELECT sem_release(%s)', :a));
SELECT try(format('SELECT sem_renew(%s, %L)', :a, '1 hour'));
BEGIN;
SELECT try(format('SELECT sem_fence(%s)', :a));
COMMIT;
SELECT sem_held(:a) AS still_held;
-- Anyone may claim, look, and read the monitoring views.
SELECT sem_claim('priv', 2) AS b \gset
SELECT count(*) AS holders FROM sem_holders WHERE name = 'priv';
SELECT live FROM sem_summary WHERE name = 'priv';
SELECT count(*) AS history FROM sem_history WHERE name = 'priv';
-- Nobody but the owner reads or writes the table, or draws ids from the sequence.
SELECT try($$SELECT count(*) FROM pgsem.claims$$);
SELECT try($$INSERT INTO pgsem.claims VALUES (1, 'x', 0, 1, now(), now(), '1s', NULL, NULL, 1, 10, '')$$);
SELECT try($$UPDATE pgsem.claims SET ended_at = now()$$);
SELECT try($$DELETE FROM pgsem.claims$$);
SELECT try($$TRUNCATE pgsem.claims$$);
SELECT try($$SELECT nextval('pgsem.claim_id')$$);
SELECT try($$CREATE TABLE pgsem.mine (x int)$$);
-- Only superusers change the retention of everyone's history.
SELECT try($$SET pgsem.history_retention = 0$$);
SELECT sem_release(:b) AS own_release;

-- A member of the claiming role may act on its claims.
SET ROLE regress_carol;
SELECT sem_renew(:a) AS member_renew;

-- So may a superuser.
RESET ROLE;
SELECT sem_release(:a) AS superuser_release;

-- The catalog agrees: PUBLIC may execute every function, select the views, nothing else.
SELECT p.oid::regprocedure AS function, has_function_privilege('regress_bob', p.oid, 'EXECUTE') AS bob_may_execute
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
 ORDER BY 1;
SELECT c.oid::regclass AS relation,
       has_table_privilege('regress_bob', c.oid, 'SELECT') AS bob_select,
       has_table_privilege('regress_bob', c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE') AS bob_write
  FROM pg_class c JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
 ORDER BY 1;
SELECT has_schema_privilege('regress_bob', 'pgsem', 'USAGE') AS bob_uses_schema;

-- DROP OWNED and DROP ROLE leave a role's claims alone: a claim is not an object the role owns.
-- It keeps its slot until released or until its lease runs out, shows its role as a bare OID,
-- and only a superuser may release it early (has_privs_of_role knows no dropped role).
CREATE ROLE regress_dave;
SET ROLE regress_dave;
SELECT sem_claim('orphaned-role', 1) AS d \gset
RESET ROLE;
DROP OWNED BY regress_dave;
SELECT sem_held(:d) AS held_after_drop_owned;
DROP ROLE regress_dave;
SELECT sem_held(:d) AS held_after_drop_role,
       role::text ~ '^[0-9]+$' AS role_shown_as_oid
  FROM sem_holders WHERE id = :d;
SET ROLE regress_bob;
SELECT try(format('SELECT sem_release(%s)', :d));
RESET ROLE;
SELECT sem_release(:d) AS superuser_release;

DROP ROLE regress_carol;
DROP ROLE regress_bob;
DROP ROLE regress_alice;
DROP FUNCTION try(text);
