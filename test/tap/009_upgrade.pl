# An upgrade from 1.0 the way it happens in production: the new library is installed while
# sessions run on 1.0, holding leases (committed, uncommitted, fenced) and prepared statements;
# ALTER EXTENSION pgsem UPDATE runs beside them (waiting for open transactions that claimed or
# fenced);
# the server restarts later. Every claim taken
# under 1.0 stays held and releasable throughout, the open sessions carry on, and the 1.1
# functions (waits, transaction and session claims) work on semaphores whose slots are held by
# 1.0 leases.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', q{CREATE EXTENSION pgsem VERSION '1.0'});
$node->safe_psql('postgres', 'CREATE TABLE guarded (claim bigint, note text)');

sub query { return $node->safe_psql('postgres', shift) }

is(query(q{SELECT extversion FROM pg_extension WHERE extname = 'pgsem'}), '1.0', 'installed 1.0');

# ---- sessions on 1.0 ---------------------------------------------------------------------------
my $committed = query(q{SELECT sem_claim('up', 3, '1 hour')});
like($committed, qr/^\d+$/, 'a committed 1.0 lease');

my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
my $uncommitted = $open->query_safe(q{SELECT sem_claim('up', 3, '1 hour')});
like($uncommitted, qr/^\d+$/, 'a 1.0 lease in a transaction still open');

my $fencer = $node->background_psql('postgres');
$fencer->query_safe('BEGIN');
$fencer->query_safe("SELECT sem_fence($committed)");
$fencer->query_safe("INSERT INTO guarded VALUES ($committed, 'fenced')");

my $prepared = $node->background_psql('postgres');
$prepared->query_safe(q{PREPARE take(text, integer, interval) AS SELECT sem_claim($1, $2, $3)});
my $third = $prepared->query_safe(q{EXECUTE take('up', 3, '1 hour')});
like($third, qr/^\d+$/, 'a 1.0 lease through a prepared statement');

# ---- the update, beside them -------------------------------------------------------------------
# The update adds a trigger to pgsem.claims, which waits for open transactions that claimed,
# released or fenced, and new claims queue behind the update while it waits: run it with a
# lock_timeout.
my ($rc, $out, $err) = $node->psql('postgres',
	"SET lock_timeout = '300ms';\nALTER EXTENSION pgsem UPDATE TO '1.1';");
like($err, qr/lock timeout/, 'with a 1.0 claim uncommitted, the update waits; lock_timeout ends it');
is(query(q{SELECT extversion FROM pg_extension WHERE extname = 'pgsem'}), '1.0',
	'and nothing changed');
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'up'}), '2',
	'every committed claim still held (1.0 views show committed claims only)');

my $updater = $node->background_psql('postgres');
my $updater_pid = $updater->query_safe('SELECT pg_backend_pid()');
$updater->query_until(qr/started/, "\\echo started\nALTER EXTENSION pgsem UPDATE TO '1.1';\n");
ok( $node->poll_query_until(
		'postgres', qq{SELECT count(*) > 0 FROM pg_locks WHERE pid = $updater_pid AND NOT granted}),
	'the update waits for the open transactions');
$open->query_safe('COMMIT');
is(query(qq{SELECT sem_held($uncommitted)}), 't', 'one commits its 1.0 claim');
$fencer->query_safe('COMMIT');
is(query(qq{SELECT note FROM guarded WHERE claim = $committed}), 'fenced',
	'the other commits the write its 1.0 fence guarded');
$updater->query_safe('SELECT 1');
is(query(q{SELECT extversion FROM pg_extension WHERE extname = 'pgsem'}), '1.1',
	'then the update goes through, beside a session with prepared statements');
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'up'}), '3',
	'all three 1.0 claims are held after the update');
is(query(q{SELECT sem_claim('up', 3, '1 hour') IS NULL}), 't',
	'the semaphore is full for a 1.1 sem_claim');
is(query(q{SELECT sem_claim_xact('up', 3) IS NULL}), 't',
	'and for a 1.1 transaction claim');
my $again = $prepared->query_safe(q{EXECUTE take('up2', 1, '1 hour')});
like($again, qr/^\d+$/,
	'a statement prepared under 1.0 runs after the update (replanned to the new sem_claim)');
is($prepared->query_safe("SELECT sem_release($again)"), 't', 'and its claim is released');

# ---- a 1.0 lease hands its slot to a 1.1 waiter ------------------------------------------------
my $waiter = $node->background_psql('postgres');
$waiter->query_until(qr/started/,
	"\\echo started\nSELECT sem_claim_session('up', 3, '1 minute') AS got;\n");
ok($node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'up'}),
	'a 1.1 session claim waits for a slot held by a 1.0 lease');
is(query("SELECT sem_release($third)"), 't', 'a 1.0 lease is released with the 1.1 library');
like($waiter->query('SELECT 1'), qr/^\d\n1$/, 'and its slot goes to the waiter');

# ---- restart ---------------------------------------------------------------------------------
$open->quit;
$updater->quit;
$fencer->quit;
$prepared->quit;
$waiter->quit;
$node->restart;
is(query(q{SELECT string_agg(id::text, ',' ORDER BY id) FROM sem_holders WHERE name = 'up'}),
	join(',', sort { $a <=> $b } ($committed, $uncommitted)),
	'after a restart the 1.0 leases are held (the session claim ended with its session)');
is(query("SELECT sem_release($committed) AND sem_release($uncommitted)"), 't',
	'and released');
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'up'}), '0', 'nothing is held');
is(query(q{SELECT status || ':' || count(*) FROM sem_history WHERE name = 'up' GROUP BY status}),
	'released:3', 'the history has every 1.0 claim, released');
$node->stop;
done_testing();
