-- History: ended claims stay as a log, pruned after pgsem.history_retention.
SELECT sem_claim('hist', 1) AS a \gset
-- The setting exists once the library is loaded (any pgsem call, or a preload setting).
SHOW pgsem.history_retention;
SELECT sem_release(:a);
SELECT sem_claim('hist', 1, '10 milliseconds') AS b \gset
SELECT sem_claim('hist-live', 1) AS c \gset
SELECT pg_sleep(0.05);
SELECT id = :a AS a, status FROM sem_history WHERE id IN (:a, :b, :c) ORDER BY id;

-- With the default retention (a day) nothing that young is pruned.
SELECT sem_prune_history() AS pruned_with_default;

-- Retention 0 prunes everything that has ended, released or timed out; live claims stay. The
-- count is of ended claims (a released here); a claim whose lease ran out unreleased (b) is
-- deleted when the pruning transaction commits, so that its slot never looks held meanwhile.
SET pgsem.history_retention = 0;
SELECT sem_prune_history() >= 1 AS pruned;
SELECT count(*) AS kept FROM sem_history WHERE id IN (:a, :b);
SELECT status FROM sem_history WHERE id = :c;
SELECT sem_held(:c) AS live_claim_untouched;

-- max_rows bounds one call. (Claims prune a batch now and then too, so counts are bounds.)
SELECT count(sem_release(id)) AS released
  FROM (SELECT sem_claim('hist-many', 10) AS id FROM generate_series(1, 10)) s;
SELECT sem_prune_history(3) <= 3 AS pruned_at_most_3;
SELECT sem_prune_history(0) AS max_rows_zero;
SELECT sem_prune_history() <= 10 AS pruned_the_rest;
SELECT count(*) AS left_over FROM sem_history WHERE name = 'hist-many';

-- One call deletes up to max_rows, however many batches that takes. (History is kept while the
-- 3000 claims are made, so that claimers prune none of it on the way.)
SET pgsem.history_retention = -1;
SELECT count(sem_release(id)) AS released
  FROM (SELECT sem_claim('hist-bulk', 3000) AS id FROM generate_series(1, 3000)) s;
SET pgsem.history_retention = 0;
SELECT sem_prune_history(2500) AS pruned_2500;
SELECT count(*) AS left_of_3000 FROM sem_history WHERE name = 'hist-bulk';
SELECT sem_prune_history() AS pruned_the_last;

-- Claimers prune as they go: with retention 0, sustained claim/release leaves little behind.
DO $$
BEGIN
    FOR i IN 1..2000 LOOP
        PERFORM sem_release(sem_claim('hist-churn', 4));
    END LOOP;
END $$;
SELECT count(*) < 1000 AS history_bounded FROM sem_history WHERE name = 'hist-churn';

-- -1 keeps history forever.
SET pgsem.history_retention = -1;
SELECT sem_release(sem_claim('hist-forever', 1));
SELECT sem_prune_history() AS pruned_when_forever;
SELECT count(*) AS kept_forever FROM sem_history WHERE name = 'hist-forever';

-- Units and bounds of the setting.
SET pgsem.history_retention = '2h';
SHOW pgsem.history_retention;
SET pgsem.history_retention = -2;
SELECT sem_prune_history(-1);
RESET pgsem.history_retention;
SELECT sem_release(:c);

-- A cap on the claims kept, whatever their age: the newest pgsem.history_max_claims claims by id
-- (ids are drawn in grant order). Claimers prune past it as they go; sem_prune_history too.
SET pgsem.history_max_claims = 50;
SELECT count(sem_release(sem_claim('hist-cap', 5))) AS claimed_and_released
  FROM generate_series(1, 200);
SELECT sem_prune_history() >= 0 AS pruned;
SELECT count(*) AS kept, max(id) - min(id) + 1 = count(*) AS the_newest
  FROM sem_history WHERE name = 'hist-cap';
-- A claim past the cap that still holds its slot stays.
SELECT sem_claim('hist-cap-held', 1, '1 hour') AS held_id \gset
SELECT count(sem_release(sem_claim('hist-cap', 5))) AS more FROM generate_series(1, 100);
SELECT sem_prune_history() >= 0 AS pruned_again;
SELECT sem_held(:held_id) AS still_held,
       (SELECT count(*) FROM sem_history WHERE name = 'hist-cap') AS kept_again;
SELECT sem_release(:held_id);
SET pgsem.history_max_claims = -2;
RESET pgsem.history_max_claims;
SHOW pgsem.history_max_claims;
