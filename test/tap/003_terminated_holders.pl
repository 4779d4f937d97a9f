# Holders killed by pg_terminate_backend: a claim whose transaction had not committed vanishes
# with it; a committed claim outlives its session and keeps the slot until its lease runs out;
# advisory locks and fences end with the session.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $node = PostgreSQL::Test::Cluster->new('term');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

# A background session and its backend's pid.
sub session
{
	my $s = $node->background_psql('postgres');
	return ($s, $s->query_safe('SELECT pg_backend_pid()'));
}

# Terminates a backend and waits (up to 30 s) until it has exited.
sub terminate
{
	my ($pid, $what) = @_;
	is(query("SELECT pg_terminate_backend($pid, 30000)"), 't', "$what: backend $pid terminated");
}

# Closes a session whose backend is gone; psql may already have exited.
sub close_session { my $s = shift; eval { $s->quit }; return }

# ---- (a) claim inside an open transaction ----------------------------------------------------
{
	my ($s, $pid) = session();
	$s->query_safe('BEGIN');
	my $id = $s->query_safe(q{SELECT sem_claim('term-a', 1, '1 hour')});
	like($id, qr/^\d+$/, '(a) a claim is made inside an open transaction');
	is(query(q{SELECT sem_claim('term-a', 1, '1 hour') IS NULL}),
		't', '(a) the uncommitted claim holds the only slot');
	is(query("SELECT sem_held($id)"), 't', '(a) sem_held counts the uncommitted claim');
	is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'term-a' AND NOT committed}),
		'1', '(a) sem_holders shows the uncommitted claim, as not committed');

	terminate($pid, '(a)');
	# No sleep, no lease to wait for: the slot is free as soon as the backend is gone.
	my $next = query(q{SELECT sem_claim('term-a', 1, '1 hour')});
	like($next, qr/^\d+$/, '(a) the slot is free at once after the termination');
	is(query("SELECT sem_held($id)"), 'f', '(a) the terminated claim is not held');
	is(query("SELECT count(*) FROM sem_history WHERE id = $id"),
		'0', '(a) the terminated claim left no history row');
	is(query("SELECT sem_release($id)"), 'f', '(a) releasing the vanished claim returns false');
	close_session($s);
}

# ---- (b) committed claim with a 2 s lease ----------------------------------------------------
{
	my ($s, $pid) = session();
	my $id = $s->query_safe(q{SELECT sem_claim('term-b', 1, '2 seconds')});
	like($id, qr/^\d+$/, '(b) a claim with a 2 s lease is committed');
	terminate($pid, '(b)');
	close_session($s);

	is( query(
			"SELECT sem_claim('term-b', 1, '1 hour') IS NULL, sem_held($id),
                    clock_timestamp() < expires_at
               FROM sem_history WHERE id = $id"),
		't|t|t',
		'(b) within the lease, the slot stays held: another claim returns NULL');
	is(query(q{SELECT pid FROM sem_holders WHERE name = 'term-b'}),
		$pid, '(b) sem_holders still names the terminated backend');
	is(query("SELECT count(*) FROM pg_stat_activity WHERE pid = $pid"),
		'0', '(b) that backend no longer exists');

	# Sleep until the lease has run out by the server's clock.
	my $left = query(
		"SELECT greatest(0, extract(epoch FROM expires_at - clock_timestamp()))
           FROM sem_history WHERE id = $id");
	cmp_ok($left, '<=', 2, '(b) at most 2 s of lease are left');
	sleep($left + 0.05);

	is(query("SELECT sem_held($id)"), 'f', '(b) the claim is not held once its lease ran out');
	is(query(q{SELECT live || '/' || expired_unreaped FROM sem_summary WHERE name = 'term-b'}),
		'0/1', '(b) sem_summary counts it as expired, not yet reaped');
	my $next = query(q{SELECT sem_claim('term-b', 1, '1 hour')});
	like($next, qr/^\d+$/, '(b) after the lease ran out another claimer gets the slot');
	cmp_ok($next, '>', $id, '(b) with a larger id');
	is(query("SELECT status FROM sem_history WHERE id = $id"),
		'timed out', "(b) sem_history shows the old claim 'timed out'");
	is( query("SELECT outcome, ended_at = expires_at FROM pgsem.claims WHERE id = $id"),
		'timed out|t',
		'(b) the claimer recorded the old claim as timed out at its expiry time');
	is(query("SELECT sem_renew($id), sem_release($id)"),
		'f|f', '(b) the timed-out claim can be neither renewed nor released');
	is(query(q{SELECT live || '/' || expired_unreaped FROM sem_summary WHERE name = 'term-b'}),
		'1/0', '(b) sem_summary shows only the new claim');
}

# ---- (c) advisory_lock_text in an open transaction, with a waiter -------------------------------
{
	my $key_match = q{locktype = 'advisory' AND objsubid = 1
                      AND ((classid::bigint << 32) | objid::bigint) = fnv1a_64('term-c')};
	my ($s, $pid) = session();
	$s->query_safe('BEGIN');
	$s->query_safe(q{SELECT advisory_lock_text('term-c')});
	is(query("SELECT mode, granted FROM pg_locks WHERE $key_match AND pid = $pid"),
		'ExclusiveLock|t', '(c) the session holds the exclusive text lock');
	is(query(q{BEGIN; SELECT advisory_try_lock_text('term-c'); COMMIT;}),
		'f', '(c) another session cannot take it');

	my ($waiter, $waiter_pid) = session();
	$waiter->query_safe('BEGIN');
	$waiter->query_until(qr/waiting/,
		"\\echo waiting\nSELECT advisory_lock_text('term-c');\n\\echo got-lock\n");
	ok( $node->poll_query_until(
			'postgres', "SELECT count(*) FROM pg_locks WHERE $key_match AND pid = $waiter_pid
                         AND NOT granted", '1'),
		'(c) a second session waits for the lock');

	terminate($pid, '(c)');
	close_session($s);
	ok( $node->poll_query_until(
			'postgres', "SELECT count(*) FROM pg_locks WHERE $key_match AND pid = $waiter_pid
                         AND granted", '1'),
		'(c) the waiting session gets the lock once the holder is terminated');
	like($waiter->query_until(qr/got-lock/, ''), qr/got-lock/, '(c) and its statement returns');
	$waiter->query_safe('COMMIT');
	$waiter->quit;
	is(query(q{BEGIN; SELECT advisory_try_lock_text('term-c'); COMMIT;}),
		't', '(c) the lock is free again');
}

# ---- (d) session-level text lock ------------------------------------------------------------
{
	my ($s, $pid) = session();
	$s->query_safe(q{SELECT advisory_session_lock_text('term-d')});
	is(query(q{SELECT advisory_session_try_lock_text_shared('term-d')}),
		'f', '(d) a session text lock excludes other sessions');
	terminate($pid, '(d)');
	close_session($s);
	is(query(q{SELECT advisory_session_try_lock_text('term-d')}),
		't', '(d) the session text lock ends with the terminated session');
}

# ---- (e) a fence in an open transaction -----------------------------------------------------
{
	my $id = query(q{SELECT sem_claim('term-e', 1, '1 hour')});
	my ($s, $pid) = session();
	$s->query_safe('BEGIN');
	$s->query_safe("SELECT sem_fence($id)");
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nBEGIN;\nSET LOCAL lock_timeout = '200ms';\nSELECT sem_release($id);");
	like($err, qr/ERROR:\s+55P03:/, '(e) a fence makes sem_release wait (here: lock timeout)');
	terminate($pid, '(e)');
	close_session($s);
	is(query("SELECT sem_release($id)"), 't',
		'(e) the fence ends with the terminated session: the claim can be released');
}

$node->stop;
done_testing();
