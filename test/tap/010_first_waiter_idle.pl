# A first waiter costs nothing while it waits, whatever holds the slots it waits for, and a
# maintenance command on pgsem.claims does not stall the semaphores.
#
# (a) A slot held by a lease that an open transaction is changing -- a renewal, a release, a claim
#     that reaped it -- after its expiry has passed: 1.1 set the waiter's timer to that expiry,
#     long gone, and woke it every millisecond (half a core), and each look kept its memory until
#     the wait ended. Here the waiter must use next to no CPU, and its memory must not grow, over
#     a few seconds of such a wait: CPU ticks from /proc and the backend's memory contexts
#     (pg_log_backend_memory_contexts), read twice. These are resource bounds, not timings: a
#     spinning waiter burns hundreds of ticks where an idle one burns a handful.
# (b) A VACUUM FULL of pgsem.claims queued behind a first waiter: 1.1's waiter held its lock on
#     the table for its whole wait, so the release that would serve it queued behind the VACUUM
#     FULL, which queued behind the waiter, and everything stalled until the wait ran out (the
#     waiter then got NULL). Now the waiter holds no table lock while it sleeps: it gets the slot.
#     When the waiter's transaction holds the table lock from before its wait (it claimed
#     earlier) and the slot's holder queues behind the VACUUM FULL, the cycle is real: the
#     waiter's deadlock check sees the lock manager's queue and breaks it (40P01) instead of
#     waiting it out.
# (c) A waiter that looks for a slot and checks for deadlocks again and again: its memory stays
#     flat, whatever the number of looks and checks (each runs in a context emptied after it).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('idle');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "log_min_messages = log\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

# The errors of what start() sent, once it has finished.
sub finish_with_errors
{
	my $s = shift;
	$s->{stderr} = '';
	$s->query('SELECT 1 AS done');
	my $errors = $s->{stderr};
	$s->{stderr} = '';
	return $errors;
}

# CPU ticks (user + system) a backend has used.
sub ticks
{
	my $pid = shift;
	open(my $fh, '<', "/proc/$pid/stat") or return -1;
	my $stat = <$fh>;
	close $fh;
	$stat =~ s/^.*\)\s+//;
	my @f = split /\s+/, $stat;
	return $f[11] + $f[12];
}

# The "Grand total" of a backend's memory contexts, in bytes, as it logs them.
my $log_offset = 0;
sub memory_total
{
	my $pid = shift;
	$log_offset = -s $node->logfile;
	query("SELECT pg_log_backend_memory_contexts($pid)");
	my $total;
	# The waiter logs them at its next interrupt check, which the request's signal causes.
	for (1 .. 200)
	{
		my $log = slurp_file($node->logfile, $log_offset);
		if ($log =~ /\[$pid\] [^\n]*LOG:  Grand total: (\d+) bytes/) { $total = $1; last }
		usleep(50_000);
	}
	return $total;
}

# ---- (a) a waiter behind a lease changed by an open transaction -------------------------------
for my $case ('renewal', 'release', 'reaping claim')
{
	my $name = "idle $case";
	my ($holder) = session($node);
	my $claim = query("SELECT sem_claim('$name', 1, '1 second')");
	if ($case eq 'renewal')
	{
		$holder->query_safe("BEGIN; SELECT sem_renew($claim, '1 hour')");
		usleep(1_200_000);    # the old version's expiry passes; the renewal stays uncommitted
	}
	elsif ($case eq 'release')
	{
		usleep(1_200_000);
		$holder->query_safe("BEGIN; SELECT sem_release($claim)");
	}
	else
	{
		usleep(1_200_000);    # the lease ran out, its holder gone; a claimer reaps it in a transaction
		$holder->query_safe("BEGIN; SELECT sem_claim('$name', 1, '1 hour')");
	}
	my ($waiter, $pid) = session($node);
	start($waiter, "SELECT sem_claim_xact('$name', 1, '30 seconds') IS NULL AS waited");
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM sem_waiters WHERE pid = $pid"),
		"($case) the waiter is first in line");
	sleep 1;
	my ($ticks0, $memory0) = (ticks($pid), memory_total($pid));
	sleep 3;
	my ($ticks1, $memory1) = (ticks($pid), memory_total($pid));
	my $used = $ticks1 - $ticks0;
	# An idle waiter wakes once a second (pgsem.first_waiter_recheck) and uses no measurable
	# CPU; 1.1's, waking every millisecond, used 12 to 14 ticks here at n = 1 (and half a core
	# at n = 8).
	ok($ticks0 >= 0 && $used <= 3,
		"($case) the waiter used at most 1 % of a core over 3 s ($used ticks)");
	# A little slack for one-off allocations; 1.1 grew by more than a megabyte a second here.
	ok(defined $memory0 && defined $memory1 && $memory1 <= $memory0 + 16384,
		"($case) its memory did not grow (" . ($memory0 // 'none') . " -> " . ($memory1 // 'none') . " bytes)");
	$holder->query_safe('ROLLBACK');
	like(finish($waiter), qr/^f\n1$/, "($case) the rollback hands the slot to the waiter");
	$waiter->quit;
	$holder->quit;
}

# ---- (b) VACUUM FULL queued behind a first waiter ----------------------------------------------
{
	my $claim = query(q{SELECT sem_claim('maintained', 1, '10 minutes')});
	my ($waiter, $wpid) = session($node);
	start($waiter, q{SELECT sem_claim('maintained', 1, '1 minute', '20 seconds') IS NOT NULL AS got});
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM sem_waiters WHERE pid = $wpid"),
		'(b) a lease claimer waits first in line');
	my ($dba, $dpid) = session($node);
	start($dba, 'VACUUM FULL pgsem.claims');
	ok( $node->poll_query_until(
			'postgres',
			"SELECT state = 'idle' OR wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $dpid"),
		'(b) VACUUM FULL ran, or queued for its lock');
	my ($releaser) = session($node);
	is($releaser->query_safe("SELECT sem_release($claim)"), 't', '(b) the release goes through');
	like(finish($waiter), qr/^t\n1$/, '(b) and the waiter gets the slot, not NULL at the end of its wait');
	like(finish($dba), qr/^1$/, '(b) VACUUM FULL finished');
	$releaser->quit;
	$dba->quit;
	$waiter->quit;
}

# The waiter's transaction holds the table lock from an earlier claim, and the slot's holder (a
# transaction claim) queues behind the VACUUM FULL for a claim of its own: waiter -> holder ->
# VACUUM FULL -> waiter, a cycle Postgres' detector cannot see (the waiter sleeps on its latch)
# and which needs the lock manager's queue order to see at all.
{
	my ($holder) = session($node);
	$holder->query_safe(q{BEGIN; SELECT sem_claim_xact('maintained 2', 1)});
	my ($waiter, $wpid) = session($node);
	$waiter->query_safe(q{SET deadlock_timeout = '100ms'});
	$waiter->query_safe(q{BEGIN; SELECT sem_claim('earlier', 1, '1 minute')});
	start($waiter, q{SELECT sem_claim_xact('maintained 2', 1, '20 seconds') IS NOT NULL AS got});
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM sem_waiters WHERE pid = $wpid"),
		'(b) a claimer that claimed earlier in its transaction waits first in line');
	my ($dba, $dpid) = session($node);
	start($dba, 'VACUUM FULL pgsem.claims');
	ok( $node->poll_query_until(
			'postgres', "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $dpid"),
		'(b) VACUUM FULL queues behind the waiter');
	start($holder, q{SELECT sem_claim('other', 1, '1 minute') IS NOT NULL AS claimed});
	like(finish_with_errors($waiter), qr/deadlock detected/, '(b) the waiter finds the cycle: 40P01');
	$waiter->query_safe('ROLLBACK');
	like(finish($holder), qr/^t\n1$/, '(b) then the holder claims');
	$holder->query_safe('COMMIT');
	like(finish($dba), qr/^1$/, '(b) and VACUUM FULL finishes');
	$holder->quit;
	$dba->quit;
	$waiter->quit;
}

# ---- (c) a first waiter that looks again and again ---------------------------------------------
# Each look for a slot, and each deadlock check, runs in a memory context emptied before the next,
# so the waiter's memory does not grow with their number. Behind a lease held for an hour, with
# pgsem.first_waiter_recheck = 1ms and deadlock_timeout = 10ms, it looks some thousands of times
# and checks for deadlocks some dozens of times between the two readings; a deadlock check that
# kept its copy of the lock table and of the leases would add hundreds of kilobytes.
{
	my $claim = query(q{SELECT sem_claim('looked at', 1, '1 hour')});
	my ($waiter, $pid) = session($node);
	$waiter->query_safe(q{SET pgsem.first_waiter_recheck = '1ms'; SET deadlock_timeout = '10ms'});
	start($waiter, q{SELECT sem_claim('looked at', 1, '1 hour', '30 seconds') IS NOT NULL AS got});
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM sem_waiters WHERE pid = $pid"),
		'(c) a waiter that looks often is first in line');
	sleep 1;
	my $memory0 = memory_total($pid);
	sleep 3;
	my $memory1 = memory_total($pid);
	ok(defined $memory0 && defined $memory1 && $memory1 <= $memory0 + 16384,
		"(c) its memory did not grow with its looks and checks (" . ($memory0 // 'none') . " -> "
		  . ($memory1 // 'none') . " bytes)");
	is(query("SELECT sem_release($claim)"), 't', '(c) the lease is released');
	like(finish($waiter), qr/^t\n1$/, '(c) and the waiter gets the slot');
	$waiter->quit;
}

is(query(q{SELECT count(*) FROM sem_waiters}), '0', 'nobody is left in line');
$node->stop;
done_testing();
