# A sliding window under concurrency: 16 clients ask a rate limit of 6 permits per 200 ms for 1 to
# 3 permits at a time, most waiting in line up to 150 ms, some not waiting, for 5 seconds. The
# checker reads every grant from sem_history: in no window [t, t + 200 ms) were more than 6
# permits granted, every grant holds all of its permits or none, and the limit was reached (the
# run granted most of what the window allows and refused or timed out many calls), so the check
# is not vacuous.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('rate_concurrency');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "max_connections = 40\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

my $seconds = 5;
$node->pgbench(
	"--no-vacuum --client=16 --jobs=2 --time=$seconds",
	0,
	[qr/processed: \d+/],
	[qr/^$/],
	'16 clients call sem_rate for 5 seconds',
	{
		'019_rate_wait' => q{
\set p random(1, 3)
SELECT sem_rate('tap-rate', 6, '200 milliseconds', permits => :p, wait => '150 milliseconds');
},
		'019_rate_nowait' => q{
\set p random(1, 2)
SELECT sem_rate('tap-rate', 6, '200 milliseconds', permits => :p);
}
	});

# Each row of sem_history is one permit of a grant (one id).
is( query(q{SELECT max(c) FROM (
                SELECT count(*) OVER (ORDER BY claimed_at RANGE BETWEEN CURRENT ROW
                                        AND interval '199999 microseconds' FOLLOWING) AS c
                  FROM sem_history WHERE name = 'tap-rate') w}),
	'6', 'no window of 200 ms holds more than 6 permits, and some hold all 6');
is( query(q{SELECT count(*) FROM (
                SELECT id FROM sem_history WHERE name = 'tap-rate'
                 GROUP BY id HAVING count(*) <> min(permits) OR count(DISTINCT claimed_at) <> 1) b}),
	'0', 'every grant holds all of its permits, granted at one instant');
my $permits = query(q{SELECT count(*) FROM sem_history WHERE name = 'tap-rate'});
# 6 per 200 ms for 5 s allows 150; clients of 1-3 permits leave some of each window unused.
cmp_ok($permits, '>=', 90, "most of what the limit allows was granted ($permits of 150 permits)");
cmp_ok($permits, '<=', 6 * (int($seconds * 5) + 2), 'and no more than it allows');

$node->stop;
done_testing();
