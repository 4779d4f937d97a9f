-- Declared semaphores: the n callers may leave out, the longest lease and wait, who may claim
-- (membership counts), who may declare and change, pgsem.require_declared; bad input is an
-- error that changes nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
CREATE ROLE regress_d_app;
CREATE ROLE regress_d_group;
CREATE ROLE regress_d_member IN ROLE regress_d_group;
CREATE ROLE regress_d_noinherit NOINHERIT IN ROLE regress_d_group;
CREATE ROLE regress_d_dbo;

-- Undeclared: n is the caller's, and must be given.
SELECT try($$SELECT sem_claim('d free')$$) AS no_n;
SELECT sem_claim('d free', 1) IS NOT NULL AS own_n;

-- A superuser declares; the caller may leave n out and claims below the declared n.
SELECT sem_declare('d pay', 2, max_lease => '10 minutes', max_wait => '50 ms');
SELECT name, is_prefix, n, max_lease, max_wait, owner, may_claim FROM sem_declarations;
SELECT sem_claim('d pay') AS a \gset
SELECT sem_claim('d pay') IS NOT NULL AS second, sem_claim('d pay') IS NULL AS third_refused;
SELECT slot FROM sem_holders WHERE name = 'd pay' ORDER BY slot;
-- A larger n is refused; a smaller one claims below its own n (both slots below 2 are held).
SELECT try($$SELECT sem_claim('d pay', 3)$$) AS above_declared;
SELECT sem_claim('d pay', 1) IS NULL AS below_own_n;
-- A lease above the maximum is refused, and so is its renewal; permits above the declared n too.
SELECT try($$SELECT sem_claim('d pay', timeout => '11 minutes')$$) AS long_lease;
SELECT try(format('SELECT sem_renew(%s, %L)', :a, '1 hour')) AS long_renewal;
SELECT sem_renew(:a, '5 minutes') AS short_renewal;
SELECT try($$SELECT sem_claim('d pay', permits => 3)$$) AS permits_above_declared;
-- A longer wait is shortened to the maximum (50 ms): the full semaphore answers NULL.
SELECT sem_claim('d pay', wait => '1 hour') IS NULL AS wait_capped;
SELECT sem_release(id) FROM sem_holders WHERE name = 'd pay';

-- Transaction and session claims and sets take the declared n too.
BEGIN;
SELECT sem_claim_xact('d pay', permits => 2) AS xact_slot;
SELECT sem_claim_xact('d pay') IS NULL AS xact_full;
COMMIT;
SELECT sem_claim_session('d pay') AS session_slot;
SELECT sem_release_session('d pay', 0);

-- A prefix: every name that begins with it, unless the name is declared on its own or under a
-- longer prefix.
SELECT sem_declare('d tenant:*', 1);
SELECT sem_declare('d tenant:vip*', 3);
SELECT sem_declare('d tenant:vip-1', 5);
SELECT sem_claim_all(ARRAY['d tenant:7', 'd tenant:vip-2', 'd tenant:vip-1', 'd pay'],
                     permits => ARRAY[1, 3, 5, 2]) IS NOT NULL AS set_at_declared_ns;
SELECT name, count(*) AS slots FROM sem_holders WHERE name LIKE 'd %' GROUP BY name ORDER BY name;
SELECT sem_claim_all(ARRAY['d tenant:7', 'd free'], ARRAY[NULL, 1]) IS NULL AS tenant_full;
SELECT try($$SELECT sem_claim_all(ARRAY['d tenant:8', 'd free'], ARRAY[NULL, NULL]::int[])$$)
    AS undeclared_member_without_n;
SELECT sem_release(id) FROM sem_holders WHERE name LIKE 'd %' GROUP BY id;

-- Who may claim: the owner, roles granted (and their members, if they inherit), PUBLIC if
-- granted. Others get 42501 naming the name and the declaration.
SET ROLE regress_d_app;
SELECT try($$SELECT sem_claim('d pay')$$) AS not_granted;
SELECT try($$SELECT sem_claim('d tenant:7', 1)$$) AS not_granted_with_n;
SELECT sem_claim('d free', 1) IS NOT NULL AS undeclared_still_open;
RESET ROLE;
SELECT sem_grant('d pay', 'regress_d_group');
SELECT sem_grant('d pay', 'regress_d_group');  -- once is enough
SELECT may_claim FROM sem_declarations WHERE name = 'd pay';
SET ROLE regress_d_member;
SELECT sem_claim('d pay') AS m \gset
SET ROLE regress_d_noinherit;
SELECT try($$SELECT sem_claim('d pay')$$) AS noinherit_member;
SET ROLE regress_d_group;
SELECT sem_claim_xact('d pay') IS NOT NULL AS group_itself;
RESET ROLE;
-- Revoked: the next claim is refused; the live one stays, and its holder still releases it.
SELECT sem_revoke('d pay', 'regress_d_group');
SET ROLE regress_d_member;
SELECT try($$SELECT sem_claim('d pay')$$) AS after_revoke;
SELECT sem_held(:m) AS still_held, sem_release(:m) AS released_by_holder;
RESET ROLE;
SELECT sem_grant_public('d pay');
SET ROLE regress_d_app;
SELECT sem_claim_session('d pay') AS public_slot;
SELECT sem_release_session('d pay', 0);
RESET ROLE;
SELECT sem_revoke_public('d pay');
SELECT may_claim FROM sem_declarations WHERE name = 'd pay';

-- Who may declare and change: not an ordinary role, nor write the table; the database's owner
-- may declare, and then owns the declaration; a superuser may change anyone's.
SET ROLE regress_d_app;
SELECT try($$SELECT sem_declare('d mine', 4)$$) AS app_declares;
SELECT try($$SELECT sem_declare('d pay', 40)$$) AS app_changes;
SELECT try($$SELECT sem_grant('d pay', 'regress_d_app')$$) AS app_grants;
SELECT try($$SELECT sem_undeclare('d pay')$$) AS app_undeclares;
SELECT try($$INSERT INTO pgsem.declarations (pattern, n, owner) VALUES ('d x', 1, 'regress_d_app')$$)
    AS app_inserts;
SELECT try($$UPDATE pgsem.declarations SET n = 100$$) AS app_updates;
SELECT try($$SELECT count(*) FROM pgsem.declarations$$) AS app_reads_table;
SELECT count(*) AS app_reads_view FROM sem_declarations;
RESET ROLE;
SELECT current_database() AS db \gset
ALTER DATABASE :"db" OWNER TO regress_d_dbo;
SET ROLE regress_d_dbo;
SELECT sem_declare('d owned', 2);
SELECT sem_grant('d owned', 'regress_d_app');
SELECT try($$SELECT sem_declare('d pay', 3)$$) AS dbo_changes_others;
SELECT count(*) AS dbo_reads_table FROM pgsem.declarations;
RESET ROLE;
SELECT name, owner, may_claim FROM sem_declarations WHERE name = 'd owned';
SELECT sem_declare('d owned', 3);  -- a superuser
ALTER DATABASE :"db" OWNER TO CURRENT_USER;

-- pgsem.require_declared: only a superuser sets it; undeclared names are refused then.
SET ROLE regress_d_app;
SELECT try($$SET pgsem.require_declared = on$$) AS app_sets;
RESET ROLE;
SET pgsem.require_declared = on;
SELECT try($$SELECT sem_claim('d free', 1)$$) AS undeclared_refused;
SELECT try($$SELECT sem_claim_all(ARRAY['d pay', 'd free'], ARRAY[NULL, 1])$$) AS set_refused;
SELECT sem_claim_xact('d pay') IS NOT NULL AS declared_fine;
RESET pgsem.require_declared;

-- Bad input: errors, and nothing changes.
SELECT try($$SELECT sem_declare(NULL, 1)$$) AS null_name,
       try($$SELECT sem_declare('', 1)$$) AS empty_name,
       try(format('SELECT sem_declare(%L, 1)', repeat('x', 257))) AS long_name;
SELECT try($$SELECT sem_declare('d pay', NULL)$$) AS null_n,
       try($$SELECT sem_declare('d pay', 0)$$) AS zero_n,
       try($$SELECT sem_declare('d pay', 1000001)$$) AS huge_n;
SELECT try($$SELECT sem_declare('d pay', 2, max_lease => '-1 s')$$) AS negative_lease,
       try($$SELECT sem_declare('d pay', 2, max_lease => '2 days')$$) AS long_max_lease,
       try($$SELECT sem_declare('d pay', 2, max_wait => '-1 s')$$) AS negative_wait;
SELECT try($$SELECT sem_grant(NULL, 'regress_d_app')$$) AS grant_null_name,
       try($$SELECT sem_grant('d pay', NULL)$$) AS grant_null_role,
       try($$SELECT sem_grant('d pay', '-')$$) AS grant_zero_role,
       try($$SELECT sem_grant('d pay', 4000000000::oid::regrole)$$) AS grant_no_role;
SELECT try($$SELECT sem_grant('d nothing', 'regress_d_app')$$) AS grant_undeclared,
       try($$SELECT sem_revoke_public('d nothing')$$) AS revoke_undeclared,
       sem_undeclare('d nothing') AS undeclare_undeclared;
SELECT name, n, max_lease, max_wait, owner, may_claim FROM sem_declarations ORDER BY name;

-- Undeclared again: callers pass n themselves.
SELECT sem_undeclare('d pay') AS undeclared;
SELECT try($$SELECT sem_claim('d pay')$$) AS no_n_again;

SELECT sem_undeclare(name) FROM sem_declarations WHERE name LIKE 'd %' ORDER BY name;
SELECT sem_release(id) FROM sem_holders WHERE name LIKE 'd %';
DROP ROLE regress_d_app, regress_d_member, regress_d_noinherit, regress_d_group, regress_d_dbo;
