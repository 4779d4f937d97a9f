-- Pauses: sem_pause(name, until) -- no grants and no claims on a name before until (NULL lifts
-- it). A pause only moves later, ends within a day, and may be set by any role that may claim
-- the name. Bad input is an error that changes nothing.
\set ECHO none
\i sql/helpers/try.sql
\set ECHO all
CREATE ROLE regress_p_app;
CREATE ROLE regress_p_other;

-- NULL name (22004); empty, over-long, infinite or more than a day ahead (22023).
SELECT try($$SELECT sem_pause(NULL, now() + '1 minute')$$) AS null_name,
       try($$SELECT sem_pause('', now() + '1 minute')$$) AS empty_name,
       try(format('SELECT sem_pause(%L, now() + %L)', repeat('p', 257), '1 minute')) AS long_name;
SELECT try($$SELECT sem_pause('p bad', 'infinity')$$) AS infinite,
       try($$SELECT sem_pause('p bad', now() + '1 day 1 minute')$$) AS over_a_day;
SELECT count(*) AS no_pauses FROM sem_pauses;

-- A pause holds back every kind of claim on the name, and rate grants; other names go on.
SELECT sem_pause('p api', now() + '1 hour') > now() AS paused;
SELECT sem_claim('p api', 4) IS NULL AS lease_refused,
       NOT sem_rate('p api', 4, '1 minute') AS rate_refused,
       sem_claim_all(ARRAY['p api', 'p other'], ARRAY[4, 4]) IS NULL AS set_refused,
       sem_claim('p other', 4) IS NOT NULL AS other_name_granted;
BEGIN;
SELECT sem_claim_xact('p api', 4) IS NULL AS xact_refused;
COMMIT;
SELECT sem_claim_session('p api', 4) IS NULL AS session_refused;
SELECT count(*) AS nothing_held FROM sem_holders WHERE name = 'p api';
SELECT name, until > now() + '59 minutes' AS about_an_hour, paused_by FROM sem_pauses;

-- A pause only moves later; one whose time has passed changes nothing.
SELECT sem_pause('p api', now() + '1 minute') > now() + '59 minutes' AS later_pause_kept,
       sem_pause('p api', now() - interval '1 minute') > now() + '59 minutes' AS past_changes_nothing,
       sem_pause('p api', now() + '2 hours') > now() + '119 minutes' AS moved_later;

-- NULL lifts it: claims go on at once.
SELECT sem_pause('p api', NULL) IS NULL AS lifted;
SELECT sem_claim('p api', 4) IS NOT NULL AS lease_granted,
       sem_rate('p api 2', 4, '1 minute') AS rate_granted;
SELECT count(*) AS no_pauses FROM sem_pauses;

-- A caller that waits is granted when the pause ends, not before.
SELECT sem_pause('p short', now() + '300 milliseconds') AS pause_end \gset
SELECT sem_rate('p short', 1, '1 minute', wait => '5 seconds') AS waited;
SELECT claimed_at >= :'pause_end' AS not_before_the_end FROM sem_history WHERE name = 'p short';
-- One that waits less is refused when its wait runs out.
SELECT sem_pause('p short', now() + '1 hour') IS NOT NULL AS paused,
       sem_rate('p short', 2, '1 minute', wait => '10 milliseconds') AS refused;

-- Who may pause: a role that may claim the name. Undeclared names: every role; a declared one:
-- its owner and grantees (42501 for the rest).
SELECT sem_declare('p declared', 2);
SELECT sem_grant('p declared', 'regress_p_app');
SET ROLE regress_p_other;
SELECT try($$SELECT sem_pause('p declared', now() + '1 minute')$$) AS not_granted,
       sem_pause('p undeclared', now() + '1 minute') IS NOT NULL AS undeclared_paused;
SET ROLE regress_p_app;
SELECT sem_pause('p declared', now() + '1 minute') IS NOT NULL AS granted_paused,
       sem_pause('p declared', NULL) IS NULL AS granted_lifted;
-- A role under a claims quota pauses only declared names within it (53400): a pause holds back
-- every slot of a name.
RESET ROLE;
SELECT sem_set_quota('regress_p_other', 2);
SELECT sem_declare('p small', 2);
SELECT sem_declare('p large', 3);
SELECT sem_grant_public('p small');
SELECT sem_grant_public('p large');
SET ROLE regress_p_other;
SELECT try($$SELECT sem_pause('p other undeclared', now() + '1 minute')$$) AS undeclared,
       try($$SELECT sem_pause('p large', now() + '1 minute')$$) AS above_quota,
       sem_pause('p small', now() + '1 minute') IS NOT NULL AS within_quota;
-- And one role sets at most 100 pauses in force (54000).
RESET ROLE;
SELECT sem_set_quota('regress_p_other', NULL);
SET ROLE regress_p_other;
SELECT count(sem_pause('p many ' || g, now() + '1 minute')) AS paused
  FROM generate_series(1, 98) g;
SELECT try($$SELECT sem_pause('p one too many', now() + '1 minute')$$) AS hundred_and_first,
       sem_pause('p many 1', now() + '2 minutes') IS NOT NULL AS moving_one_is_fine;
SET ROLE regress_p_app;
SELECT sem_pause('p of app', now() + '1 minute') IS NOT NULL AS other_roles_still_may;
RESET ROLE;
SELECT count(*) AS lifted
  FROM (SELECT sem_pause(name, NULL) FROM sem_pauses
         WHERE name LIKE 'p many %' OR name IN ('p small', 'p of app')) l;
SELECT sem_undeclare('p small'), sem_undeclare('p large');
SET ROLE regress_p_app;
-- Nobody writes the table directly.
SELECT try($$DELETE FROM pgsem.pauses$$) AS direct_delete;
RESET ROLE;
SELECT name, paused_by FROM sem_pauses ORDER BY name;

SELECT sem_undeclare('p declared');
SELECT sem_pause(name, NULL) FROM sem_pauses;
DROP ROLE regress_p_app, regress_p_other;
