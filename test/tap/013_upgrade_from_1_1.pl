# The update from 1.1 to the current version with the semaphores in use: a committed lease, a
# lease of a transaction still open, a fenced lease, a transaction claim and a session claim, and
# waiters in line of every kind. ALTER EXTENSION pgsem UPDATE runs beside them; every claim stays
# held and releasable, every waiter is served in turn, and the new behaviour is there.
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
query('ALTER EXTENSION pgsem UPDATE');
is(query(q{SELECT extversion FROM pg_extension WHERE extname = 'pgsem'}),
	query(q{SELECT default_version FROM pg_available_extensions WHERE name = 'pgsem'}),
	'the update went through beside open transactions, claims and waiters');
is(query(q{SELECT string_agg(kind, ',' ORDER BY slot) FROM sem_holders WHERE name = 'live'}),
	'lease,lease,lease,transaction,session', 'every claim is held after the update');
is(query(q{SELECT string_agg(pid::text, ',' ORDER BY position) FROM sem_waiters WHERE name = 'live'}),
	join(',', map { $_->[1] } @waiters), 'the waiters are still in line, in order');

# ---- hand-offs, in line order -----------------------------------------------------------------
is(query("SELECT sem_release($committed)"), 't', 'a 1.1 lease is released after the update');
like(finish($waiters[0][0]), qr/^t\n1$/, 'and its slot goes to the first waiter');
$open->query_safe('ROLLBACK');
like(finish($waiters[1][0]), qr/^t\n1$/,
	'an open transaction\'s lease rolled back: its slot goes to the second waiter');
$xact->query_safe('COMMIT');
like(finish($waiters[2][0]), qr/^t\n1$/, 'a transaction claim ended: the third');
$fencer->query_safe('COMMIT');
is(query("SELECT sem_release($fenced)"), 't', 'the fenced lease is released once the fence ends');
is($sess->query_safe(q{SELECT sem_release_session('live', 4)}), 't', 'the session claim too');

# ---- what 1.2 changed -------------------------------------------------------------------------
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT sem_prune_history(NULL)');
like($err, qr/max_rows must not be null/, 'sem_prune_history(NULL) is an error after the update');

$_->[0]->quit for @waiters;
$_->quit for ($open, $fencer, $xact, $sess);
$node->stop;
done_testing();
