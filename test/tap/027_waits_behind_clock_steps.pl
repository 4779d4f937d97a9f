# A waiter behind the first in line waits in the lock manager, which ends its sleep only with the
# grant or an error; its `wait` must still end after `wait` on a monotonic clock when the server's
# wall clock steps. 026_clock_steps.pl cannot show this: libfaketime turns its faking off inside
# epoll_wait, where a sleeping backend's SIGALRM handler (timeout.c, which compares its timeouts'
# ends with the wall clock) runs. So this script fakes the wall clock with a shim of its own,
# built here from a few lines of C and preloaded into the postmaster: clock_gettime(CLOCK_REALTIME),
# gettimeofday and time add an offset read from a file on every call (open, read and close are
# async-signal-safe), in signal handlers too, as a real step would. CLOCK_MONOTONIC is untouched.
#
# Then, with no step: a waiter behind still ends with the user's cancel (57014), statement_timeout
# (57014) and its caller's lock_timeout (55P03), and no wait leaves a cancel for what its session
# does next.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC usleep);

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $scratch = PostgreSQL::Test::Utils::tempdir();
my $shim = "$scratch/wall_clock_step.so";
my $clock_file = "$scratch/wall_clock_offset";
open(my $src, '>', "$scratch/wall_clock_step.c") or die "cannot write the shim: $!";
print $src <<'C';
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static char path[1024];

__attribute__((constructor)) static void init(void) {
    const char *p = getenv("WALL_CLOCK_OFFSET_FILE");
    if (p != NULL) strncpy(path, p, sizeof(path) - 1);
}

/* Seconds to add to the wall clock: the file's number, read on every call. */
static long offset(void) {
    char buf[32];
    long v = 0;
    int sign = 1, fd = path[0] ? open(path, O_RDONLY) : -1;
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '-') sign = -1;
        else if (buf[i] >= '0' && buf[i] <= '9') v = v * 10 + (buf[i] - '0');
    }
    return sign * v;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    int rc = syscall(SYS_clock_gettime, id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) ts->tv_sec += offset();
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    (void)tz;
    int rc = syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec + offset();
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

time_t time(time_t *t) {
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
    time_t now = ts.tv_sec + offset();
    if (t != NULL) *t = now;
    return now;
}
C
close $src;
my ($cc_out, $cc_err) = ('', '');
my $built = IPC::Run::run([ 'cc', '-O2', '-shared', '-fPIC', '-o', $shim, "$scratch/wall_clock_step.c" ],
	'>', \$cc_out, '2>', \$cc_err);
if (!ok($built && -r $shim, 'the wall clock shim builds'))
{
	diag($cc_err);
	done_testing();
	exit;
}

# Written whole and renamed, so that no call reads a half-written offset.
sub set_clock_file
{
	my $seconds = shift;
	open(my $fh, '>', "$clock_file.new") or die "cannot write $clock_file.new: $!";
	print $fh "$seconds\n";
	close $fh;
	rename("$clock_file.new", $clock_file) or die "cannot rename to $clock_file: $!";
	return;
}
set_clock_file(0);

my $node = PostgreSQL::Test::Cluster->new('waits_behind_clock_steps');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
# deadlock_timeout: an alarm 2 s into a wait, after the step and before the 4 s wait ends, when
# timeout.c looks at the wall clock again.
$node->append_conf('postgresql.conf', "max_connections = 20\ndeadlock_timeout = '2s'\n");
{
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{WALL_CLOCK_OFFSET_FILE} = $clock_file;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }
sub now_mono { return clock_gettime(CLOCK_MONOTONIC) }

# The server's clock minus this process's (not faked), in seconds.
sub server_offset
{
	my $t = Time::HiRes::time();
	return query('SELECT extract(epoch FROM clock_timestamp())') - $t;
}

# A client running one statement, started now; its application_name finds its backend.
sub start_client
{
	my ($app, $sql) = @_;
	my ($out, $err) = ('', '');
	my $c = { app => $app, out => \$out, err => \$err, t0 => now_mono() };
	$c->{h} = IPC::Run::start(
		[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres') . " application_name=$app", '-c', $sql ],
		'>', \$out, '2>', \$err);
	return $c;
}

# Waits up to `$limit` seconds for the client's end: its time (undef: no end, then killed).
sub end_of
{
	my ($c, $limit) = @_;
	while (now_mono() - $c->{t0} < $limit)
	{
		eval { $c->{h}->pump_nb };
		if (!$c->{h}->pumpable)
		{
			$c->{h}->finish;
			return now_mono() - $c->{t0};
		}
		usleep(20_000);
	}
	$c->{h}->kill_kill;
	query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '$c->{app}'");
	return undef;
}

sub behind { my $app = shift; return "SELECT position = 2 FROM sem_waiters WHERE application_name = '$app'" }

# ---- the shim reaches a sleeping backend's SIGALRM handler -------------------------------------
# Postgres' own statement_timeout, on the wall clock, for a backend asleep in the lock manager (in
# epoll_wait), as a waiter behind is: a step back of an hour holds it past its end, as a real step
# does. Without this the rest proves nothing.
{
	my ($holder) = session($node);
	$holder->query_safe('SELECT pg_advisory_lock(1)');
	my $c = start_client('sleeper', q{SET statement_timeout = '2s'; SELECT pg_advisory_lock(1)});
	ok($node->poll_query_until('postgres',
			q{SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'sleeper' AND wait_event_type = 'Lock'}),
		'(shim) a backend waits for a lock, with statement_timeout = 2s');
	set_clock_file(-3600);
	usleep(5_000_000);
	$holder->query_safe('SELECT pg_advisory_unlock(1)');
	my $took = end_of($c, 20);
	set_clock_file(0);
	ok(abs(server_offset()) < 60, "(shim) the server's clock is back on the real time");
	is(${ $c->{err} }, '', '(shim) a step back of 1 h held its statement_timeout past the 5 s it waited');
	ok(defined $took && $took > 4.5, sprintf('(shim) it got the lock after 5 s (%.2f s)', $took // -1));
	$holder->quit;
}

# ---- waiters behind the first, across a step of an hour -----------------------------------------
# A holder, a first waiter (1 minute) and one behind it with wait 4 s, which stays behind for all of
# its wait; the clock steps once the second is in line, before the deadlock_timeout alarm.
for my $case ([ +1, 'forward' ], [ -1, 'back' ])
{
	my ($hours, $dir) = @$case;
	for my $kind (qw(lease xact session))
	{
		my $name = "b-$dir-$kind";
		my ($holder) = session($node);
		$holder->query_safe("SELECT sem_claim_session('$name', 1)");
		my %sql = (
			lease   => "SELECT sem_claim('$name', 1, '1 minute', wait => '%s')",
			xact    => "SELECT sem_claim_xact('$name', 1, wait => '%s')",
			session => "SELECT sem_claim_session('$name', 1, wait => '%s')");
		my $first = start_client("first-$name", sprintf($sql{$kind}, '1 minute'));
		$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM sem_waiters WHERE name = '$name'");
		my $second = start_client("behind-$name", sprintf($sql{$kind}, '4 seconds'));
		ok($node->poll_query_until('postgres', behind("behind-$name")),
			"($dir, $kind) a waiter is behind the first");
		my $in_line = now_mono() - $second->{t0};
		set_clock_file($hours * 3600);
		my $took = end_of($second, 30);
		set_clock_file(0);
		my $err = ${ $second->{err} } =~ s/^(WARNING|DETAIL|HINT): .*\n//mgr;  # xact: "protects nothing"
		diag(sprintf('(%s, %s) in line after %.2f s; ended after %s s%s', $dir, $kind, $in_line,
			defined $took ? sprintf('%.2f', $took) : 'no end in 30', $err eq '' ? '' : ", error: $err"));
		ok($in_line < 1.8, "($dir, $kind) the step came before the deadlock_timeout alarm");
		is(${ $second->{out} } . $err, "\n", "($dir, $kind) the waiter behind got NULL");
		ok(defined $took && $took > 3.5 && $took < 12,
			sprintf("($dir, $kind) after its wait of 4 s on the monotonic clock (%s s)",
				defined $took ? sprintf('%.2f', $took) : 'no end in 30'));
		query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'first-$name'");
		end_of($first, 30);
		$holder->quit;
	}
}
ok(abs(server_offset()) < 60, "the server's clock is back on the real time");

# ---- no step: what else ends a wait behind still does, with its own error -----------------------
my ($holder) = session($node);
$holder->query_safe(q{SELECT sem_claim_session('e', 1)});
my $first = start_client('first-e', q{SELECT sem_claim('e', 1, '1 minute', wait => '1 minute')});
$node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'e'});

# Runs `$sql` in a client behind the first; `$act` (if any) once it waits. Its stderr.
sub behind_ends
{
	my ($app, $sql, $act) = @_;
	my $c = start_client($app, $sql);
	ok($node->poll_query_until('postgres', behind($app)), "($app) waits behind the first");
	query($act) if $act;
	my $took = end_of($c, 30);
	return (${ $c->{err} }, ${ $c->{out} }, $took);
}

{
	my ($err) = behind_ends('cancelled', q{SELECT sem_claim('e', 1, '1 minute', wait => '2 seconds')},
		q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'cancelled'});
	like($err, qr/canceling statement due to user request/, '(cancelled) a user cancel ends the wait with 57014');
}
{
	# A session that goes on after the cancel, past when the wait's deadline would have come.
	my ($s, $pid) = session($node);
	start($s, q{SELECT sem_claim('e', 1, '1 minute', wait => '2 seconds') AS w});
	ok($node->poll_query_until('postgres', "SELECT position = 2 FROM sem_waiters WHERE pid = $pid"),
		'(cancelled, going on) waits behind the first');
	query("SELECT pg_cancel_backend($pid)");
	finish($s);
	my $r = $s->query('SELECT 1 AS slept FROM pg_sleep(3)');
	is($r, '1', '(cancelled, going on) the session sleeps past the cancelled wait\'s deadline, uncancelled');
	$s->quit;
}
{
	my ($err) = behind_ends('statement-timeout',
		q{SET statement_timeout = '1s'; SELECT sem_claim('e', 1, '1 minute', wait => '3 seconds')});
	like($err, qr/canceling statement due to statement timeout/, '(statement-timeout) statement_timeout ends the wait with its 57014');
}
{
	my ($err) = behind_ends('lock-timeout',
		q{SET lock_timeout = '1s'; SELECT sem_claim('e', 1, '1 minute', wait => '3 seconds')});
	like($err, qr/canceling statement due to lock timeout/, '(lock-timeout) the caller\'s lock_timeout ends the wait with 55P03');
}
{
	# The deadline passes (NULL), and the transaction goes on past where a stray cancel would land.
	my ($err, $out, $took) = behind_ends('timed-out',
		q{BEGIN; SELECT sem_claim('e', 1, '1 minute', wait => '1 second') IS NULL AS timed_out; SELECT 1 AS slept FROM pg_sleep(1.5); COMMIT});
	is($err, '', '(timed-out) no error');
	is($out, "BEGIN\nt\n1\nCOMMIT\n", '(timed-out) NULL at the deadline, then the transaction goes on');
}
{
	# The caller's lock_timeout and the wait end together: 55P03, caught, and the timer fires
	# before it is disarmed. Its cancel must not reach the handler's next statement (before the
	# fix, 49-90 of 400 such handlers were cancelled with "user request").
	my $r = query(q{
		DO $$
		DECLARE strays int := 0; timeouts int := 0;
		BEGIN
			FOR i IN 1 .. 300 LOOP
				BEGIN
					PERFORM set_config('lock_timeout', '20ms', true);
					BEGIN
						PERFORM sem_claim('e', 1, '1 minute',
							wait => make_interval(secs => (20.08 + random() * 0.16) / 1000));
					EXCEPTION WHEN lock_not_available THEN
						timeouts := timeouts + 1;
						PERFORM pg_sleep(0.001);  -- the handler's own statement
					END;
				EXCEPTION WHEN query_canceled THEN
					strays := strays + 1;
				END;
			END LOOP;
			RAISE NOTICE 'strays % timeouts %', strays, timeouts;
			PERFORM set_config('pgsem_test.strays', strays::text, false);
		END $$;
		SELECT current_setting('pgsem_test.strays')});
	is($r, '0', '(lock-timeout race) no cancel reaches the statement after a caught 55P03 (300 tries)');
}
is(query(q{SELECT count(*) FROM sem_waiters WHERE name = 'e'}), '1', 'only the first waiter is left in line');
query(q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'first-e'});
end_of($first, 30);
$holder->quit;

$node->stop;
done_testing();
