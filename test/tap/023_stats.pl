# sem_stats' counters on a known workload, with pgsem preloaded (the counters live in shared
# memory reserved at startup): each answer counted once under the right heading -- granted at
# once, after a wait, refused, timed out, a wait ended by a cancel or a terminate -- releases with
# their held time, renewals, leases that ran out and were reclaimed, transaction and session
# claims, sets (once on each name), rate and bucket grants; a rolled-back lease (also in a
# savepoint) never counted; time paused; the names past pgsem.stats_max_names folded into one row, the least
# recently active first; sem_stats_reset by name and for all, and who may call it. Without the
# preload, sem_stats says so and still shows holders and waiters.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $node = PostgreSQL::Test::Cluster->new('stats');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pgsem'\npgsem.stats_max_names = 10\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

sub poll
{
	my ($sql, $what) = @_;
	ok($node->poll_query_until('postgres', $sql), $what);
}

# The counters of one name, as "column=value" pairs in a fixed order.
my @counters = qw(granted granted_after_wait refused timed_out wait_errors released
  expired_permits renewed permits_granted);
sub counts
{
	my $name = shift;
	return query(
		"SELECT " . join(" || ' ' || ", map { "'$_=' || coalesce($_, -1)" } @counters)
		  . " FROM sem_stats WHERE name = '$name'");
}
sub expect
{
	my ($name, %want) = @_;
	return join(' ', map { "$_=" . ($want{$_} // 0) } @counters);
}

# ---- leases: at once, refused, timed out, released, renewed ---------------------------------
my $a1 = query(q{SELECT sem_claim('s.lease', 2, '1 hour')});
my $a2 = query(q{SELECT sem_claim('s.lease', 2, '1 hour')});
is(query(q{SELECT sem_claim('s.lease', 2, '1 hour') IS NULL}), 't', 'a third lease is refused');
is(query(q{SELECT sem_claim('s.lease', 2, '1 hour', '200 milliseconds') IS NULL}), 't',
	'a waiting one times out');
query("SELECT sem_renew($a1, '2 hours')");
query("SELECT pg_sleep(0.05)");
query("SELECT sem_release($a1)");
is(counts('s.lease'),
	expect('s.lease', granted => 2, refused => 1, timed_out => 1, released => 1, renewed => 1,
		permits_granted => 2),
	'leases: 2 granted, 1 refused, 1 timed out, 1 released, 1 renewed');
is(query(q{SELECT wait_seconds >= 0.2 AND wait_max_seconds >= 0.2 AND wait_seconds < 5
             AND held_seconds >= 0.05 AND leases = 1 AND permits_in_use = 1
             FROM sem_stats WHERE name = 's.lease'}), 't',
	'the timed-out wait and the held time are counted; one lease holds one slot now');

# ---- a rolled-back lease, also in a savepoint, is never counted ------------------------------
query(q{BEGIN; SELECT sem_claim('s.rollback', 3); ROLLBACK;});
query(q{BEGIN; SAVEPOINT p; SELECT sem_claim('s.rollback', 3); ROLLBACK TO p;
        SELECT sem_claim('s.rollback', 3, permits => 2); COMMIT;});
is(counts('s.rollback'), expect('s.rollback', granted => 1, permits_granted => 2),
	'only the committed lease (2 permits) counts; rolled-back ones do not');

# ---- granted after a wait; waits ended by a cancel and by a terminate ----------------------
my $holder = query(q{SELECT sem_claim('s.wait', 1, '1 hour')});
my ($w1, $p1) = session($node);
start($w1, q{SELECT sem_claim('s.wait', 1, '1 hour', '1 minute') IS NOT NULL AS got});
poll(q{SELECT count(*) = 1 FROM sem_stats WHERE name = 's.wait' AND waiters = 1
         AND oldest_wait > '0'}, 'sem_stats shows the waiter and its wait');
query("SELECT pg_sleep(0.1)");
query("SELECT sem_release($holder)");
like(finish($w1), qr/^t\n1$/, 'the waiter is granted the released slot');
my ($w2, $p2) = session($node);
start($w2, q{SELECT sem_claim('s.wait', 1, '1 hour', '1 minute')});
poll(q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 's.wait'}, 'a second waiter waits');
query("SELECT pg_cancel_backend($p2)");
poll(q{SELECT count(*) = 0 FROM sem_waiters WHERE name = 's.wait'}, 'its wait is cancelled');
my ($w3, $p3) = session($node);
start($w3, q{SELECT sem_claim('s.wait', 1, '1 hour', '1 minute')});
poll(q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 's.wait'}, 'a third waiter waits');
query("SELECT pg_terminate_backend($p3)");
poll("SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $p3", 'it is terminated');
is(counts('s.wait'),
	expect('s.wait', granted => 1, granted_after_wait => 1, wait_errors => 2, released => 1,
		permits_granted => 2),
	'a grant after a wait, and two waits ended by an error (cancel, terminate)');
is(query(q{SELECT wait_max_seconds >= 0.1 FROM sem_stats WHERE name = 's.wait'}), 't',
	'the granted wait lasted at least the holder\'s 100 ms');
$w1->quit;
eval { $w2->quit };
eval { $w3->quit };

# ---- a lease that runs out and is reclaimed by the next claimer ------------------------------
query(q{SELECT sem_claim('s.expire', 1, '100 milliseconds', permits => 1)});
query("SELECT pg_sleep(0.15)");
query(q{SELECT sem_claim('s.expire', 1, '1 hour')});
is(counts('s.expire'), expect('s.expire', granted => 2, expired_permits => 1,
		permits_granted => 2), 'the expired lease is counted as reclaimed');

# ---- transaction and session claims: counted at once, ended with their held time -----------
query(q{BEGIN; SELECT sem_claim_xact('s.xact', 2, permits => 2); SELECT pg_sleep(0.05); COMMIT;});
query(q{BEGIN; SELECT sem_claim_xact('s.xact', 2); ROLLBACK;});
is(counts('s.xact'), expect('s.xact', granted => 2, released => 2, permits_granted => 3),
	'transaction claims count as granted and released however their transaction ends');
query(q{SELECT sem_claim_session('s.session', 2) AS slot \gset
        SELECT sem_release_session('s.session', :slot)});
is(counts('s.session'), expect('s.session', granted => 1, released => 1, permits_granted => 1),
	'a session claim and its release');

# ---- a set counts once on each name; rate and bucket grants ---------------------------------
query(q{SELECT sem_claim_all(ARRAY['s.set1', 's.set2'], ARRAY[1, 1])});
is(query(q{SELECT sem_claim_all(ARRAY['s.set1', 's.set2'], ARRAY[1, 1]) IS NULL}), 't',
	'a second set is refused');
is(counts('s.set1') . ' | ' . counts('s.set2'),
	expect('', granted => 1, refused => 1, permits_granted => 1) . ' | '
	  . expect('', granted => 1, refused => 1, permits_granted => 1),
	'the set counts on each of its names');
query(q{SELECT sem_rate('s.rate', 3, '1 hour', permits => 2)});
query(q{SELECT sem_rate('s.rate', 3, '1 hour', permits => 2)});
query(q{SELECT sem_bucket('s.bucket', 1, '1 hour')});
query(q{SELECT sem_bucket('s.bucket', 1, '1 hour')});
is(counts('s.rate') . ' | ' . counts('s.bucket'),
	expect('', granted => 1, refused => 1, permits_granted => 2) . ' | '
	  . expect('', granted => 1, refused => 1, permits_granted => 1),
	'rate and bucket grants and refusals');

# ---- more names than pgsem.stats_max_names: the least recently active are folded -----------
# 10 names have rows so far, as many as fit. A new name folds the least recently active one, at
# most ten a second: a second new name within 100 ms counts in the other row.
query(q{SELECT sem_claim('s.extra1', 1, '1 hour'), sem_claim('s.extra2', 1, '1 hour')});
my $names = query(q{SELECT count(*) FROM sem_stats WHERE NOT other AND granted IS NOT NULL});
is($names, '10', 'ten names keep rows of their own');
is(query(q{SELECT names_folded FROM sem_stats WHERE other}), '1',
	'the least recently active is folded into the other row');
is(query(q{SELECT string_agg(name, ',' ORDER BY name) FROM sem_stats
            WHERE name IN ('s.lease', 's.rollback', 's.extra1', 's.extra2')
              AND granted IS NOT NULL}), 's.extra1,s.rollback',
	'which was the first name; the second new name has no row of its own');
is(query(q{SELECT granted FROM sem_stats WHERE other}), '3',
	'the other row holds the folded name\'s grants (2) and the second new name\'s (1)');
query(q{SELECT pg_sleep(0.15)});
query(q{SELECT sem_claim('s.extra3', 1, '1 hour')});
is(query(q{SELECT names_folded FROM sem_stats WHERE other}), '2',
	'150 ms later a new name folds the next least recently active');
is(query(q{SELECT count(*) FROM sem_stats WHERE name = 's.rollback' AND granted IS NOT NULL}),
	'0', 'which was the second name');

# ---- sem_stats_reset: by name, for all; not for PUBLIC ----------------------------------------
is(query(q{SELECT sem_stats_reset('s.bucket')}), '1', 'a name is reset');
is(query(q{SELECT count(*) FROM sem_stats WHERE name = 's.bucket'}), '0', 'its row is gone');
my ($rc, $out, $err) = $node->psql('postgres', q{
	CREATE ROLE stats_reader LOGIN;
	SET ROLE stats_reader;
	SELECT sem_stats_reset();});
like($err, qr/permission denied for function sem_stats_reset/,
	'an ordinary role may not reset the counters');
($rc, $out, $err) = $node->psql('postgres', q{SELECT sem_stats_reset('')});
like($err, qr/must not be empty|empty/, 'an empty name is an error, not a name never counted');
query(q{GRANT EXECUTE ON FUNCTION sem_stats_reset(text) TO stats_reader});
is($node->safe_psql('postgres', q{SET ROLE stats_reader; SELECT sem_stats_reset() > 0}), 't',
	'a role it is granted to may');
is(query(q{SELECT count(*) FROM sem_stats WHERE granted IS NOT NULL}), '0',
	'every counter is gone');
is(query(q{SELECT count(*) FROM sem_stats WHERE name = 's.lease' AND leases = 1}), '1',
	'holders still show');

# ---- each database counts its own names ----------------------------------------------------
query(q{CREATE DATABASE stats_other});
$node->safe_psql('stats_other',
	q{CREATE EXTENSION pgsem; SELECT sem_claim('s.lease', 5), sem_claim('s.lease', 5)});
is($node->safe_psql('stats_other', q{SELECT granted FROM sem_stats WHERE name = 's.lease'}),
	'2', 'another database counts its own s.lease');
is(query(q{SELECT granted IS NULL FROM sem_stats WHERE name = 's.lease'}), 't',
	'which this database does not see');

# ---- exact under concurrency: 16 clients against what their statements logged -------------
# Each call logs its answer in the statement that makes it (the log row commits with the claim, or
# neither does): a lease granted, a NULL, a release that returned true. A third of the calls wait
# up to 1 ms in line (many time out), a third up to 20 ms. The counters must hold exactly the logged numbers.
query(q{SELECT sem_stats_reset();
        CREATE TABLE stats_log (what text NOT NULL, waited boolean NOT NULL, id bigint);
        GRANT ALL ON stats_log TO PUBLIC});
$node->pgbench(
	'--no-vacuum --client=16 --jobs=2 --time=3',
	0,
	[qr/processed: \d+/],
	[qr/^$/],
	'16 clients claim, wait and release for 3 seconds',
	{
		'023_stats_load' => q{
\set w random(0, 2)
WITH c AS (SELECT sem_claim('s.load', 3, '1 hour',
                            make_interval(secs => (CASE :w WHEN 2 THEN 20 ELSE :w END) / 1000.0))
           AS id)
INSERT INTO stats_log (what, waited, id)
SELECT CASE WHEN id IS NULL THEN 'null' ELSE 'granted' END, :w > 0, id FROM c
RETURNING coalesce(id, 0) AS id \gset
\if :id > 0
WITH r AS (SELECT sem_release(:id) AS done)
INSERT INTO stats_log (what, waited) SELECT 'released', false FROM r WHERE done;
\endif
}
	});
my $logged = query(q{SELECT count(*) FILTER (WHERE what = 'granted') || ' '
                          || count(*) FILTER (WHERE what = 'null' AND NOT waited) || ' '
                          || count(*) FILTER (WHERE what = 'null' AND waited) || ' '
                          || count(*) FILTER (WHERE what = 'released') FROM stats_log});
my $counted = query(q{SELECT (granted + granted_after_wait) || ' ' || refused || ' '
                           || timed_out || ' ' || released
                      FROM sem_stats WHERE name = 's.load'});
is($counted, $logged,
	"the counters hold what 16 clients' statements logged (granted, refused, timed out, released: $logged)");
my ($granted, $refused, $timed_out, $released) = split / /, $logged;
cmp_ok($refused * $timed_out * $released, '>', 0, 'with refusals, timeouts and releases among them');

# ---- time paused: as far as a pause has run, up to its lifting, none for a rolled-back one ---
query(q{SELECT sem_pause('s.pause', clock_timestamp() + interval '200 milliseconds')});
query("SELECT pg_sleep(0.3)");
my $paused = query(q{SELECT paused_seconds FROM sem_stats WHERE name = 's.pause'});
ok($paused >= 0.19 && $paused < 0.25, "a pause of 200 ms counts 200 ms once it has run ($paused)");
query(q{SELECT sem_pause('s.pause', clock_timestamp() + interval '1 hour')});
query("SELECT pg_sleep(0.1)");
query(q{SELECT sem_pause('s.pause', NULL)});
query("SELECT pg_sleep(0.1)");
$paused = query(q{SELECT paused_seconds FROM sem_stats WHERE name = 's.pause'});
ok($paused >= 0.29 && $paused < 0.45, "a pause lifted after 100 ms adds 100 ms ($paused)");
query(q{BEGIN; SELECT sem_pause('s.pause', clock_timestamp() + interval '1 hour'); ROLLBACK});
query("SELECT pg_sleep(0.1)");
is(query(q{SELECT paused_seconds FROM sem_stats WHERE name = 's.pause'}), $paused,
	'a rolled-back pause counts nothing');

# ---- a reset keeps a pause in force; claims past the registry's 16 make no second other row --
query(q{SELECT sem_pause('s.pz', clock_timestamp() + interval '1 hour')});
query(q{SELECT sem_stats_reset('s.pz')});
query("SELECT pg_sleep(0.2)");
$paused = query(q{SELECT paused_seconds FROM sem_stats WHERE name = 's.pz'});
ok($paused >= 0.19 && $paused < 1, "after a reset the pause in force still counts ($paused)");
query(q{SELECT sem_pause('s.pz', NULL)});
is( query(q{BEGIN;
            SELECT count(sem_claim_xact('s.many' || g, 1)) FROM generate_series(1, 18) g;
            SELECT count(*) FILTER (WHERE name IS NULL AND NOT other) || ' '
                   || (count(*) FILTER (WHERE other) <= 1)
              FROM sem_stats;
            COMMIT;}),
	"18\n0 true",
	'a session\'s claims past the 16 the registry names make no row of their own');

# ---- without the preload: a notice, and holders and waiters as before -----------------------
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->restart;
($rc, $out, $err) = $node->psql('postgres',
	q{SELECT name, leases, granted IS NULL FROM sem_stats WHERE name = 's.lease'});
is($out, 's.lease|1|t', 'not preloaded: the holders show, the counters are NULL');
like($err, qr/sem_stats counts nothing on this server/, 'and a notice says why');
unlike($err, qr/invalid configuration parameter/,
	'pgsem.stats_max_names, still in postgresql.conf, draws no warning');

$node->stop;
done_testing();
