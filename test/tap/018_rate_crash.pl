# Rate limits keep their grants across a crash: a limiter that forgot its grants would let a full
# window's worth more through right after a restart. Grants committed before an immediate stop
# still count after it (also from a session that asked for synchronous_commit = off, which a
# grant overrides as a lease claim does), and a waiter's window still ends where it did. A pause
# (sem_pause) is a table row and survives too. So does a token bucket's TAT (sem_bucket): its
# last grant before the crash comes from a session with synchronous_commit = off, right before
# the immediate stop.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('rate_crash');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

# ---- before the crash ------------------------------------------------------------------------
# Three of five permits of an hour-long window, one at a time, the last one from a session that
# turned synchronous commit off; then two more in one weighted grant.
is(query(q{SELECT sem_rate('crash-rate', 5, '1 hour')}), 't', 'a first grant');
is(query(q{SELECT sem_rate('crash-rate', 5, '1 hour')}), 't', 'a second grant');
is( query(q{SET synchronous_commit = off; SELECT sem_rate('crash-rate', 5, '1 hour');}),
	't', 'a third grant, with synchronous_commit = off');
is(query(q{SELECT sem_rate('crash-rate', 5, '1 hour', permits => 2)}),
	't', 'a grant of two permits fills the window');
is(query(q{SELECT sem_rate('crash-rate', 5, '1 hour')}), 'f', 'the window is full');
# A short window, full, whose edge is a second away.
is(query(q{SELECT sem_rate('crash-short', 1, '3 seconds')}), 't', 'a short window, granted');
my $short_edge = query(q{SELECT expires_at FROM sem_holders WHERE name = 'crash-short'});
is(query(q{SELECT sem_pause('crash-paused', now() + '1 hour') IS NOT NULL}),
	't', 'a name paused for an hour');
is(query(q{SELECT sem_bucket('crash-bucket', 3, '1 hour', permits => 2)}),
	't', 'two of a bucket\'s three tokens');
is( query(q{SET synchronous_commit = off; SELECT sem_bucket('crash-bucket', 3, '1 hour');}),
	't', 'its last token, with synchronous_commit = off');
my $log_offset = -s $node->logfile;

# ---- crash -----------------------------------------------------------------------------------
$node->stop('immediate');
$node->start;
ok( $node->log_contains(qr/database system was not properly shut down; automatic recovery/,
		$log_offset),
	'the restart ran crash recovery');

# ---- after the crash -------------------------------------------------------------------------
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'crash-rate'}),
	'5', 'the five permits granted before the crash are all still held');
is(query(q{SELECT sem_rate('crash-rate', 5, '1 hour')}),
	'f', 'so the window is still full after the restart');
is(query(q{SELECT sem_rate('crash-short', 1, '3 seconds')}),
	'f', 'the short window is still full right after the restart');
is( query(q{SELECT sem_rate('crash-short', 1, '3 seconds', wait => '10 seconds')}),
	't', 'a caller that waits is granted at its edge');
is( query(
		qq{SELECT min(claimed_at) >= '$short_edge' FROM sem_history
            WHERE name = 'crash-short' AND status = 'held'}),
	't', 'not before the edge the window had before the crash');
is(query(q{SELECT count(*) FROM sem_pauses WHERE name = 'crash-paused'}),
	'1', 'the pause is still in force');
is(query(q{SELECT sem_claim('crash-paused', 1) IS NULL}), 't', 'and still holds callers back');
is(query(q{SELECT sem_bucket('crash-bucket', 3, '1 hour')}),
	'f', 'the bucket is still empty after the restart');
is(query(q{SELECT available FROM sem_buckets WHERE name = 'crash-bucket'}),
	'0', 'and the view says so');

$node->stop;
done_testing();
