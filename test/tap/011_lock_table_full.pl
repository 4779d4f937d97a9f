# A claim that fails leaves nothing behind, also when it fails halfway: with the server's lock
# table full, a session claim can get its slot-holder lock and then fail (53200, out of shared
# memory) at the next lock it needs. 1.1 kept the first lock for the rest of the session, known to
# nobody: sem_release_session said false, sem_summary showed nothing, and every claimer of the
# name was refused. Here a session fills the lock table, then gives back one lock at a time while
# another session tries a session claim (and a transaction claim) of a fresh name after each: the
# claim fails as long as the table is too full, and must then hold no lock at all, until it
# succeeds.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('locks');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
# A small lock table, so that filling it is quick.
$node->append_conf('postgresql.conf', "max_connections = 10\nmax_locks_per_transaction = 10\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

# With the lock table full no new connection can start: every session is opened first.
my $filler = $node->background_psql('postgres', on_error_stop => 0);
my $claimer = $node->background_psql('postgres', on_error_stop => 0);
my $claimer_pid = $claimer->query_safe('SELECT pg_backend_pid()');
my $observer = $node->background_psql('postgres', on_error_stop => 0);
sub query { return $observer->query_safe(shift) }

# Fill the lock table with session-level advisory locks, a batch at a time, then one at a time.
my $held = 0;
for my $batch (100, 10, 1)
{
	while (1)
	{
		my ($out, $ok) = try_lock($held, $batch);
		last unless $ok;
		$held += $batch;
	}
}
sub try_lock
{
	my ($from, $count) = @_;
	my $to = $from + $count - 1;
	$filler->{stderr} = '';
	my $out = $filler->query(
		"SELECT count(pg_advisory_lock(k)) FROM generate_series($from, $to) k");
	my $ok = $filler->{stderr} !~ /out of shared memory/;
	# A failed batch keeps what it got (session locks outlive errors): give it all back.
	$filler->query("SELECT pg_advisory_unlock(k) FROM generate_series($from, $to) k") if !$ok;
	$filler->{stderr} = '';
	return ($out, $ok);
}
ok($held > 0, "the filler holds $held advisory locks and the lock table is full");

# pgsem's own locks held by the claimer's session (slot mutex, slot holder, name holders, line).
my $pgsem_locks = "SELECT count(*) FROM pg_locks WHERE pid = $claimer_pid AND locktype = 'advisory'"
  . " AND objsubid IN (20556, 20558, 20561, 20563)";

my ($failures, $leaks, $granted) = (0, 0, 0);
for my $step (1 .. 40)
{
	$held -= 1;
	$filler->query_safe("SELECT pg_advisory_unlock($held)");
	my $name = "full-$step";
	$claimer->{stderr} = '';
	my $slot = $claimer->query("SELECT sem_claim_session('$name', 1)");
	if ($claimer->{stderr} =~ /out of shared memory/)
	{
		$failures++;
		$leaks++ if query($pgsem_locks) ne '0';
		next;
	}
	$granted = $slot eq '0';
	last;
}
$filler->query_safe('SELECT pg_advisory_unlock_all()');    # room for the checks below
ok($failures > 0, "session claims failed with the lock table full ($failures times)");
is($leaks, 0, 'no failed session claim left a lock behind');
ok($granted, 'once there was room, the session claim got its slot');
my $name = "full-" . ($failures + 1);
is(query("SELECT count(*) FROM sem_holders WHERE name = '$name' AND kind = 'session'"), '1',
	'and sem_holders shows it');
is($claimer->query_safe("SELECT sem_release_session('$name', 0)"), 't', 'it is released');
is(query($pgsem_locks), '0', 'leaving the session no lock of pgsem');

# Every name tried on the way is free: no slot was kept by a failed claim.
is( query(
		"BEGIN; SELECT count(*) FROM generate_series(1, $failures) i"
		  . " WHERE sem_claim_xact('full-' || i, 1) IS NULL; COMMIT"),
	'0',
	'every name a claim failed on is free');

# The lock table grew into the server's spare shared memory, which stays gone when its locks are
# given back: a session whose first claim comes now finds no room for the release epochs (pgsem
# is not preloaded) and claims without them. The ERROR that the attach catches zeroed the
# session's interrupt holdoff count while AddinShmemInitLock still counted in it, and releasing
# the lock took the count to 2^32 - 1: until its next ERROR the session ignored statement_timeout,
# lock_timeout (a claim's own wait), pg_cancel_backend, pg_terminate_backend and a fast shutdown.
my $late = $node->background_psql('postgres', on_error_stop => 0);
is($late->query_safe("SELECT sem_claim_session('late', 1)"),
	'0', 'a session whose first claim comes after the spare shared memory went gets its slot');
is( query("SELECT count(*) FROM pg_shmem_allocations WHERE name = 'pgsem release epochs'"),
	'0', 'the release epochs found no room (the case above)');
is(query("SELECT count(*) FROM sem_holders WHERE name = 'late'"), '1', 'sem_holders shows it');
$late->{stderr} = '';
$late->query("SET statement_timeout = '1s'; SELECT pg_sleep(20)");
like($late->{stderr}, qr/statement timeout/, "and the session's statements still time out");
$late->{stderr} = '';
$late->query_safe('RESET statement_timeout');
is($late->query_safe("SELECT sem_release_session('late', 0)"), 't', 'it is released');

$filler->quit;
$claimer->quit;
$late->quit;
$observer->quit;
$node->stop;
done_testing();
