# A claim waits for the synchronous standbys whatever the session's synchronous_commit says, and
# whatever way it commits:
# (a) The claim's id is a fencing token from the moment the claim statement returns, before any
#     commit: the sequence record behind it must be on the synchronous standbys by then. 1.1 let
#     the id through at once when the session ran with synchronous_commit = local.
# (b) A claim committed through PREPARE TRANSACTION waits at the PREPARE, as a plain claim does
#     at COMMIT. 1.1 prepared it without waiting.
# (c) PREPARE TRANSACTION of a transaction that took a session claim is refused (0A000), as for
#     transaction claims: the claim is the session's, and a ROLLBACK PREPARED could not take it
#     back (1.1 let it survive the rollback).
# There is no standby here: synchronous_standby_names names one that never connects, so a wait
# for it lasts until cancelled, and the test looks for the backend waiting (wait event SyncRep).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $node = PostgreSQL::Test::Cluster->new('syncrep');
$node->init(allows_streaming => 1, extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "max_prepared_transactions = 5\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

sub waits_for_standby
{
	my ($pid, $what) = @_;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT wait_event = 'SyncRep' FROM pg_stat_activity WHERE pid = $pid"),
		$what);
	query("SELECT pg_cancel_backend($pid)");
}

# ---- (a) the id waits -------------------------------------------------------------------------
{
	my ($s, $pid) = session($node);
	standby_required($node, 'nosuchstandby');
	# A new batch of ids is logged by the next draw (setval resets the batch); the setval itself
	# commits without waiting for the standby.
	query(q{SET synchronous_commit = local;
	        SELECT setval('pgsem.claim_id', (SELECT last_value FROM pgsem.claim_id))});
	$s->query_safe('SET synchronous_commit = local');
	$s->query_safe('BEGIN');
	start($s, q{SELECT sem_claim('sync a', 1, '1 hour') AS id});
	waits_for_standby($pid,
		'(a) with synchronous_commit = local, the claim statement waits for the standby before it returns an id');
	my ($out, $failed) = $s->query('SELECT 1');
	like($s->{stderr}, qr/no claim was made: its id did not reach the synchronous standbys/,
		'(a) cancelled, that wait fails the claim instead of returning an id');
	$s->query('ROLLBACK');
	$s->quit;
	standby_required($node, '');
	is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'sync a'}), '0', '(a) no claim was made');
}

# ---- (b) PREPARE TRANSACTION waits ------------------------------------------------------------
{
	my ($s, $pid) = session($node);
	$s->query_safe('SET synchronous_commit = local');
	$s->query_safe('BEGIN');
	like($s->query_safe(q{SELECT sem_claim('sync b', 1, '1 hour')}), qr/^\d+$/, '(b) a lease claimed');
	standby_required($node, 'nosuchstandby');
	ok( $node->poll_query_until(
			'postgres', "SELECT setting <> '' FROM pg_settings WHERE name = 'synchronous_standby_names'"),
		'(b) a synchronous standby is now required');
	start($s, q{PREPARE TRANSACTION 'sync b'});
	waits_for_standby($pid,
		'(b) with synchronous_commit = local, PREPARE TRANSACTION of the claim waits for the standby');
	$s->query('SELECT 1');
	$s->{stderr} = '';
	standby_required($node, '');
	is(query(q{SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'sync b'}), '1',
		'(b) the transaction is prepared (a cancelled wait does not undo it)');
	query(q{ROLLBACK PREPARED 'sync b'});
	$s->quit;
}

# ---- (c) no session claim in a prepared transaction --------------------------------------------
{
	my ($s) = session($node);
	$s->query_safe('BEGIN');
	is($s->query_safe(q{SELECT sem_claim_session('sync c', 1)}), '0', '(c) a session claim taken in a transaction');
	$s->{stderr} = '';
	$s->query(q{PREPARE TRANSACTION 'sync c'});
	like($s->{stderr}, qr/cannot PREPARE a transaction that took a session claim of semaphore "sync c"/,
		'(c) PREPARE TRANSACTION is refused');
	$s->{stderr} = '';
	is(query(q{SELECT count(*) FROM pg_prepared_xacts}), '0', '(c) nothing was prepared');
	is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'sync c'}), '0',
		'(c) and the claim went with the failed transaction');
	is($s->query_safe(q{SELECT sem_claim_session('sync c', 1)}), '0',
		'(c) a session claim taken outside the transaction to be prepared');
	$s->query_safe('BEGIN');
	$s->query_safe(q{SELECT sem_claim('sync c lease', 1, '1 hour')});
	$s->query_safe(q{PREPARE TRANSACTION 'sync c'});
	is(query(q{SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'sync c'}), '1',
		'(c) does not stop a later transaction from being prepared');
	query(q{ROLLBACK PREPARED 'sync c'});
	is($s->query_safe(q{SELECT sem_release_session('sync c', 0)}), 't', '(c) and it is released');
	$s->quit;
}

$node->stop;
done_testing();
