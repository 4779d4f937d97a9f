-- The views name every transaction and session claim a session holds, as long as it holds at
-- most 16 at a time: the registry in shared memory lists 16 per session and counts the rest,
-- which sem_holders shows without a name. Once listed claims end, claims that had no room are
-- listed in their place (1.1 left them nameless for good, and sem_summary lost their semaphore).
SELECT pg_catalog.count(*) FROM (
    SELECT sem_claim_session('many-' || i, 1) FROM generate_series(1, 20) i) c;
SELECT count(name) AS named, count(*) FILTER (WHERE name IS NULL) AS nameless
  FROM sem_holders WHERE name LIKE 'many-%' OR name IS NULL;
-- 16 released: the 4 left are all named, and each has its row in sem_summary.
SELECT count(*) FILTER (WHERE sem_release_session('many-' || i, 0)) AS released
  FROM generate_series(1, 16) i;
SELECT string_agg(name, ', ' ORDER BY name) AS named,
       count(*) FILTER (WHERE name IS NULL) AS nameless
  FROM sem_holders WHERE name LIKE 'many-%' OR name IS NULL;
SELECT string_agg(name || ':' || session_claims, ', ' ORDER BY name) AS summary
  FROM sem_summary WHERE name LIKE 'many-%';

-- Transaction claims beside them: 4 session + 14 transaction claims overflow by 2; when the
-- transaction ends, the session claims are all named again.
BEGIN;
SELECT count(*) FROM (SELECT sem_claim_xact('many-x' || i, 1) FROM generate_series(1, 14) i) c;
SELECT count(name) AS named, count(*) FILTER (WHERE name IS NULL) AS nameless
  FROM sem_holders WHERE name LIKE 'many-%' OR name IS NULL;
COMMIT;
SELECT count(name) AS named, count(*) FILTER (WHERE name IS NULL) AS nameless
  FROM sem_holders WHERE name LIKE 'many-%' OR name IS NULL;
SELECT count(*) FILTER (WHERE sem_release_session('many-' || i, 0)) AS released
  FROM generate_series(17, 20) i;
SELECT count(*) AS left_over FROM sem_holders WHERE name LIKE 'many-%' OR name IS NULL;
