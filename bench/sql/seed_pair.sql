-- The Django/Postgres seed article's semaphore, as SQL: its timeout sweep, then LOCK TABLE and
-- the generate_series insert in one transaction; release by UPDATE. A name column is added so
-- that it can serve several semaphores; the lock stays table-wide, as in the article.
-- Variables as in pgsem_pair.sql.
\set name_no random(1, :names)
UPDATE seed_requests SET timed_out_at = now()
 WHERE created_at < now() - interval '90 seconds'
   AND completed_at IS NULL AND timed_out_at IS NULL;
BEGIN;
LOCK TABLE seed_requests IN SHARE ROW EXCLUSIVE MODE;
WITH ins AS (
    INSERT INTO seed_requests (name, created_at, slot)
    SELECT 'bench-' || (:group * 1000000 + :name_no), now(), coalesce(min(slot), 0)
      FROM generate_series(0, :n - 1) slot
     WHERE NOT EXISTS (
           SELECT * FROM seed_requests r
            WHERE r.name = 'bench-' || (:group * 1000000 + :name_no) AND r.slot = slot.slot
              AND r.completed_at IS NULL AND r.timed_out_at IS NULL)
    ON CONFLICT DO NOTHING
    RETURNING id)
SELECT coalesce((SELECT id FROM ins), 0) AS id, (SELECT count(*) FROM ins)::int AS got \gset
COMMIT;
\if :got
UPDATE seed_requests SET completed_at = now() WHERE id = :id;
\else
\sleep :backoff us
\endif
