# Waits end cleanly however they end, and session claims end with their session however it ends:
# pg_terminate_backend of a waiter (first in line or behind), a client that vanishes while it
# waits (first or behind) or while it holds a session claim, and a SIGKILL of a backend (the
# server resets every lock, session claims with them). No ended wait leaves a claim or a place in
# line, and the waiters behind move up. A terminated holder's claims wake the first waiter as
# they end. The first waiters run without their periodic recheck (pgsem.first_waiter_recheck =
# 0), so a path that forgets to wake one leaves its waiter to other wake-ups (a deadlock check,
# a stray timer), not to pgsem's own recheck.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $node = PostgreSQL::Test::Cluster->new('waits');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "restart_after_crash = on\npgsem.first_waiter_recheck = 0\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

sub poll
{
	my ($sql, $what) = @_;
	ok($node->poll_query_until('postgres', $sql), $what);
}

# Kills the psql client of a session: its backend sees the connection close.
sub vanish { my $s = shift; $s->{run}->signal('KILL'); eval { $s->{run}->finish }; return }

sub gone { my $pid = shift; return "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid" }

sub waiters { return query(q{SELECT string_agg(pid || ':' || position, ',' ORDER BY position) FROM sem_waiters}) }

# ---- (a) pg_terminate_backend of the first waiter, then of one behind ------------------------
{
	my $holder = query(q{SELECT sem_claim('t', 1, '1 hour')});
	my ($w1, $p1) = session($node);
	my ($w2, $p2) = session($node);
	my ($w3, $p3) = session($node);
	start($w1, q{SELECT sem_claim('t', 1, '1 hour', '1 minute') AS w1});
	poll(q{SELECT count(*) = 1 FROM sem_waiters}, '(a) w1 is first in line');
	start($w2, q{SELECT sem_claim('t', 1, '1 hour', '1 minute') AS w2});
	poll(q{SELECT count(*) = 2 FROM sem_waiters}, '(a) w2 is in line');
	start($w3, q{SELECT sem_claim('t', 1, '1 hour', '1 minute') AS w3});
	poll(q{SELECT count(*) = 3 FROM sem_waiters}, '(a) w3 is in line');
	is(waiters(), "$p1:1,$p2:2,$p3:3", '(a) sem_waiters shows the line in order');

	query("SELECT pg_terminate_backend($p1)");
	poll(gone($p1), '(a) the terminated first waiter has exited');
	is(waiters(), "$p2:1,$p3:2", '(a) the others moved up');
	query("SELECT pg_terminate_backend($p3)");
	poll(gone($p3), '(a) the terminated waiter behind has exited');
	is(waiters(), "$p2:1", '(a) it left the line');
	is(query(q{SELECT count(*) FROM sem_holders WHERE name = 't'}), '1',
		'(a) neither terminated waiter made a claim');

	query("SELECT sem_release($holder)");
	like(finish($w2), qr/^\d+\n1$/, '(a) the release goes to w2');
	is(query(q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 20561}),
		'0', '(a) nobody is left in line');
	$w2->quit;
	eval { $w1->quit };
	eval { $w3->quit };
}

# ---- (b) a client that vanishes while it waits: first in line, or behind ------------------------
{
	my $holder = query(q{SELECT sem_claim('v', 1, '1 hour')});
	my ($w1, $p1) = session($node);
	my ($w2, $p2) = session($node);
	my ($w3, $p3) = session($node);
	start($w1, q{SELECT sem_claim('v', 1, '1 hour', '1 minute') AS w1});
	poll(q{SELECT count(*) = 1 FROM sem_waiters}, '(b) w1 is first in line');
	start($w2, q{SELECT sem_claim('v', 1, '1 hour', '1 minute') AS w2});
	poll(q{SELECT count(*) = 2 FROM sem_waiters}, '(b) w2 is in line');
	start($w3, q{SELECT sem_claim('v', 1, '1 hour', '1 minute') AS w3});
	poll(q{SELECT count(*) = 3 FROM sem_waiters}, '(b) w3 is in line');

	# The first waiter watches its client's socket: it leaves at once.
	vanish($w1);
	poll(gone($p1), '(b) the first waiter whose client vanished has exited');
	is(waiters(), "$p2:1,$p3:2", '(b) the others moved up');

	# w2 is first now: it watches its socket too.
	vanish($w2);
	query("SELECT sem_release($holder)");
	poll(gone($p2), '(b) the next first waiter, whose client vanished, exited');
	like(finish($w3), qr/^\d+\n1$/, '(b) the slot went to w3');
	is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'v'}), '1',
		'(b) w3 holds the only claim: the vanished waiters made none');
	$w3->quit;
}

# ---- (b2) a client vanishes while its backend waits behind, in the lock manager -----------------
# The lock manager does not watch the client's socket. The waiter finds out when it comes first,
# and must before it takes a slot: here a slot is free the moment it comes first (it waits with
# n = 2 behind a first waiter with n = 1, head of line), and a lease taken for a client that is
# gone would be lost to everyone for an hour.
{
	my $holder = query(q{SELECT sem_claim('v2', 2, '1 hour')});
	my ($w1, $p1) = session($node);
	my ($w2, $p2) = session($node);
	start($w1, q{SELECT sem_claim('v2', 1, '1 hour', '1 minute') AS w1});
	poll(q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'v2'}, '(b2) w1 (n = 1) is first in line');
	start($w2, q{SELECT sem_claim('v2', 2, '1 hour', '1 minute') AS w2});
	poll(q{SELECT count(*) = 2 FROM sem_waiters WHERE name = 'v2'},
		'(b2) w2 (n = 2) waits behind it, though slot 1 is free');
	vanish($w2);
	is(query("SELECT pg_cancel_backend($p1)"), 't', '(b2) w1 is cancelled: w2 comes first');
	poll(gone($p2), '(b2) w2, whose client vanished, exited once first');
	is(query(q{SELECT string_agg(id::text, ',') FROM sem_holders WHERE name = 'v2'}), $holder,
		'(b2) without taking the free slot');
	is(finish($w1), '1', '(b2) w1 was cancelled, with no claim');
	$w1->quit;
	query("SELECT sem_release($holder)");
}

# ---- (c) a session claim ends with its session: disconnect, vanished client ----------------------
{
	my ($s, $sp) = session($node);
	is($s->query_safe(q{SELECT sem_claim_session('sc', 1)}), '0', '(c) a session claim is taken');
	my ($w, $wp) = session($node);
	start($w, q{SELECT sem_claim_session('sc', 1, '1 minute') AS w});
	poll(q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'sc'}, '(c) another session waits for it');
	vanish($s);
	like(finish($w), qr/^0\n1$/, '(c) the client vanished: its session claim went to the waiter');
	poll(gone($sp), '(c) the vanished session has exited');
	$w->quit;  # a clean disconnect
	poll(gone($wp), '(c) the waiter disconnected');
	is(query(q{SELECT sem_claim_session('sc', 1) IS NOT NULL}), 't',
		'(c) a disconnect freed its session claim too');
}

# ---- (c1) DISCARD ALL (a session pooler's reset query) ends a session claim -----------------------
{
	my ($h) = session($node);
	is($h->query_safe(q{SELECT sem_claim_session('da', 1)}), '0', '(c1) a session claim is taken');
	my ($w) = session($node);
	start($w, q{SELECT sem_claim_session('da', 1, '1 minute') AS w});
	poll(q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'da'}, '(c1) another session waits for it');
	$h->query_safe('DISCARD ALL');
	like(finish($w), qr/^0\n1$/, '(c1) DISCARD ALL: the session claim went to the waiter');
	$h->quit;
	$w->quit;
}

# ---- (c2) a terminated holder: its uncommitted lease and its transaction claim end ---------------
for my $kind (q{sem_claim('te', 1, '1 hour') IS NOT NULL}, q{sem_claim_xact('te', 1) IS NOT NULL})
{
	my ($h, $hp) = session($node);
	$h->query_safe('BEGIN');
	is($h->query_safe("SELECT $kind"), 't', "(c2) a holder in an open transaction: $kind");
	my ($w, $wp) = session($node);
	start($w, q{SELECT sem_claim_xact('te', 1, '1 minute') AS w});
	poll(q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'te'}, '(c2) a waiter waits for it');
	query("SELECT pg_terminate_backend($hp)");
	like(finish($w), qr/^0\n1$/, '(c2) the holder is terminated: its slot goes to the waiter');
	poll(gone($hp), '(c2) the terminated holder has exited');
	eval { $h->quit };
	$w->quit;
}

# ---- (d) a SIGKILL of a backend resets every lock: session claims are gone -----------------------
{
	my ($s, $sp) = session($node);
	is($s->query_safe(q{SELECT sem_claim_session('sk', 1)}), '0', '(d) a session claim is taken');
	is(query(q{SELECT sem_claim_session('sk', 1) IS NULL}), 't', '(d) it holds the only slot');
	my $lease = query(q{SELECT sem_claim('sk-lease', 1, '1 hour')});
	my $log_offset = -s $node->logfile;
	kill 'KILL', $sp;
	eval { $s->quit };
	ok($node->poll_query_until('postgres', 'SELECT 1', '1'), '(d) the server is back after the reset');
	ok($node->log_contains(qr/terminated by signal 9/, $log_offset), '(d) the server reset all sessions');
	is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'sk'}), '0', '(d) the session claim is gone');
	is(query(q{SELECT sem_claim_session('sk', 1) IS NOT NULL}), 't', '(d) its slot is free');
	is(query("SELECT sem_held($lease)"), 't', '(d) a lease, a row, survives the reset');
}

$node->stop;
done_testing();
