# Clock steps: the server's wall clock (CLOCK_REALTIME) is moved an hour forward and an hour back
# while claims are held and waited for, as an NTP step or an operator's `date -s` moves it, and
# the README's table "Clock steps" is checked row by row. The server runs under libfaketime,
# preloaded into the postmaster (and so into every backend), which reads its offset from a file
# on each call (FAKETIME_NO_CACHE): writing "+1h" there steps the clock of the running server.
# FAKETIME_DONT_FAKE_MONOTONIC leaves CLOCK_MONOTONIC alone, as a real step does. This script's
# own process is not faked: it measures with CLOCK_MONOTONIC how long each wait took.
#
# What a step must not do: end a wait early or late (first waiter and waiters behind it, for
# leases, transaction and session claims), give a semaphore more than n holders, or reuse a
# fencing id. What it does by design (leases, rate windows, buckets and history are timestamps
# on the server's clock): forward, leases run out, windows and buckets refill and history ages
# at once; back, they all last an hour longer.
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

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
# Without it this script proves nothing: that is a failure (run-all.sh installs libfaketime).
if (!ok(-r $libfaketime, "libfaketime is installed ($libfaketime)"))
{
	done_testing();
	exit;
}

my $node = PostgreSQL::Test::Cluster->new('clock_steps');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "max_connections = 40\n");
my $clock_file = $node->basedir . '/faketime.rc';
set_clock_file('+0');
{
	local $ENV{LD_PRELOAD} = $libfaketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $clock_file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }
sub now_mono { return clock_gettime(CLOCK_MONOTONIC) }

# Prunes the history in a session of its own with `$settings` (the claimers around prune with the
# defaults, which keep everything this script makes).
sub prune { my $settings = shift; return query("$settings; SELECT sem_prune_history()") }

# Written whole and renamed, so that no backend reads a half-written offset.
sub set_clock_file
{
	my $offset = shift;
	open(my $fh, '>', "$clock_file.new") or die "cannot write $clock_file.new: $!";
	print $fh "$offset\n";
	close $fh;
	rename("$clock_file.new", $clock_file) or die "cannot rename to $clock_file: $!";
	return;
}

# The server's clock minus this process's, in seconds.
sub server_offset
{
	my $t = Time::HiRes::time();
	return query('SELECT extract(epoch FROM clock_timestamp())') - $t;
}

# Steps the server's clock to `$hours` hours from the real time, and checks it did.
sub step_to
{
	my ($hours, $what) = @_;
	set_clock_file(sprintf('%+ds', $hours * 3600));
	my $offset = server_offset();
	ok(abs($offset - $hours * 3600) < 60, sprintf("%s: the server's clock is %+.0f s off", $what, $offset));
	return;
}

is(sprintf('%.0f', server_offset() / 60), '0', 'the server starts on the real time');

# ---- leases, renewal, fencing ids ---------------------------------------------------------------

# When a lease of `$seconds` taken now stops being held, measured here: a step in between at
# `$step_at` seconds (monotonic) to `$hours`. Gives up after `$limit` seconds (returns undef).
sub lease_held_for
{
	my ($name, $seconds, $step_at, $hours, $limit) = @_;
	my $id = query("SELECT sem_claim('$name', 1, '$seconds seconds')");
	my $t0 = now_mono();
	my $stepped = 0;
	while (now_mono() - $t0 < $limit)
	{
		if (!$stepped && now_mono() - $t0 >= $step_at)
		{
			set_clock_file(sprintf('%+ds', $hours * 3600));
			$stepped = 1;
		}
		return (now_mono() - $t0, $id) if query("SELECT sem_held($id)") eq 'f';
		usleep(50_000);
	}
	return (undef, $id);
}

{
	my ($held, $id) = lease_held_for('lease-fwd', 10, 1, +1, 15);
	ok(defined $held && $held < 8,
		sprintf('(leases) a step forward of 1 h, 1 s after the claim, ends a lease of 10 s then (held %.2f s)', $held // -1));
	is(query(q{SELECT sem_claim('lease-fwd', 1, '1 minute') > 0}), 't',
		'(leases) its slot goes to the next claimer');
	is(query("SELECT sem_renew($id)"), 'f', '(leases) its renewal is refused: the claim is lost');
	is(query(q{SELECT count(*) FROM sem_history WHERE name = 'lease-fwd' AND status = 'held'}), '1',
		'(leases) one holder, never two');
	step_to(0, '(leases) back to the real time');
	query(q{SELECT sem_release(id) FROM sem_holders WHERE name = 'lease-fwd'});
}
{
	my $before = query(q{SELECT sem_claim('ids', 2, '1 second')});
	my ($held, $id) = lease_held_for('lease-back', 3, 1, -1, 8);
	ok(!defined $held, '(leases) a step back of 1 h stretches a lease of 3 s: still held after 8 s');
	is(query(q{SELECT sem_claim('lease-back', 1, '1 minute')}), '',
		'(leases) and its slot is not free for others');
	is(query("SELECT sem_renew($id, '2 seconds')"), 't', '(leases) a renewal after the step succeeds');
	my $t0 = now_mono();
	my $ended;
	while (now_mono() - $t0 < 10)
	{
		if (query("SELECT sem_held($id)") eq 'f') { $ended = now_mono() - $t0; last }
		usleep(50_000);
	}
	ok(defined $ended && $ended > 1.5 && $ended < 10,
		sprintf('(leases) and the renewed lease of 2 s ends 2 s later, on the new clock (%.2f s)', $ended // -1));
	my $after = query(q{SELECT sem_claim('ids', 2, '1 second')});
	cmp_ok($after, '>', $before, '(fencing ids) a claim after the step back has a higher id');
	is( query(
			"SELECT (SELECT claimed_at FROM pgsem.claims WHERE id = $after)"
			  . " < (SELECT claimed_at FROM pgsem.claims WHERE id = $before)"),
		't', '(fencing ids) though its claimed_at is earlier');
	is(query(q{SELECT count(*) FROM (SELECT id FROM pgsem.claims GROUP BY id HAVING count(*) > 1) d}),
		'0', '(fencing ids) no id was given twice');
	step_to(0, '(leases) back to the real time');
}

# ---- history, buckets, pauses, transaction and session claims -----------------------------------

{
	query(q{SELECT sem_release(sem_claim('hist', 1))});
	query(q{SELECT sem_pause('paused', now() + interval '10 minutes')});
	query(q{SELECT sem_bucket('bucket-fwd', 1, '10 minutes')});
	my ($xact) = session($node);
	my ($sess) = session($node);
	$xact->query_safe(q{BEGIN; SELECT sem_claim_xact('xact-held', 1)});
	$sess->query_safe(q{SELECT sem_claim_session('session-held', 1)});
	step_to(+1, '(history) a step forward');
	prune(q{SET pgsem.history_retention = '30min'});
	is(query(q{SELECT count(*) FROM pgsem.claims WHERE name = 'hist'}), '0',
		'(history) a claim ended a moment ago is 1 h old now: pruned past a retention of 30 minutes');
	is(query(q{SELECT sem_claim_xact('paused', 1) IS NOT NULL}), 't', '(pauses) a pause of 10 minutes has ended');
	is(query(q{SELECT sem_bucket('bucket-fwd', 1, '10 minutes')}), 't', '(buckets) an empty bucket is full again');
	is(query(q{SELECT sem_claim_xact('xact-held', 1) IS NULL AND sem_claim_session('session-held', 1) IS NULL}),
		't', '(transaction and session claims) still held after the step forward');
	query(q{SELECT sem_bucket('bucket-back', 1, '2 seconds')});
	step_to(-1, '(history) a step back of 2 h');
	is(query(q{SELECT sem_claim_xact('xact-held', 1) IS NULL AND sem_claim_session('session-held', 1) IS NULL}),
		't', '(transaction and session claims) still held after the step back');
	$xact->query_safe('COMMIT');
	$sess->quit;
	$xact->quit;
	usleep(2_500_000);
	is(query(q{SELECT sem_bucket('bucket-back', 1, '2 seconds')}), 'f',
		'(buckets) a bucket emptied before a step back stays empty: its refill time is 1 h ahead');
	step_to(0, '(history) back to the real time');

	my $kept = query(q{SELECT sem_claim('hist-kept', 1)});
	query("SELECT sem_release($kept)");
	step_to(-1, '(history) a step back');
	usleep(1_500_000);
	prune(q{SET pgsem.history_retention = '1s'});
	is(query(q{SELECT count(*) FROM pgsem.claims WHERE name = 'hist-kept'}), '1',
		'(history) after a step back, a claim ended 1.5 s ago (retention 1 s) is kept');
	# The cap counts ids: the newest stay, the one claimed after the step back too, though its
	# times are the earliest.
	my $after = query(q{SELECT sem_claim('hist-cap', 1)});
	query("SELECT sem_release($after)");
	step_to(0, '(history) back to the real time');
	prune(q{SET pgsem.history_retention = -1; SET pgsem.history_max_claims = 2});
	is(query(q{SELECT string_agg(id::text, ',' ORDER BY id) FROM pgsem.claims WHERE ended_at IS NOT NULL}),
		"$kept,$after", '(history) once the clock has caught up, the newest 2 ids are kept, the one with the earliest times too');
}

# ---- waits in line -----------------------------------------------------------------------------

# A client that waits in line: psql running one statement, started now. Its own application_name
# finds its backend.
sub start_waiter
{
	my ($app, $sql) = @_;
	my ($out, $err) = ('', '');
	my $w = { app => $app, out => \$out, err => \$err, t0 => now_mono() };
	$w->{h} = IPC::Run::start(
		[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres') . " application_name=$app", '-c', $sql ],
		'>', \$out, '2>', \$err);
	return $w;
}

sub waiting { my $app = shift; return "SELECT count(*) = 1 FROM sem_waiters WHERE application_name = '$app'" }

# Holders of one slot each, and two waiters per kind: one first in line that waits 8 s and one
# behind it that waits 4 s (it stays behind for all of its wait). The clock steps by `$hours`
# 1.5 s into the waits. Returns each waiter's time (undef: still waiting after 30 s, then ended)
# and what it got.
sub waits_across_step
{
	my ($hours, $dir) = @_;
	my ($xact_holder) = session($node);
	my ($session_holder) = session($node);
	query("SELECT sem_claim('w-$dir-lease', 1, '1 day')");
	$xact_holder->query_safe("BEGIN; SELECT sem_claim_xact('w-$dir-xact', 1)");
	$session_holder->query_safe("SELECT sem_claim_session('w-$dir-session', 1)");
	# A rate window and a bucket, used up, with a waiter each.
	query("SELECT sem_rate('w-$dir-rate', 1, '30 seconds')");
	query("SELECT sem_bucket('w-$dir-bucket', 1, '30 seconds')");

	my %sql = (
		lease   => "sem_claim('w-$dir-lease', 1, '1 minute', wait => '%s')",
		xact    => "sem_claim_xact('w-$dir-xact', 1, wait => '%s')",
		session => "sem_claim_session('w-$dir-session', 1, wait => '%s')");
	my @waiters;
	for my $kind (qw(lease xact session))
	{
		my $app = "first-$dir-$kind";
		push @waiters, start_waiter($app, 'SELECT ' . sprintf($sql{$kind}, '8 seconds'));
		$waiters[-1]{wait} = 8;
		ok($node->poll_query_until('postgres', waiting($app)), "($dir) $app waits first in line");
	}
	for my $kind (qw(rate bucket))
	{
		my $app = "first-$dir-$kind";
		push @waiters,
		  start_waiter($app, "SELECT sem_$kind('w-$dir-$kind', 1, '30 seconds', wait => '8 seconds')");
		$waiters[-1]{wait} = 8;
		ok($node->poll_query_until('postgres', waiting($app)), "($dir) $app waits first in line");
	}
	for my $kind (qw(lease xact session))
	{
		my $app = "behind-$dir-$kind";
		push @waiters, start_waiter($app, 'SELECT ' . sprintf($sql{$kind}, '4 seconds'));
		$waiters[-1]{wait} = 4;
		ok( $node->poll_query_until(
				'postgres',
				"SELECT position = 2 FROM sem_waiters WHERE application_name = '$app'"),
			"($dir) $app waits second in line");
	}

	my $started = now_mono();
	my $stepped = 0;
	my $most_holders = 0;
	while (now_mono() - $started < 30 && grep { !defined $_->{took} } @waiters)
	{
		if (!$stepped && now_mono() - $waiters[-1]{t0} >= 1.5)
		{
			set_clock_file(sprintf('%+ds', $hours * 3600));
			$stepped = 1;
		}
		for my $w (grep { !defined $_->{took} } @waiters)
		{
			eval { $w->{h}->pump_nb };
			next if $w->{h}->pumpable;
			$w->{took} = now_mono() - $w->{t0};
			$w->{h}->finish;
		}
		# Capacity as the server sees it: the semaphores' holders (leases the server's clock says
		# are live, transaction and session claims from the lock manager).
		my $holders = query(q{SELECT coalesce(max(c), 0) FROM (
			SELECT count(*) AS c FROM sem_holders WHERE name LIKE 'w-%' GROUP BY name) h});
		$most_holders = $holders if $holders > $most_holders;
		usleep(20_000);
	}
	for my $w (grep { !defined $_->{took} } @waiters)
	{
		$w->{h}->kill_kill;
		query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '$w->{app}'");
	}
	is($most_holders, 1, "($dir) no semaphore had more than its 1 holder while they waited");
	$xact_holder->query_safe('COMMIT');
	$xact_holder->quit;
	$session_holder->quit;
	step_to(0, "($dir) back to the real time");
	return map { $_->{app} => [ $_->{took}, ${ $_->{out} }, $_->{wait}, ${ $_->{err} } ] } @waiters;
}

for my $case ([ +1, 'forward' ], [ -1, 'back' ])
{
	my ($hours, $dir) = @$case;
	my %got = waits_across_step($hours, $dir);
	for my $app (sort keys %got)
	{
		my ($took, $out, $wait, $err) = @{ $got{$app} };
		chomp $out;
		my $kind = $app =~ s/^\w+-\w+-//r;
		diag(sprintf('%s: %s after %s s (wait %d s)%s', $app, $out eq '' ? 'NULL' : $out,
			defined $took ? sprintf('%.2f', $took) : 'no end', $wait, $err eq '' ? '' : " error: $err"));
		# A window or bucket refilled by a step forward grants at the step: by design (README).
		if ($dir eq 'forward' && ($kind eq 'rate' || $kind eq 'bucket'))
		{
			is($out, 't', "($dir) $app: the step refilled the window, granted");
			ok(defined $took && $took < $wait - 2, sprintf("($dir) $app: at the step (%.2f s)", $took // -1));
			next;
		}
		my $expected = ($kind eq 'rate' || $kind eq 'bucket') ? 'f' : '';
		is($out, $expected, "($dir) $app got nothing: the slot stayed held");
		# On time as this client's monotonic clock measures it: not before the wait, and after it
		# by no more than starting psql and a loaded machine add -- far less than the hour a
		# deadline on the wall clock moves by (a step forward ended such waits at the step).
		ok(defined $took && $took > $wait - 0.5 && $took < $wait + 12,
			sprintf("($dir) $app ended on time (%s s for a wait of %d s)",
				defined $took ? sprintf('%.2f', $took) : 'no end in 30', $wait));
	}
}

$node->stop;
done_testing();
