-- pgTAP: the SQL API's functions as the catalog records them -- signatures, return types,
-- volatility, strictness, parallel safety, language, security and default arguments.
-- Runs in one transaction that is rolled back, so files are independent of each other.
\set ON_ERROR_STOP 1
BEGIN;
SELECT plan(281);

-- One row per function of the API: the expected catalog entry.
CREATE TEMP TABLE api (
    name       name,
    args       name[],
    returns    text,
    volatility text,
    strict     boolean,
    parallel   "char",
    arguments  text    -- pg_get_function_arguments(): names and defaults
) ON COMMIT DROP;
INSERT INTO api VALUES
    ('fnv1a_64', '{text}', 'bigint', 'immutable', true, 's', 'key text'),
    ('fnv1a_64', '{bytea}', 'bigint', 'immutable', true, 's', 'key bytea'),
    ('advisory_lock_text', '{text}', 'void', 'volatile', false, 'u', 'key text'),
    ('advisory_lock_text_shared', '{text}', 'void', 'volatile', false, 'u', 'key text'),
    ('advisory_try_lock_text', '{text}', 'boolean', 'volatile', false, 'u', 'key text'),
    ('advisory_try_lock_text_shared', '{text}', 'boolean', 'volatile', false, 'u', 'key text'),
    ('advisory_session_lock_text', '{text}', 'void', 'volatile', false, 'u', 'key text'),
    ('advisory_session_lock_text_shared', '{text}', 'void', 'volatile', false, 'u', 'key text'),
    ('advisory_session_try_lock_text', '{text}', 'boolean', 'volatile', false, 'u', 'key text'),
    ('advisory_session_try_lock_text_shared', '{text}', 'boolean', 'volatile', false, 'u', 'key text'),
    ('advisory_session_unlock_text', '{text}', 'boolean', 'volatile', false, 'u', 'key text'),
    ('advisory_session_unlock_text_shared', '{text}', 'boolean', 'volatile', false, 'u', 'key text'),
    ('sem_claim', '{text,integer,interval,interval,integer,text}', 'bigint', 'volatile', false, 'u',
        'name text, n integer DEFAULT NULL::integer, timeout interval DEFAULT ''00:01:30''::interval, wait interval DEFAULT ''00:00:00''::interval, permits integer DEFAULT 1, request_key text DEFAULT NULL::text'),
    ('sem_claim_xact', '{text,integer,interval,integer}', 'integer', 'volatile', false, 'u',
        'name text, n integer DEFAULT NULL::integer, wait interval DEFAULT ''00:00:00''::interval, permits integer DEFAULT 1'),
    ('sem_claim_session', '{text,integer,interval,integer}', 'integer', 'volatile', false, 'u',
        'name text, n integer DEFAULT NULL::integer, wait interval DEFAULT ''00:00:00''::interval, permits integer DEFAULT 1'),
    ('sem_release_session', '{text,integer}', 'boolean', 'volatile', false, 'u',
        'name text, slot integer'),
    ('sem_release', '{bigint}', 'boolean', 'volatile', true, 'u', 'id bigint'),
    ('sem_renew', '{bigint,interval}', 'boolean', 'volatile', false, 'u',
        'id bigint, timeout interval DEFAULT NULL::interval'),
    ('sem_held', '{bigint}', 'boolean', 'volatile', true, 'r', 'id bigint'),
    ('sem_fence', '{bigint}', 'void', 'volatile', false, 'u', 'id bigint'),
    ('sem_prune_history', '{bigint}', 'bigint', 'volatile', false, 'u',
        'max_rows bigint DEFAULT 10000'),
    ('sem_claim_all', '{text[],integer[],interval,interval,integer[],text,interval[]}', 'bigint[]', 'volatile',
        false, 'u',
        'names text[], ns integer[] DEFAULT NULL::integer[], timeout interval DEFAULT ''00:01:30''::interval, wait interval DEFAULT ''00:00:00''::interval, permits integer[] DEFAULT NULL::integer[], request_key text DEFAULT NULL::text, pers interval[] DEFAULT NULL::interval[]'),
    ('sem_claim_xact_all', '{text[],integer[],interval,integer[]}', 'integer[]', 'volatile',
        false, 'u',
        'names text[], ns integer[] DEFAULT NULL::integer[], wait interval DEFAULT ''00:00:00''::interval, permits integer[] DEFAULT NULL::integer[]'),
    ('sem_claim_session_all', '{text[],integer[],interval,integer[]}', 'integer[]', 'volatile',
        false, 'u',
        'names text[], ns integer[] DEFAULT NULL::integer[], wait interval DEFAULT ''00:00:00''::interval, permits integer[] DEFAULT NULL::integer[]'),
    ('sem_declare', '{text,integer,interval,interval}', 'void', 'volatile', false, 'u',
        'name text, n integer, max_lease interval DEFAULT NULL::interval, max_wait interval DEFAULT NULL::interval'),
    ('sem_declare_rate', '{text,integer,interval,interval}', 'void', 'volatile', false, 'u',
        'name text, n integer, per interval, max_wait interval DEFAULT NULL::interval'),
    ('sem_declare_bucket', '{text,integer,interval,integer,interval}', 'void', 'volatile', false, 'u',
        'name text, n integer, per interval, burst integer DEFAULT NULL::integer, max_wait interval DEFAULT NULL::interval'),
    ('sem_undeclare', '{text}', 'boolean', 'volatile', false, 'u', 'name text'),
    ('sem_grant', '{text,regrole}', 'void', 'volatile', false, 'u', 'name text, grantee regrole'),
    ('sem_revoke', '{text,regrole}', 'void', 'volatile', false, 'u', 'name text, grantee regrole'),
    ('sem_grant_public', '{text}', 'void', 'volatile', false, 'u', 'name text'),
    ('sem_revoke_public', '{text}', 'void', 'volatile', false, 'u', 'name text'),
    ('sem_set_quota', '{regrole,integer,integer}', 'void', 'volatile', false, 'u',
        'role regrole, max_claims integer, max_waiters integer DEFAULT NULL::integer'),
    ('sem_rate', '{text,integer,interval,integer,interval}', 'boolean', 'volatile', false, 'u',
        'name text, n integer DEFAULT NULL::integer, per interval DEFAULT NULL::interval, permits integer DEFAULT 1, wait interval DEFAULT ''00:00:00''::interval'),
    ('sem_pause', '{text,"timestamp with time zone"}', 'timestamp with time zone', 'volatile', false, 'u',
        'name text, until timestamp with time zone'),
    ('sem_bucket', '{text,integer,interval,integer,interval,integer}', 'boolean', 'volatile', false, 'u',
        'name text, n integer DEFAULT NULL::integer, per interval DEFAULT NULL::interval, permits integer DEFAULT 1, wait interval DEFAULT ''00:00:00''::interval, burst integer DEFAULT NULL::integer'),
    ('sem_stats_reset', '{text}', 'bigint', 'volatile', false, 'r', 'name text DEFAULT NULL::text');

-- The catalog entry of each, found by exact signature in the extension's schema.
CREATE TEMP VIEW api_proc AS
    SELECT a.*, p.oid AS fn
      FROM api a
      LEFT JOIN pg_proc p
        ON p.oid = to_regprocedure(format('public.%I(%s)', a.name, array_to_string(a.args, ',')));

-- 1. The extension has exactly these functions, no more and no fewer.
SELECT results_eq(
    $$SELECT p.oid::regprocedure::text
        FROM pg_proc p
        JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
       WHERE p.pronamespace = 'public'::regnamespace
       ORDER BY 1$$,
    $$SELECT format('%I(%s)', name, array_to_string(args, ','))::regprocedure::text
        FROM api ORDER BY 1$$,
    'pgsem owns exactly the 37 functions of its API in its schema');
SELECT is((SELECT count(*) FROM api_proc WHERE fn IS NOT NULL), 37::bigint,
          'every API function resolves by its exact signature');

-- 2. Per function: exists, returns, volatility, strictness, language, parallel safety (6 x 37).
SELECT has_function('public', name, args,
                    format('%s(%s) exists', name, array_to_string(args, ', ')))
  FROM api ORDER BY name, args;
SELECT function_returns('public', name, args, returns,
                        format('%s(%s) returns %s', name, array_to_string(args, ', '), returns))
  FROM api ORDER BY name, args;
SELECT volatility_is('public', name, args, volatility,
                     format('%s(%s) is %s', name, array_to_string(args, ', '), volatility))
  FROM api ORDER BY name, args;
SELECT CASE WHEN strict
            THEN is_strict('public', name, args,
                           format('%s(%s) is STRICT', name, array_to_string(args, ', ')))
            ELSE isnt_strict('public', name, args,
                             format('%s(%s) is not STRICT', name, array_to_string(args, ', ')))
       END
  FROM api ORDER BY name, args;
SELECT function_lang_is('public', name, args, 'c',
                        format('%s(%s) is written in C', name, array_to_string(args, ', ')))
  FROM api ORDER BY name, args;
SELECT is(p.proparallel, a.parallel,
          format('%s(%s) has proparallel %s', a.name, array_to_string(a.args, ', '), a.parallel))
  FROM api_proc a JOIN pg_proc p ON p.oid = a.fn ORDER BY a.name, a.args;

-- 3. Parallel safety as one query: only fnv1a_64 is safe, sem_held restricted, the rest unsafe.
SELECT results_eq(
    $$SELECT p.oid::regprocedure::text, p.proparallel
        FROM pg_proc p
        JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
       WHERE p.pronamespace = 'public'::regnamespace
       ORDER BY 1$$,
    $$SELECT fn::regprocedure::text, parallel FROM api_proc ORDER BY 1$$,
    'proparallel of every pgsem API function');
SELECT results_eq(
    $$SELECT p.oid::regprocedure::text
        FROM pg_proc p
        JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
       WHERE p.proparallel = 's' ORDER BY 1$$,
    $$VALUES ('fnv1a_64(bytea)'), ('fnv1a_64(text)')$$,
    'only fnv1a_64 is PARALLEL SAFE');

-- 4. None is SECURITY DEFINER or pins settings (the SQL script says none needs to) (37 + 1).
SELECT isnt_definer('public', name, args,
                    format('%s(%s) is not SECURITY DEFINER', name, array_to_string(args, ', ')))
  FROM api ORDER BY name, args;
SELECT is((SELECT count(*) FROM api_proc a JOIN pg_proc p ON p.oid = a.fn
            WHERE p.proconfig IS NOT NULL), 0::bigint,
          'no pgsem function carries SET options');

-- 5. Arguments, names and defaults.
SELECT results_eq(
    $$SELECT fn::regprocedure::text, pg_get_function_arguments(fn) FROM api_proc ORDER BY 1$$,
    $$SELECT fn::regprocedure::text, arguments FROM api_proc ORDER BY 1$$,
    'pg_get_function_arguments() of every function');
SELECT is(pg_get_function_arguments('public.sem_claim(text,integer,interval,interval,integer,text)'::regprocedure),
          'name text, n integer DEFAULT NULL::integer, timeout interval DEFAULT ''00:01:30''::interval, wait interval DEFAULT ''00:00:00''::interval, permits integer DEFAULT 1, request_key text DEFAULT NULL::text',
          'sem_claim: n defaults to NULL (the declared n), timeout to 00:01:30, wait to 0, permits to 1, request_key to NULL');
SELECT is(pg_get_function_arguments('public.sem_renew(bigint,interval)'::regprocedure),
          'id bigint, timeout interval DEFAULT NULL::interval',
          'sem_renew: timeout defaults to NULL');
SELECT is(pg_get_function_arguments('public.sem_prune_history(bigint)'::regprocedure),
          'max_rows bigint DEFAULT 10000',
          'sem_prune_history: max_rows defaults to 10000');
-- The default expressions, evaluated.
SELECT results_eq(
    'SELECT ' || pg_get_function_arg_default('public.sem_claim(text,integer,interval,interval,integer,text)'::regprocedure, 3),
    $$VALUES (interval '90 seconds')$$,
    'sem_claim''s default timeout evaluates to 90 seconds');
SELECT results_eq(
    format('SELECT %s, %s, %s',
           pg_get_function_arg_default('public.sem_claim(text,integer,interval,interval,integer,text)'::regprocedure, 4),
           pg_get_function_arg_default('public.sem_claim_xact(text,integer,interval,integer)'::regprocedure, 3),
           pg_get_function_arg_default('public.sem_claim_session(text,integer,interval,integer)'::regprocedure, 3)),
    $$VALUES (interval '0', interval '0', interval '0')$$,
    'every claim''s default wait evaluates to 0: answer at once');
SELECT results_eq(
    format('SELECT %s, %s, %s',
           pg_get_function_arg_default('public.sem_claim(text,integer,interval,interval,integer,text)'::regprocedure, 5),
           pg_get_function_arg_default('public.sem_claim_xact(text,integer,interval,integer)'::regprocedure, 4),
           pg_get_function_arg_default('public.sem_claim_session(text,integer,interval,integer)'::regprocedure, 4)),
    $$VALUES (1, 1, 1)$$,
    'every claim''s default permits evaluates to 1: one slot, as before 1.2');
SELECT results_eq(
    'SELECT ' || pg_get_function_arg_default('public.sem_renew(bigint,interval)'::regprocedure, 2)
        || ' IS NULL',
    $$VALUES (true)$$,
    'sem_renew''s default timeout evaluates to NULL');
SELECT results_eq(
    $$SELECT fn::regprocedure::text, p.pronargdefaults::int
        FROM api_proc a JOIN pg_proc p ON p.oid = a.fn ORDER BY 1$$,
    $$SELECT fn::regprocedure::text,
             CASE WHEN name = 'sem_claim_all' THEN 6
                  WHEN name = 'sem_claim' THEN 5
                  WHEN name = 'sem_bucket' THEN 5
                  WHEN name = 'sem_rate' THEN 4
                  WHEN name IN ('sem_claim_xact', 'sem_claim_session', 'sem_claim_xact_all',
                                'sem_claim_session_all') THEN 3
                  WHEN name IN ('sem_declare', 'sem_declare_bucket') THEN 2
                  WHEN name IN ('sem_renew', 'sem_prune_history', 'sem_set_quota',
                                'sem_declare_rate', 'sem_stats_reset') THEN 1
                  ELSE 0 END
        FROM api_proc ORDER BY 1$$,
    'the default arguments: sem_claim_all six, sem_claim and sem_bucket five, sem_rate four, the scoped claims three, sem_declare and sem_declare_bucket two, sem_renew, sem_prune_history, sem_set_quota, sem_declare_rate and sem_stats_reset one');
SELECT is(pg_get_function_identity_arguments('public.sem_claim_all(text[],integer[],interval,interval,integer[],text,interval[])'::regprocedure),
          'names text[], ns integer[], timeout interval, wait interval, permits integer[], request_key text, pers interval[]',
          'sem_claim_all''s arguments are named names, ns, timeout, wait, permits, request_key, pers: the windows of rate members last');
SELECT results_eq(
    'SELECT ' || pg_get_function_arg_default('public.sem_claim_all(text[],integer[],interval,interval,integer[],text,interval[])'::regprocedure, 7)
        || ' IS NULL',
    $$VALUES (true)$$,
    'sem_claim_all''s default pers evaluates to NULL: no rate member');
SELECT is((SELECT count(*) FROM pg_proc
            WHERE pronamespace = 'public'::regnamespace
              AND proname IN ('sem_claim_xact_all', 'sem_claim_session_all')
              AND 'interval[]'::regtype = ANY (proargtypes::oid[])), 0::bigint,
          'transaction and session sets take no pers: a rate grant is a row, not a lock');
SELECT is(pg_get_function_identity_arguments('public.sem_claim(text,integer,interval,interval,integer,text)'::regprocedure),
          'name text, n integer, timeout interval, wait interval, permits integer, request_key text',
          'sem_claim''s arguments are named name, n, timeout, wait, permits, request_key');
SELECT ok(to_regprocedure('public.sem_claim(text,integer,interval)') IS NULL
          AND to_regprocedure('public.sem_claim(text,integer,interval,interval)') IS NULL
          AND to_regprocedure('public.sem_claim_xact(text,integer,interval)') IS NULL
          AND to_regprocedure('public.sem_claim_session(text,integer,interval)') IS NULL,
          'the claim functions of 1.0 and 1.1 are gone: no call is ambiguous');

-- 6. Internal functions live in schema pgsem, which PUBLIC cannot use: the views reach
--    unended_claims(), the trigger on pgsem.claims calls skip_replicated_change().
SELECT results_eq(
    $$SELECT p.oid::regprocedure::text, p.provolatile::text, p.proparallel::text,
             l.lanname = 'c' AS in_c
        FROM pg_proc p
        JOIN pg_language l ON l.oid = p.prolang
        JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgsem'
       WHERE p.pronamespace = 'pgsem'::regnamespace
       ORDER BY 1$$,
    $$VALUES ('pgsem.declarations_changed()', 'v', 'u', true),
             ('pgsem.line_waiters()', 'v', 'r', true), ('pgsem.lock_claims()', 'v', 'r', true),
             ('pgsem.skip_replicated_change()', 'v', 'u', true),
             ('pgsem.stats()', 'v', 'r', true),
             ('pgsem.unended_claims()', 'v', 'r', true)$$,
    'the internal functions, in schema pgsem');
SELECT is(pg_get_function_result('pgsem.unended_claims()'::regprocedure),
          'SETOF record', 'pgsem.unended_claims() returns a set of records');

-- 7. Every function is documented.
SELECT is((SELECT count(*) FROM api_proc
            WHERE coalesce(obj_description(fn, 'pg_proc'), '') = ''), 0::bigint,
          'every pgsem function has a COMMENT');

SELECT * FROM finish();
ROLLBACK;
