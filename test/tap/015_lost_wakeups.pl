# Every path that frees a slot wakes the semaphore's first waiter, which sleeps on its latch until
# then. A forgotten wake-up does not show in the waiter's answer: the waiter looks once more when
# its wait runs out, finds the slot free by then and takes it (so the hand-off spec and TAP 007,
# whose waits of a minute end in a grant either way, cannot see one). Here nothing else may wake a
# waiter before its statement_timeout ends it with an error:
#  - pgsem.first_waiter_recheck = 0: no periodic look;
#  - deadlock_timeout longer than the test: the first waiter's deadlock check, which wakes it
#    every deadlock_timeout and looks for a slot on the way, never runs;
#  - stray timer signals have fired before any slot frees: a backend that goes idle with
#    statistics it may not flush yet arms a 10 s timer (PGSTAT_IDLE_INTERVAL) that the next
#    statement leaves running, and its SIGALRM sets the latch mid-statement. So the slots are
#    freed only once every waiter has slept for longer than that: a settling pause, nothing is
#    timed.
# One waiter per path, all at once: a release, the rollback of an uncommitted lease, the commit and
# the rollback of a transaction claim, a session claim released by sem_release_session, by
# pg_advisory_unlock_all, by DISCARD ALL and by its session's disconnect, a transaction claim
# whose backend is terminated, a lease claimed in a savepoint rolled back to, a release followed
# by a savepoint rolled back to (that rollback wakes the waiter for nothing, the commit must wake
# it again), and leases past their time held by an open transaction that fenced, renewed or
# recorded them as timed out.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $node = PostgreSQL::Test::Cluster->new('wakeups');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf',
	"max_connections = 60\npgsem.first_waiter_recheck = 0\ndeadlock_timeout = '10min'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

# ---- what holds each slot ---------------------------------------------------------------------
my %holder;
my %lease;
for my $name (qw(rollback_lease commit_xact rollback_xact release_session unlock_all
	discard_all disconnect terminated savepoint fence renew timeout_record))
{
	($holder{$name}) = session($node);
}
my $terminated_pid = $holder{terminated}->query_safe('SELECT pg_backend_pid()');
$lease{release} = query(q{SELECT sem_claim('release', 1, '1 hour')});
$lease{release_before_savepoint} = query(q{SELECT sem_claim('release_before_savepoint', 1, '1 hour')});
($holder{release_before_savepoint}) = session($node);
$holder{rollback_lease}->query_safe(q{BEGIN; SELECT sem_claim('rollback_lease', 1, '1 hour')});
$holder{commit_xact}->query_safe(q{BEGIN; SELECT sem_claim_xact('commit_xact', 1)});
$holder{rollback_xact}->query_safe(q{BEGIN; SELECT sem_claim_xact('rollback_xact', 1)});
$holder{terminated}->query_safe(q{BEGIN; SELECT sem_claim_xact('terminated', 1)});
for my $name (qw(release_session unlock_all discard_all disconnect))
{
	$holder{$name}->query_safe("SELECT sem_claim_session('$name', 1)");
}
$holder{savepoint}->query_safe(q{BEGIN; SAVEPOINT s; SELECT sem_claim('savepoint', 1, '1 hour')});
# Leases of a second, fenced or renewed at once by a transaction that stays open; the third is
# recorded as timed out (a late release) once it has run out, by a transaction that stays open.
for my $name (qw(fence renew timeout_record))
{
	$lease{$name} = query("SELECT sem_claim('$name', 1, '1 second')");
}
$holder{fence}->query_safe("BEGIN; SELECT sem_fence($lease{fence})");
$holder{renew}->query_safe("BEGIN; SELECT sem_renew($lease{renew}, '1 hour')");
ok($node->poll_query_until('postgres', "SELECT NOT sem_held($lease{timeout_record})"),
	'the lease to be recorded as timed out has run out');
like($holder{timeout_record}->query_safe("BEGIN; SELECT sem_release($lease{timeout_record})"),
	qr/^f$/m, 'a late release records its timeout, in a transaction still open');

# ---- the waiters ------------------------------------------------------------------------------
my @paths = qw(release rollback_lease commit_xact rollback_xact release_session unlock_all
  discard_all disconnect terminated savepoint release_before_savepoint fence renew timeout_record);
my %waiter;
for my $name (@paths)
{
	($waiter{$name}) = session($node);
	$waiter{$name}->query_safe(q{SET statement_timeout = '40s'});
	start($waiter{$name}, "SELECT sem_claim('$name', 1, '1 hour', '1 hour') IS NOT NULL AS got");
}
my $count = scalar @paths;
# Asleep: each has looked, found its slot held, and sleeps until woken (a lease's expiry wakes
# the waiters behind 'fence' once; they look again and sleep on).
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = $count FROM sem_waiters w JOIN pg_stat_activity a USING (pid)"
		  . " WHERE a.wait_event = 'Extension'"),
	"all $count waiters are first in line of their semaphore, asleep");
sleep 11;    # the stray timers described above have fired
is(query(q{SELECT count(*) FROM sem_waiters}), $count, 'nobody got a slot that is still held');

# ---- every slot frees --------------------------------------------------------------------------
query("SELECT sem_release($lease{release})");
$holder{rollback_lease}->query_safe('ROLLBACK');
$holder{commit_xact}->query_safe('COMMIT');
$holder{rollback_xact}->query_safe('ROLLBACK');
$holder{release_session}->query_safe(q{SELECT sem_release_session('release_session', 0)});
$holder{unlock_all}->query_safe('SELECT pg_advisory_unlock_all()');
$holder{discard_all}->query_safe('DISCARD ALL');
$holder{disconnect}->quit;
query("SELECT pg_terminate_backend($terminated_pid)");
$holder{savepoint}->query_safe('ROLLBACK TO SAVEPOINT s');
$holder{release_before_savepoint}->query_safe(
	"BEGIN; SELECT sem_release($lease{release_before_savepoint}); SAVEPOINT s; ROLLBACK TO SAVEPOINT s");
sleep 1;    # the rollback to the savepoint has woken the waiter, which found the slot held
$holder{release_before_savepoint}->query_safe('COMMIT');
$holder{fence}->query_safe('COMMIT');
$holder{renew}->query_safe('ROLLBACK');
$holder{timeout_record}->query_safe('COMMIT');

for my $name (@paths)
{
	like(finish($waiter{$name}), qr/^t\n1$/, "$name: the waiter is woken and gets the slot");
}
$holder{savepoint}->query_safe('COMMIT');
is(query(q{SELECT count(*) FROM sem_waiters}), '0', 'nobody is left in line');

for my $s (values %waiter, values %holder) { eval { $s->quit } }
$node->stop;
done_testing();
