-- pgTAP: the extension's schema, table, sequence, index and views, and who may use them.
-- PUBLIC (and so any ordinary role) may execute every function and select the three views;
-- PUBLIC has no right at all on schema pgsem, table pgsem.claims or sequence pgsem.claim_id.
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(208);

-- An ordinary role: no attributes, no grants, member of nothing.
CREATE ROLE pgtap_plain NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;

------------------------------------------------------------------------------------------------
-- Schema pgsem (4)
------------------------------------------------------------------------------------------------
SELECT has_schema('pgsem', 'schema pgsem exists');
SELECT schema_privs_are('pgsem', 'public', ARRAY[]::name[],
                        'PUBLIC has no privilege on schema pgsem');
SELECT schema_privs_are('pgsem', 'pgtap_plain', ARRAY[]::name[],
                        'an ordinary role has no privilege on schema pgsem');
SELECT is((SELECT count(*) FROM pg_namespace n, aclexplode(n.nspacl) a
            WHERE n.nspname = 'pgsem' AND a.grantee = 0), 0::bigint,
          'schema pgsem''s ACL has no entry for PUBLIC');

------------------------------------------------------------------------------------------------
-- Table pgsem.claims (4 + 1 + 12 + 2 + 1 + 1 = 21)
------------------------------------------------------------------------------------------------
SELECT has_table('pgsem', 'claims', 'table pgsem.claims exists');
SELECT table_privs_are('pgsem', 'claims', 'public', ARRAY[]::name[],
                       'PUBLIC has no privilege on table pgsem.claims');
SELECT table_privs_are('pgsem', 'claims', 'pgtap_plain', ARRAY[]::name[],
                       'an ordinary role has no privilege on table pgsem.claims');
SELECT is((SELECT count(*) FROM pg_class c, aclexplode(c.relacl) a
            WHERE c.oid = 'pgsem.claims'::regclass AND a.grantee = 0), 0::bigint,
          'pgsem.claims''s ACL has no entry for PUBLIC');
SELECT columns_are('pgsem', 'claims',
    ARRAY['id', 'name', 'slot', 'slots', 'claimed_at', 'expires_at', 'lease', 'ended_at',
          'outcome', 'holder_pid', 'holder_role', 'application_name', 'permits', 'request_key', 'rate'],
    'pgsem.claims has the expected columns');
SELECT col_type_is('pgsem', 'claims', c.col, c.typ,
                   format('pgsem.claims.%s is %s', c.col, c.typ))
  FROM (VALUES (1, 'id', 'bigint'), (2, 'name', 'text'), (3, 'slot', 'integer'),
               (4, 'slots', 'integer'), (5, 'claimed_at', 'timestamp with time zone'),
               (6, 'expires_at', 'timestamp with time zone'), (7, 'lease', 'interval'),
               (8, 'ended_at', 'timestamp with time zone'), (9, 'outcome', 'text'),
               (10, 'holder_pid', 'integer'), (11, 'holder_role', 'oid'),
               (12, 'application_name', 'text'), (13, 'permits', 'integer'),
               (14, 'request_key', 'text'), (15, 'rate', 'boolean')) AS c(pos, col, typ)
 ORDER BY c.pos;
SELECT has_pk('pgsem', 'claims', 'pgsem.claims has a primary key');
SELECT col_is_pk('pgsem', 'claims', ARRAY['id', 'name', 'slot'],
                 'pgsem.claims'' primary key is (id, name, slot): a claim is k rows of one id on each of its semaphores');
SELECT is((SELECT co.collname FROM pg_attribute a JOIN pg_collation co ON co.oid = a.attcollation
            WHERE a.attrelid = 'pgsem.claims'::regclass AND a.attname = 'name'),
          'C'::name, 'pgsem.claims.name compares bytewise (COLLATE "C")');
SELECT is((SELECT count(*)::int FROM pg_constraint
            WHERE conrelid = 'pgsem.claims'::regclass AND contype = 'c'), 0,
          'pgsem.claims has no CHECK constraint to recompile on every write (the functions validate)');

------------------------------------------------------------------------------------------------
-- Sequence pgsem.claim_id (5)
------------------------------------------------------------------------------------------------
SELECT has_sequence('pgsem', 'claim_id', 'sequence pgsem.claim_id exists');
SELECT sequence_privs_are('pgsem', 'claim_id', 'public', ARRAY[]::name[],
                          'PUBLIC has no privilege on sequence pgsem.claim_id');
SELECT sequence_privs_are('pgsem', 'claim_id', 'pgtap_plain', ARRAY[]::name[],
                          'an ordinary role has no privilege on sequence pgsem.claim_id');
SELECT ok(NOT has_sequence_privilege('public', 'pgsem.claim_id', 'USAGE')
          AND NOT has_sequence_privilege('public', 'pgsem.claim_id', 'SELECT')
          AND NOT has_sequence_privilege('public', 'pgsem.claim_id', 'UPDATE'),
          'has_sequence_privilege: PUBLIC may not use, read or set pgsem.claim_id');
SELECT results_eq(
    $$SELECT seqtypid::regtype::text, seqcycle FROM pg_sequence
       WHERE seqrelid = 'pgsem.claim_id'::regclass$$,
    $$VALUES ('bigint', false)$$,
    'pgsem.claim_id is a bigint sequence that never cycles');

------------------------------------------------------------------------------------------------
-- The unique partial index claims_live_slot (6)
------------------------------------------------------------------------------------------------
SELECT has_index('pgsem', 'claims', 'claims_live_slot', ARRAY['name', 'slot'],
                 'index claims_live_slot is on pgsem.claims (name, slot)');
SELECT index_is_unique('pgsem', 'claims', 'claims_live_slot', 'claims_live_slot is unique');
SELECT index_is_type('pgsem', 'claims', 'claims_live_slot', 'btree', 'claims_live_slot is a btree');
SELECT is((SELECT pg_get_expr(indpred, indrelid) FROM pg_index
            WHERE indexrelid = 'pgsem.claims_live_slot'::regclass),
          '(ended_at IS NULL)', 'claims_live_slot is partial: WHERE ended_at IS NULL');
SELECT is((SELECT pg_get_indexdef('pgsem.claims_live_slot'::regclass)),
          'CREATE UNIQUE INDEX claims_live_slot ON pgsem.claims USING btree (name, slot) WHERE (ended_at IS NULL)',
          'claims_live_slot''s full definition');
SELECT has_index('pgsem', 'claims', 'claims_pkey', ARRAY['id', 'name', 'slot'],
                 'index claims_pkey is on (id, name, slot)');

-- The unique partial index of request keys (2): one live claim per name, role and key.
SELECT is((SELECT pg_get_indexdef('pgsem.claims_rate_grants'::regclass)),
          'CREATE INDEX claims_rate_grants ON pgsem.claims USING btree (name, claimed_at) WHERE ((ended_at IS NULL) AND rate)',
          'claims_rate_grants''s full definition: unended rate grants in grant order');
SELECT is((SELECT pg_get_indexdef('pgsem.claims_request_key'::regclass)),
          'CREATE UNIQUE INDEX claims_request_key ON pgsem.claims USING btree (name, holder_role, request_key) WHERE ((ended_at IS NULL) AND (request_key IS NOT NULL))',
          'claims_request_key''s full definition');
SELECT is((SELECT co.collname FROM pg_attribute a JOIN pg_collation co ON co.oid = a.attcollation
            WHERE a.attrelid = 'pgsem.claims'::regclass AND a.attname = 'request_key'),
          'C'::name, 'pgsem.claims.request_key compares bytewise (COLLATE "C")');

------------------------------------------------------------------------------------------------
-- pg_dump keeps the table and the sequence (1)
------------------------------------------------------------------------------------------------
SELECT results_eq(
    $$SELECT c::regclass::text FROM pg_extension e, unnest(e.extconfig) c
       WHERE e.extname = 'pgsem' ORDER BY 1$$,
    $$VALUES ('pgsem.claim_id'), ('pgsem.claims'), ('pgsem.declarations'), ('pgsem.quotas')$$,
    'pgsem.claims, pgsem.claim_id, pgsem.declarations and pgsem.quotas are extension configuration (dumped)');

------------------------------------------------------------------------------------------------
-- Table pgsem.declarations (1.2): written only by its owner, read by the database's owner (6)
------------------------------------------------------------------------------------------------
SELECT has_table('pgsem', 'quotas', 'table pgsem.quotas exists');
SELECT table_privs_are('pgsem', 'quotas', 'pgtap_plain', ARRAY[]::text[],
                       'an ordinary role has no privilege on table pgsem.quotas');
SELECT table_privs_are('pgsem', 'quotas', 'pg_database_owner', ARRAY['SELECT'],
                       'the database owner may read pgsem.quotas (pg_dump), not write it');
SELECT is((SELECT pg_catalog.array_agg(tgname::text || ':' || tgenabled::text ORDER BY tgname)
             FROM pg_catalog.pg_trigger WHERE tgrelid = 'pgsem.quotas'::regclass),
          ARRAY['quotas_changed:A', 'quotas_not_replicated:A', 'quotas_truncated:A'],
          'pgsem.quotas tells every backend of a change and drops what logical replication brings');
SELECT has_table('pgsem', 'buckets', 'table pgsem.buckets exists');
SELECT table_privs_are('pgsem', 'buckets', 'pgtap_plain', ARRAY[]::text[],
                       'an ordinary role has no privilege on table pgsem.buckets');
SELECT table_privs_are('pgsem', 'buckets', 'pg_database_owner', ARRAY['SELECT'],
                       'the database owner may read pgsem.buckets, not write it');
SELECT columns_are('public', 'sem_buckets',
    ARRAY['name', 'n', 'per', 'burst', 'available', 'full_at', 'granted_at'],
    'sem_buckets has the expected columns');
SELECT columns_are('public', 'sem_stats',
    ARRAY['name', 'other', 'names_folded', 'since', 'last_active', 'granted',
          'granted_after_wait', 'refused', 'timed_out', 'wait_errors', 'released',
          'expired_permits', 'renewed', 'permits_granted', 'wait_seconds', 'wait_max_seconds',
          'held_seconds', 'paused_seconds', 'leases', 'transaction_slots', 'session_slots', 'permits_in_use',
          'waiters', 'permits_waited', 'oldest_wait'],
    'sem_stats has the expected columns');
SELECT has_table('pgsem', 'pauses', 'table pgsem.pauses exists');
SELECT table_privs_are('pgsem', 'pauses', 'pgtap_plain', ARRAY[]::text[],
                       'an ordinary role has no privilege on table pgsem.pauses');
SELECT table_privs_are('pgsem', 'pauses', 'pg_database_owner', ARRAY['SELECT'],
                       'the database owner may read pgsem.pauses, not write it');
SELECT is((SELECT pg_catalog.array_agg(tgname::text || ':' || tgenabled::text ORDER BY tgname)
             FROM pg_catalog.pg_trigger WHERE tgrelid = 'pgsem.pauses'::regclass),
          ARRAY['pauses_changed:A', 'pauses_not_replicated:A', 'pauses_truncated:A'],
          'pgsem.pauses tells every backend of a change and drops what logical replication brings');
SELECT columns_are('public', 'sem_pauses', ARRAY['name', 'until', 'paused_by', 'paused_at'],
    'sem_pauses has the expected columns');
SELECT has_table('pgsem', 'declarations', 'table pgsem.declarations exists');
SELECT table_privs_are('pgsem', 'declarations', 'public', ARRAY[]::text[],
                       'PUBLIC has no privilege on table pgsem.declarations');
SELECT table_privs_are('pgsem', 'declarations', 'pgtap_plain', ARRAY[]::text[],
                       'an ordinary role has no privilege on table pgsem.declarations');
SELECT table_privs_are('pgsem', 'declarations', 'pg_database_owner', ARRAY['SELECT'],
                       'the database owner may read pgsem.declarations (pg_dump), not write it');
SELECT columns_are('pgsem', 'declarations',
    ARRAY['pattern', 'n', 'peak_n', 'max_lease', 'max_wait', 'kind', 'per', 'burst', 'owner',
          'public_claims', 'grantees', 'declared_at', 'changed_at'],
    'pgsem.declarations has the expected columns');
SELECT trigger_is('pgsem', 'declarations', 'declarations_changed', 'pgsem',
                  'declarations_changed',
                  'every change of pgsem.declarations tells the other backends');
SELECT trigger_is('pgsem', 'declarations', 'declarations_truncated', 'pgsem',
                  'declarations_changed', 'and so does a TRUNCATE');
SELECT trigger_is('pgsem', 'declarations', 'declarations_not_replicated', 'pgsem',
                  'skip_replicated_change',
                  'declarations, like claims, drop what logical replication brings');
SELECT is((SELECT pg_catalog.array_agg(tgname::text || ':' || tgenabled::text ORDER BY tgname)
             FROM pg_catalog.pg_trigger WHERE tgrelid = 'pgsem.declarations'::regclass),
          ARRAY['declarations_changed:A', 'declarations_not_replicated:A',
                'declarations_truncated:A'],
          'all three fire always: in a logical replication worker too');

------------------------------------------------------------------------------------------------
-- Views (5 checks each, their column lists and column types)
------------------------------------------------------------------------------------------------
SELECT has_view('public', v, format('view %s exists', v))
  FROM unnest(ARRAY['sem_holders', 'sem_summary', 'sem_history', 'sem_waiters',
                      'sem_declarations', 'sem_quotas', 'sem_pauses', 'sem_buckets',
                      'sem_stats']) v;
SELECT table_privs_are('public', v, 'public', ARRAY['SELECT'],
                       format('PUBLIC may SELECT %s and nothing else', v))
  FROM unnest(ARRAY['sem_holders', 'sem_summary', 'sem_history', 'sem_waiters',
                      'sem_declarations', 'sem_quotas', 'sem_pauses', 'sem_buckets',
                      'sem_stats']) v;
SELECT table_privs_are('public', v, 'pgtap_plain', ARRAY['SELECT'],
                       format('an ordinary role may SELECT %s and nothing else', v))
  FROM unnest(ARRAY['sem_holders', 'sem_summary', 'sem_history', 'sem_waiters',
                      'sem_declarations', 'sem_quotas', 'sem_pauses', 'sem_buckets',
                      'sem_stats']) v;
SELECT ok(has_table_privilege('pgtap_plain', format('public.%I', v), 'SELECT'),
          format('has_table_privilege(ordinary role, %s, SELECT)', v))
  FROM unnest(ARRAY['sem_holders', 'sem_summary', 'sem_history', 'sem_waiters',
                      'sem_declarations', 'sem_quotas', 'sem_pauses', 'sem_buckets',
                      'sem_stats']) v;
SELECT is(obj_description(format('public.%I', v)::regclass, 'pg_class') IS NOT NULL, true,
          format('view %s has a COMMENT', v))
  FROM unnest(ARRAY['sem_holders', 'sem_summary', 'sem_history', 'sem_waiters',
                      'sem_declarations', 'sem_quotas', 'sem_pauses', 'sem_buckets',
                      'sem_stats']) v;

SELECT columns_are('public', 'sem_holders',
    ARRAY['name', 'slot', 'id', 'claimed_at', 'expires_at', 'pid', 'role', 'application_name',
          'committed', 'prepared_gid', 'open_since', 'kind'],
    'sem_holders has the expected columns');
SELECT columns_are('public', 'sem_summary',
    ARRAY['name', 'live', 'expired_unreaped', 'max_n', 'uncommitted', 'transaction_claims',
          'session_claims', 'waiting'],
    'sem_summary has the expected columns');
SELECT columns_are('public', 'sem_waiters',
    ARRAY['name', 'n', 'pid', 'role', 'waiting_since', 'position', 'kind', 'application_name',
          'permits'],
    'sem_waiters has the expected columns');
SELECT columns_are('public', 'sem_declarations',
    ARRAY['name', 'is_prefix', 'kind', 'n', 'per', 'burst', 'peak_n', 'max_lease', 'max_wait',
          'owner', 'may_claim', 'declared_at', 'changed_at'],
    'sem_declarations has the expected columns');
SELECT columns_are('public', 'sem_quotas', ARRAY['role', 'max_claims', 'max_waiters', 'changed_at'],
    'sem_quotas has the expected columns');
SELECT columns_are('public', 'sem_history',
    ARRAY['id', 'name', 'slot', 'n', 'claimed_at', 'expires_at', 'lease', 'status', 'ended_at',
          'pid', 'role', 'application_name', 'permits'],
    'sem_history has the expected columns');
SELECT col_type_is('public', c.v, c.col, c.typ, format('%s.%s is %s', c.v, c.col, c.typ))
  FROM (VALUES
    (1, 'sem_holders', 'name', 'text'), (2, 'sem_holders', 'slot', 'integer'),
    (3, 'sem_holders', 'id', 'bigint'), (4, 'sem_holders', 'expires_at', 'timestamp with time zone'),
    (5, 'sem_holders', 'pid', 'integer'), (6, 'sem_holders', 'role', 'regrole'),
    (7, 'sem_summary', 'live', 'bigint'), (8, 'sem_summary', 'expired_unreaped', 'bigint'),
    (9, 'sem_summary', 'max_n', 'integer'),
    (10, 'sem_history', 'n', 'integer'), (11, 'sem_history', 'status', 'text'),
    (12, 'sem_history', 'ended_at', 'timestamp with time zone'),
    (13, 'sem_history', 'lease', 'interval'), (14, 'sem_history', 'role', 'regrole'),
    (15, 'sem_holders', 'kind', 'text'), (16, 'sem_summary', 'waiting', 'bigint'),
    (17, 'sem_waiters', 'position', 'integer'), (18, 'sem_waiters', 'role', 'regrole'),
    (19, 'sem_waiters', 'waiting_since', 'timestamp with time zone'))
    AS c(pos, v, col, typ)
 ORDER BY c.pos;

------------------------------------------------------------------------------------------------
-- Functions: PUBLIC and an ordinary role may EXECUTE every one (24 + 24 + 2)
------------------------------------------------------------------------------------------------
CREATE TEMP TABLE api (name name, args name[]) ON COMMIT DROP;
INSERT INTO api VALUES
    ('fnv1a_64', '{text}'), ('fnv1a_64', '{bytea}'),
    ('advisory_lock_text', '{text}'), ('advisory_lock_text_shared', '{text}'),
    ('advisory_try_lock_text', '{text}'), ('advisory_try_lock_text_shared', '{text}'),
    ('advisory_session_lock_text', '{text}'), ('advisory_session_lock_text_shared', '{text}'),
    ('advisory_session_try_lock_text', '{text}'),
    ('advisory_session_try_lock_text_shared', '{text}'),
    ('advisory_session_unlock_text', '{text}'), ('advisory_session_unlock_text_shared', '{text}'),
    ('sem_claim', '{text,integer,interval,interval,integer,text}'), ('sem_release', '{bigint}'),
    ('sem_claim_xact', '{text,integer,interval,integer}'),
    ('sem_claim_session', '{text,integer,interval,integer}'),
    ('sem_release_session', '{text,integer}'),
    ('sem_renew', '{bigint,interval}'), ('sem_held', '{bigint}'), ('sem_fence', '{bigint}'),
    ('sem_prune_history', '{bigint}'),
    ('sem_claim_all', '{text[],integer[],interval,interval,integer[],text,interval[]}'),
    ('sem_claim_xact_all', '{text[],integer[],interval,integer[]}'),
    ('sem_claim_session_all', '{text[],integer[],interval,integer[]}');

SELECT function_privs_are('public', name, args, 'public', ARRAY['EXECUTE'],
                          format('PUBLIC may EXECUTE %s(%s)', name, array_to_string(args, ', ')))
  FROM api ORDER BY name, args;
SELECT function_privs_are('public', name, args, 'pgtap_plain', ARRAY['EXECUTE'],
                          format('an ordinary role may EXECUTE %s(%s)', name,
                                 array_to_string(args, ', ')))
  FROM api ORDER BY name, args;
SELECT results_eq(
    $$SELECT count(*), bool_and(has_function_privilege('pgtap_plain', p.oid, 'EXECUTE'))
        FROM pg_proc p
        JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
       WHERE p.pronamespace = 'public'::regnamespace
         AND p.oid <> 'public.sem_stats_reset(text)'::regprocedure$$,
    $$VALUES (36::bigint, true)$$,
    'has_function_privilege: the ordinary role may execute all 36 pgsem API functions but sem_stats_reset');
SELECT is(has_function_privilege('pgtap_plain', 'public.sem_stats_reset(text)', 'EXECUTE'), false,
          'nor sem_stats_reset, which every reader of the counters would see zeroed: a superuser grants it');
SELECT is((SELECT count(*) FROM pg_proc p
             JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                             AND d.deptype = 'e'
             JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
            WHERE p.proacl IS NOT NULL
              AND p.prorettype <> 'trigger'::regtype
              AND p.oid <> 'public.sem_stats_reset(text)'::regprocedure
              AND NOT EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
                               WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')),
          0::bigint, 'no pgsem function but its trigger and sem_stats_reset has had EXECUTE revoked from PUBLIC');

------------------------------------------------------------------------------------------------
-- What the ordinary role can actually do (3 + 3 + 4 = 10)
------------------------------------------------------------------------------------------------
SET LOCAL ROLE pgtap_plain;
SELECT lives_ok(format('SELECT * FROM public.%I', v), format('an ordinary role reads %s', v))
  FROM unnest(ARRAY['sem_holders', 'sem_summary', 'sem_history', 'sem_waiters',
                      'sem_declarations', 'sem_quotas', 'sem_pauses', 'sem_buckets',
                      'sem_stats']) v;
SELECT lives_ok(q, 'an ordinary role calls ' || q)
  FROM unnest(ARRAY[$$SELECT fnv1a_64('k')$$, $$SELECT sem_held(-1)$$,
                    $$SELECT sem_release(-1)$$]) q;
SELECT throws_ok('SELECT count(*) FROM pgsem.claims', '42501', NULL,
                 'an ordinary role cannot read pgsem.claims');
SELECT throws_ok($$DELETE FROM pgsem.claims$$, '42501', NULL,
                 'an ordinary role cannot delete from pgsem.claims');
SELECT throws_ok($$SELECT nextval('pgsem.claim_id')$$, '42501', NULL,
                 'an ordinary role cannot draw ids from pgsem.claim_id');
SELECT throws_ok($$CREATE TABLE pgsem.mine (x int)$$, '42501', NULL,
                 'an ordinary role cannot create objects in schema pgsem');
SELECT throws_ok($$SELECT * FROM pgsem.unended_claims()$$, '42501', NULL,
                 'an ordinary role cannot call pgsem.unended_claims() but through the views');
RESET ROLE;

------------------------------------------------------------------------------------------------
-- The database owner may read (for pg_dump), never write (4)
------------------------------------------------------------------------------------------------
SELECT ok(has_schema_privilege('pg_database_owner', 'pgsem', 'USAGE'),
          'pg_database_owner may use schema pgsem');
SELECT table_privs_are('pgsem', 'claims', 'pg_database_owner', ARRAY['SELECT'],
                       'pg_database_owner may SELECT pgsem.claims and nothing else');
SELECT sequence_privs_are('pgsem', 'claim_id', 'pg_database_owner', ARRAY['SELECT'],
                          'pg_database_owner may SELECT pgsem.claim_id and nothing else');
SELECT is((SELECT tgenabled::text FROM pg_trigger
            WHERE tgrelid = 'pgsem.claims'::regclass AND tgname = 'claims_not_replicated'),
          'A', 'pgsem.claims has the ALWAYS trigger that drops replicated rows');

SELECT * FROM finish();
ROLLBACK;
