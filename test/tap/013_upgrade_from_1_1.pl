# The update from 1.1 to the current version with the semaphores in use: a committed lease, a
# lease of a transaction still open, a fenced lease, a transaction claim and a session claim, and
# waiters in line of every kind. ALTER EXTENSION pgsem UPDATE runs beside them (waiting, as an
# ALTER TABLE does, for the transactions that wrote or locked claim rows); every claim stays held
# and releasable, every waiter is served in turn, and the new behaviour is there.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $node = PostgreSQL::Test::Cluster->new('upgrade11');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', q{CREATE EXTENSION pgsem VERSION '1.1'});

sub query { return $node->safe_psql('postgres', shift) }

# ---- claims of every kind, and waiters ---------------------------------------------------------
my $committed = query(q{SELECT sem_claim('live', 5, '1 hour')});
my ($open) = session($node);
my $uncommitted = $open->query_safe(q{BEGIN; SELECT sem_claim('live', 5, '1 hour')});
my $fenced = query(q{SELECT sem_claim('live', 5, '1 hour')});
my ($fencer) = session($node);
$fencer->query_safe("BEGIN; SELECT sem_fence($fenced)");
my ($xact) = session($node);
is($xact->query_safe(q{BEGIN; SELECT sem_claim_xact('live', 5)}), '3', 'a transaction claim');
my ($sess) = session($node);
is($sess->query_safe(q{SELECT sem_claim_session('live', 5)}), '4', 'a session claim: 5 of 5 held');

my @waiters;
for my $kind ('sem_claim(%s, 5, \'1 hour\', \'1 minute\') IS NOT NULL',
	'sem_claim_session(%s, 5, \'1 minute\') IS NOT NULL',
	'sem_claim_xact(%s, 5, \'1 minute\') IS NOT NULL')
{
	my ($w, $pid) = session($node);
	start($w, 'SELECT ' . sprintf($kind, q{'live'}) . ' AS got');
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM sem_waiters WHERE pid = $pid"),
		'a waiter in line (' . (split /\(/, $kind)[0] . ')');
	push @waiters, [ $w, $pid ];
}

# ---- the update -------------------------------------------------------------------------------
# 1.2 adds a column to pgsem.claims and rebuilds its primary key (claims of several permits): the
# update needs the table to itself, so it waits for the transactions that wrote or locked claim
# rows (the open lease, the fence), as any ALTER TABLE would. Transaction and session claims and
# waiters hold no lock on the table between their looks: they do not hold it up.
my ($updater, $updater_pid) = session($node);
start($updater, 'ALTER EXTENSION pgsem UPDATE');
ok( $node->poll_query_until(
		'postgres',
		"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $updater_pid"),
	'the update waits for the transactions that wrote or locked claim rows');
$open->query_safe('COMMIT');
$fencer->query_safe('COMMIT');
like(finish($updater), qr/^1$/, 'once they end, it goes through');
is(query(q{SELECT extversion FROM pg_extension WHERE extname = 'pgsem'}),
	query(q{SELECT default_version FROM pg_available_extensions WHERE name = 'pgsem'}),
	'the update went through beside claims of every kind and waiters');
is(query(q{SELECT string_agg(kind, ',' ORDER BY slot) FROM sem_holders WHERE name = 'live'}),
	'lease,lease,lease,transaction,session', 'every claim is held after the update');
is(query(q{SELECT string_agg(pid::text, ',' ORDER BY position) FROM sem_waiters WHERE name = 'live'}),
	join(',', map { $_->[1] } @waiters), 'the waiters are still in line, in order');

# ---- hand-offs, in line order -----------------------------------------------------------------
is(query("SELECT sem_release($committed)"), 't', 'a 1.1 lease is released after the update');
like(finish($waiters[0][0]), qr/^t\n1$/, 'and its slot goes to the first waiter');
is(query("SELECT sem_release($uncommitted)"), 't',
	'the lease whose transaction was open during the wait is released');
like(finish($waiters[1][0]), qr/^t\n1$/, 'its slot goes to the second waiter');
$xact->query_safe('COMMIT');
like(finish($waiters[2][0]), qr/^t\n1$/, 'a transaction claim ended: the third');
is(query("SELECT sem_release($fenced)"), 't', 'the lease that was fenced is released');
is($sess->query_safe(q{SELECT sem_release_session('live', 4)}), 't', 'the session claim too');
is(query(q{SELECT sem_claim('after', 3, '1 hour', permits => 3) IS NOT NULL}), 't',
	'a claim of several permits works on the updated objects');

# ---- what 1.2 changed -------------------------------------------------------------------------
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT sem_prune_history(NULL)');
like($err, qr/max_rows must not be null/, 'sem_prune_history(NULL) is an error after the update');

$_->[0]->quit for @waiters;
$_->quit for ($open, $fencer, $xact, $sess, $updater);
$node->stop;
done_testing();
