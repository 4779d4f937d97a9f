# A token bucket under concurrency, at the serializable isolation level: 16 clients ask a bucket
# of 20 permits per second with a burst of 5 for 1 to 3 permits at a time, one in four waiting in
# line up to 150 ms, the others not waiting, for 5 seconds. Each grant is logged by its client in
# the same statement. The bucket may grant at most burst + elapsed / interval permits over the run, and no
# more than that in any second; the run must also reach most of it, so the check is not vacuous.
# With the bucket's mutex gone: 111 permits where 107 were allowed. No call may fail with a
# serialization failure.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $node = PostgreSQL::Test::Cluster->new('bucket_concurrency');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "max_connections = 40\n");
$node->start;
$node->safe_psql('postgres', q{
    CREATE EXTENSION pgsem;
    CREATE TABLE grants (at timestamptz NOT NULL DEFAULT clock_timestamp(), permits integer);
    ALTER DATABASE postgres SET default_transaction_isolation = 'serializable';
});

sub query { return $node->safe_psql('postgres', shift) }

my $seconds = 5;
my $started = query('SELECT clock_timestamp()');
# One statement: sem_bucket refuses a transaction block, and the log row commits with the grant.
$node->pgbench(
	"--no-vacuum --client=16 --jobs=2 --time=$seconds",
	0,
	# Grants read and write the bucket's row with no snapshot, so no SSI predicate lock: a hot name
	# makes no serialization failure (with SPI reads, 3 of 4 calls failed with 40001).
	[qr/processed: \d+/, qr/number of failed transactions: 0 \(/],
	[qr/^$/],
	'16 serializable clients call sem_bucket for 5 seconds',
	{
		'020_bucket_wait' => q{
\set p random(1, 3)
INSERT INTO grants (permits) SELECT :p WHERE sem_bucket('tap-bucket', 20, '1 second', permits => :p, wait => '150 milliseconds', burst => 5);
},
		# Three of four calls do not wait: they look at once, side by side, when nobody waits.
		map {
			("020_bucket_nowait_$_" => q{
\set p random(1, 2)
INSERT INTO grants (permits) SELECT :p WHERE sem_bucket('tap-bucket', 20, '1 second', permits => :p, burst => 5);
})
		} 1 .. 3
	});

my ($permits, $span) = split /\|/,
  query(qq{SELECT sum(permits), extract(epoch FROM max(at) - '$started'::timestamptz) FROM grants});
# 5 at once, then one every 50 ms; one more for the rounding of the log's clock.
my $allowed = 5 + int($span * 20) + 1;
cmp_ok($permits, '<=', $allowed,
	"no more than burst + rate x time over the run ($permits permits in $span s, $allowed allowed)");
cmp_ok($permits, '>=', int(0.8 * 20 * $seconds),
	"most of what the bucket allows was granted ($permits permits)");
# A grant is logged a little after it was made: a second of log holds what up to a second and a
# few milliseconds of grants held (one interval of slack).
is( query(q{SELECT max(c) <= 5 + 20 + 1 FROM (
                SELECT sum(permits) OVER (ORDER BY at RANGE BETWEEN CURRENT ROW
                                          AND interval '999999 microseconds' FOLLOWING) AS c
                  FROM grants) w}),
	't', 'no second of the log holds more than the burst and a second of the rate');
# Each grant inserts a row and removes the settled ones it read; the rows of grants in flight at
# the last grant stay: at most one per client, and one more.
is(query(q{SELECT count(DISTINCT name) = 1 AND count(*) <= 17 FROM pgsem.buckets}), 't',
	'a few rows hold the bucket');

# A hot name at the serializable level: 8 clients, 1,000 permits a second, for 3 seconds, most
# calls granted. Reading the row through SPI (an MVCC snapshot) failed 1 call in 10 with 40001.
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --time=3',
	0,
	[qr/processed: \d+/, qr/number of failed transactions: 0 \(/],
	[qr/^$/],
	'8 serializable clients on a hot bucket: no serialization failure',
	{ '020_bucket_hot' => q{SELECT sem_bucket('tap-hot', 1000, '1 second', burst => 50);} });

# A grant holds the name's mutex for its read and write alone: a statement that goes on after its
# grant (uncommitted, in flight) holds nobody back, and its grant counts for the next callers all
# the same (they read the rows of grants in flight). 2 per hour, burst 2: the holder's grant, in
# flight for 3 s, and one more; the third is refused -- each answered at once.
my ($holder) = session($node);
# Starts `statement` in the holder's session, once it sleeps (its grant made, in flight).
sub start_holding {
	start($holder, shift);
	$node->poll_query_until('postgres', q{
	    SELECT count(*) = 1 FROM pg_stat_activity
	     WHERE wait_event = 'PgSleep' AND pid <> pg_backend_pid()})
	  or die 'the holder did not reach its sleep';
}
start_holding(q{SELECT sem_bucket('tap-held', 2, '1 hour'), pg_sleep(3)});
is( query(q{SELECT sem_bucket('tap-held', 2, '1 hour'),
                   clock_timestamp() - now() < interval '1 second'}),
	't|t', 'a grant in flight holds the next caller back for no time');
is( query(q{SELECT sem_bucket('tap-held', 2, '1 hour'),
                   clock_timestamp() - now() < interval '1 second'}),
	'f|t', 'and counts: the third call is refused at once');
like(finish($holder), qr/^t\|/, 'the holder was granted');
is(query(q{SELECT available FROM sem_buckets WHERE name = 'tap-held'}), '0', 'two granted, none left');

# A declaration of a rate limit waits for the rate grants in flight (a database-wide lock they
# hold in share mode until they commit), a short turn at a time in the lock's queue, where every
# new rate grant queues behind it: a grant's statement that goes on after its grant for 6 s makes
# the declaration give up after 2 s (55P03), and the fail-fast grants made meanwhile are answered
# at once, not held until the statement ends.
my ($declarer) = session($node);
start_holding(q{SELECT sem_rate('tap-long', 1, '1 hour'), pg_sleep(6)});
my $declared_at = time;
my $decl_offset = -s $node->logfile;
start($declarer, q{SELECT sem_declare_bucket('tap-new', 10, '1 minute')});
$node->poll_query_until('postgres', q{
    SELECT count(*) > 0 FROM pg_stat_activity
     WHERE query LIKE 'SELECT sem_declare_bucket%' AND state = 'active'})
  or die 'the declaration did not start';
my $answered = '';
for my $i (1 .. 5) {
	$answered .= query(qq{SELECT sem_bucket('tap-other-$i', 100, '1 second')::text
	                             || (clock_timestamp() - now() < interval '500 milliseconds')::text});
	select(undef, undef, undef, 0.2);
}
is($answered, 'truetrue' x 5, 'five fail-fast grants meanwhile, each granted within 500 ms');
finish($declarer);
like(substr(slurp_file($node->logfile), $decl_offset), qr/rate grants in flight held "tap-new" back/,
	'the declaration gave up with 55P03');
cmp_ok(time - $declared_at, '<', 5, 'after its 2 s, not the holder\'s 6');
finish($holder);

# A grant that makes a new row removes idle rows (full for an hour) just after it in name order,
# each under its mutex -- as its transaction commits, not during its statement: a statement that
# goes on after its grant holds no idle name's mutex meanwhile, and a grant there goes through.
my $idle_row = q{INSERT INTO pgsem.buckets VALUES ('%s', now() - interval '2 hours', 1,
                 '1 second', 1, now() - interval '2 hours')};
query(sprintf($idle_row, 'tap-prune-b'));
start_holding(q{SELECT sem_bucket('tap-prune-a', 100, '1 second'), pg_sleep(3)});
is( query(q{SELECT sem_bucket('tap-prune-b', 100, '1 second'),
                   clock_timestamp() - now() < interval '1 second'}),
	't|t', 'an idle name next to a new row is granted while the new row\'s statement goes on');
finish($holder);
is(query(q{SELECT count(*) FROM pgsem.buckets WHERE name LIKE 'tap-prune-_'}), '2',
	'both rows stay: the idle one was granted before the commit pruned');
query(sprintf($idle_row, 'tap-prune-d'));
is(query(q{SELECT sem_bucket('tap-prune-c', 100, '1 second')}), 't', 'a new row');
is(query(q{SELECT string_agg(name, ',' ORDER BY name) FROM pgsem.buckets WHERE name LIKE 'tap-prune-_'}),
	'tap-prune-a,tap-prune-b,tap-prune-c', 'its commit removed the idle row after it');

# A revoke while a role's call waits in a declared bucket's line refuses it at its next look (the
# change wakes it), as it refuses a semaphore waiter: 42501, long before its wait is over.
query(q{CREATE ROLE tap_bucket_user});
query(q{SELECT sem_declare('tap-decl', 1)});
query(q{SELECT sem_grant('tap-decl', 'tap_bucket_user')});
is(query(q{SELECT sem_bucket('tap-decl', 1, '20 seconds')}), 't', 'the declared bucket is drained');
my ($waiter, $waiter_pid) = session($node);
$waiter->query_safe('SET ROLE tap_bucket_user');
my $log_offset = -s $node->logfile;
start($waiter, q{SELECT sem_bucket('tap-decl', 1, '20 seconds', wait => '15 seconds')});
$node->poll_query_until('postgres',
	qq{SELECT count(*) = 1 FROM sem_waiters WHERE pid = $waiter_pid AND kind = 'bucket'})
  or die 'the role did not wait in line';
my $revoked = time;
query(q{SELECT sem_revoke('tap-decl', 'tap_bucket_user')});
is(finish($waiter), '1', 'the waiter got no answer: its call failed');
cmp_ok(time - $revoked, '<', 10, 'it failed long before its 15 s wait was over');
like(substr(slurp_file($node->logfile), $log_offset),
	qr/permission denied to claim semaphore "tap-decl"/, 'with 42501, the revoke');
$waiter->quit;

$node->stop;
done_testing();
