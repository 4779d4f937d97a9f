# A token bucket under concurrency, at the serializable isolation level: 16 clients ask a bucket
# of 20 permits per second with a burst of 5 for 1 to 3 permits at a time, one in four waiting in
# line up to 150 ms, the others not waiting, for 5 seconds. Each grant is logged by its client in
# the same statement. The bucket may grant at most burst + elapsed / interval permits over the run, and no
# more than that in any second; the run must also reach most of it, so the check is not vacuous.
# With the bucket's mutex gone: 111 permits where 107 were allowed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

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
	[qr/processed: \d+/],
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
is(query(q{SELECT count(*) FROM pgsem.buckets}), '1', 'one row holds the bucket');

$node->stop;
done_testing();
