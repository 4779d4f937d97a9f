-- pgsem's text-keyed lock: the same lock, hashed inside the server.
\set k random(1, 1000000000)
BEGIN;
SELECT advisory_lock_text(:k::text);
COMMIT;
