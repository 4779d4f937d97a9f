# Claims are table rows and survive a crash (immediate stop, then start with crash recovery);
# claim ids come from a sequence and keep growing across the crash; a claim whose transaction
# was open at crash time vanishes; advisory locks, which live in shared memory only, are gone.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

# ---- before the crash ------------------------------------------------------------------------
my $live = query(q{SELECT sem_claim('crash-sem', 2, '1 hour')});
my $released = query(q{SELECT sem_claim('crash-sem', 2, '1 hour')});
is(query("SELECT sem_release($released)"), 't', 'a claim is released before the crash');
is(query("SELECT slot FROM sem_holders WHERE id = $live"), '0', 'the live claim holds slot 0');

# More claims than the sequence logs ahead at a time (32), each in its own transaction.
my $churned = query(join '', map { "SELECT sem_release(sem_claim('crash-churn', 1, '1 hour'));\n" }
	  1 .. 40);
is($churned, join("\n", ('t') x 40), '40 more claims are granted and released');

# A claim in a transaction still open at crash time, plus a transaction-scoped text lock.
my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
my $uncommitted = $open->query_safe(q{SELECT sem_claim('crash-open', 1, '1 hour')});
$open->query_safe(q{SELECT advisory_lock_text('crash-xact-lock')});
like($uncommitted, qr/^\d+$/, 'an uncommitted claim has an id');
is(query(q{SELECT sem_claim('crash-open', 1, '1 hour') IS NULL}),
	't', 'the uncommitted claim holds the only slot of its semaphore');

# A session-level text lock held at crash time.
my $locker = $node->background_psql('postgres');
$locker->query_safe(q{SELECT advisory_session_lock_text('crash-lock')});
is(query(q{SELECT advisory_session_try_lock_text('crash-lock')}),
	'f', 'the session text lock excludes other sessions before the crash');
is(query(q{BEGIN; SELECT advisory_try_lock_text('crash-xact-lock'); COMMIT;}),
	'f', 'the transaction text lock excludes other sessions before the crash');

my $max_before = query('SELECT max(id) FROM pgsem.claims');
cmp_ok($max_before, '>=', $live + 41, 'every claim so far got its own id');
my $log_offset = -s $node->logfile;

# ---- crash -----------------------------------------------------------------------------------
$node->stop('immediate');
# Both sessions lost their server; their psql processes exit on their own.
eval { $open->quit };
eval { $locker->quit };
$node->start;
ok( $node->log_contains(qr/database system was not properly shut down; automatic recovery/,
		$log_offset),
	'the restart ran crash recovery');

# ---- after the crash -------------------------------------------------------------------------
is(query("SELECT sem_held($live)"), 't', 'the live claim is still held after the crash');
is(query("SELECT sem_held($released)"), 'f', 'the released claim is still not held');
is( query("SELECT string_agg(id || ':' || status, ',' ORDER BY id) FROM sem_history
            WHERE id IN ($live, $released)"),
	"$live:held,$released:released",
	'sem_history shows the live claim held and the released one released');
is(query(q{SELECT count(*) FROM sem_history WHERE name = 'crash-churn' AND status = 'released'}),
	'40', 'the 40 churned claims are all still recorded as released');
is(query(q{SELECT string_agg(id::text, ',') FROM sem_holders WHERE name = 'crash-sem'}),
	$live, 'sem_holders lists only the live claim of crash-sem');

# The claim that was not committed at crash time is gone.
is(query("SELECT count(*) FROM sem_history WHERE id = $uncommitted AND name = 'crash-open'"),
	'0', 'the claim uncommitted at crash time left no row');
is(query("SELECT sem_held($uncommitted)"), 'f', 'the uncommitted claim is not held');

# The live claim still counts: one slot of two is left.
my $after1 = query(q{SELECT sem_claim('crash-sem', 2, '1 hour')});
like($after1, qr/^\d+$/, 'the free slot of crash-sem can be claimed after the crash');
is(query("SELECT slot FROM sem_holders WHERE id = $after1"), '1',
	'the new claim gets slot 1, next to the surviving claim in slot 0');
is(query(q{SELECT sem_claim('crash-sem', 2, '1 hour') IS NULL}),
	't', 'crash-sem is full: the surviving claim still holds its slot');

# Ids never go backwards or repeat, not even the id of the claim that never committed: its
# caller saw it, and may have used it as a fencing token already.
cmp_ok($after1, '>', $max_before, 'the first id after the crash is above every id before it');
cmp_ok($after1, '>', $uncommitted, 'and above the id handed out by the uncommitted claim');
my @after = split /\n/,
  query(join '', map { "SELECT sem_claim('crash-more', 10, '1 hour');\n" } 1 .. 5);
is(scalar(grep { /^\d+$/ && $_ > $max_before } @after),
	5, 'five more claims after the crash all get ids above every id before it');
is_deeply(\@after, [ sort { $a <=> $b } @after ], 'and their ids increase in claim order');
is(query('SELECT count(*) = count(DISTINCT id) FROM pgsem.claims'), 't', 'no id appears twice');

# The slot of the claim that was not committed is free.
like(query(q{SELECT sem_claim('crash-open', 1, '1 hour')}),
	qr/^\d+$/, 'the slot of the uncommitted claim is free after the crash');

# Advisory locks do not survive a crash.
is(query(q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'}),
	'0', 'no advisory lock exists after the crash');
is(query(q{SELECT advisory_session_try_lock_text('crash-lock')}),
	't', 'the session text lock held at crash time can be taken after the restart');
is(query(q{BEGIN; SELECT advisory_try_lock_text('crash-xact-lock'); COMMIT;}),
	't', 'the transaction text lock held at crash time can be taken after the restart');

# ---- a second crash right after the first ----------------------------------------------------
my $max_before2 = query('SELECT max(id) FROM pgsem.claims');
$node->stop('immediate');
$node->start;
is(query("SELECT sem_held($live), sem_held($after1)"),
	't|t', 'claims survive a second crash');
cmp_ok(query(q{SELECT sem_claim('crash-more', 10, '1 hour')}),
	'>', $max_before2, 'ids keep growing across a second crash');

# ---- an id handed out right after a checkpoint, never committed -------------------------------
# The sequence's WAL record for the batch that id comes from is the only record of it: sem_claim
# flushes it before returning, or the id could be handed out again after a crash.
query(q{SELECT sem_claim('crash-ckpt', 1, '1 hour')});
query('CHECKPOINT');
my $pending = $node->background_psql('postgres');
$pending->query_safe('BEGIN');
my $pending_id = $pending->query_safe(q{SELECT sem_claim('crash-ckpt-open', 1, '1 hour')});
like($pending_id, qr/^\d+$/, 'a claim in an open transaction right after a checkpoint has an id');
$node->stop('immediate');
eval { $pending->quit };
$node->start;
my $ckpt_after = query(q{SELECT sem_claim('crash-ckpt-after', 1, '1 hour')});
note("id before the crash: $pending_id, first id after it: $ckpt_after");
cmp_ok($ckpt_after, '>', $pending_id, 'an id handed out before commit is not handed out again after a crash');

# ---- sessions with synchronous_commit = off --------------------------------------------------
# A long WAL writer delay makes the window in which asynchronous commits are lost a wide one.
$node->append_conf('postgresql.conf', 'wal_writer_delay = 10s');
$node->restart;
query('CREATE TABLE async_control (x int)');

# crash_after_async_control: an ordinary asynchronous commit comes last, then an immediate stop
# and a start. Whatever committed before it without a WAL flush is lost, as the control shows.
sub crash_after_async_control {
	my ($case) = @_;
	query(q{SET synchronous_commit = off; INSERT INTO async_control VALUES (1);});
	$node->stop('immediate');
	$node->start;
	is(query('SELECT count(*) FROM async_control'), '0',
		"$case: control: an ordinary asynchronous commit was lost in the crash");
}

# A claim committed by a session with synchronous_commit = off is the last claim before the
# crash: nothing but pgsem's own durable commit can have flushed it.
my $async_claim = query(q{SET synchronous_commit = off; SELECT sem_claim('crash-async', 1, '1 hour');});
crash_after_async_control('async claim');
is(query("SELECT sem_held($async_claim)"), 't',
	'a claim committed with synchronous_commit = off survives the crash');

# Whatever changes synchronous_commit after the claim in the same transaction -- leaving a
# function whose SET clause asked for "on", SET LOCAL, set_config() -- the commit is durable:
# pgsem decides at commit time.
query(q{CREATE FUNCTION wrap_claim(n text) RETURNS bigint LANGUAGE sql
          SET synchronous_commit = on AS $$ SELECT sem_claim(n, 1, '1 hour') $$});
query(q{CREATE FUNCTION wrap_renew(id bigint, lease interval) RETURNS boolean LANGUAGE sql
          SET synchronous_commit = on AS $$ SELECT sem_renew(id, lease) $$});
my @shapes = (
	[ 'a function with SET synchronous_commit = on, called with it off',
		q{SET synchronous_commit = off; SELECT wrap_claim('crash-wrap');} ],
	[ 'SET LOCAL synchronous_commit = off after the claim',
		q{BEGIN; SELECT sem_claim('crash-set-local', 1, '1 hour');
		  SET LOCAL synchronous_commit = off; COMMIT;} ],
	[ 'set_config(synchronous_commit, off, true) after the claim',
		q{BEGIN; SELECT sem_claim('crash-set-config', 1, '1 hour');
		  SELECT set_config('synchronous_commit', 'off', true) IS NULL; COMMIT;} ]);
for my $shape (@shapes) {
	my ($case, $sql) = @$shape;
	my ($id) = split /\n/, query($sql);
	like($id, qr/^\d+$/, "$case: the claim is granted");
	crash_after_async_control($case);
	is(query("SELECT sem_held($id)"), 't', "$case: the claim survives the crash");
}

# A renewal through such a function keeps its new lease.
my $renewed = query(q{SELECT sem_claim('crash-renew', 1, '10 minutes')});
is(query(qq{SET synchronous_commit = off; SELECT wrap_renew($renewed, '5 hours');}),
	't', 'a renewal through a function with its own synchronous_commit is granted');
crash_after_async_control('renewal');
is( query(qq{SELECT expires_at > now() + interval '4 hours' FROM sem_holders WHERE id = $renewed}),
	't', 'the renewal survives the crash: the claim keeps its 5-hour lease');

# The release below is a transaction of its own, which pgsem commits without waiting for the
# flush; the claim after it, by another holder, commits synchronously and so flushes it too.
my $first = query(q{SELECT sem_claim('crash-handover', 1, '1 hour')});
is(query("SELECT sem_release($first)"), 't', 'the first holder releases');
my $second = query(q{SET synchronous_commit = off; SELECT sem_claim('crash-handover', 1, '1 hour')});
like($second, qr/^\d+$/, 'a second holder takes the slot');
crash_after_async_control('handover');
is(query("SELECT sem_held($first)::text || sem_held($second)::text"), 'falsetrue',
	'after the crash the slot belongs to the second holder only: the release survived too');

# A transaction that writes anything besides releases keeps its own durability: a release in
# the same statement as the write, or before it in the same transaction, changes nothing. Each
# case is the last commit before a crash, so that nothing else flushes it.
query('CREATE TABLE audit (note text, released boolean)');
my %together = (
	'same statement' => q{INSERT INTO audit VALUES ('same statement', sem_release(%d))},
	'same transaction' =>
	  q{BEGIN; SELECT sem_release(%d); INSERT INTO audit VALUES ('same transaction', true); COMMIT;},
	'cte' => q{WITH r AS (SELECT sem_release(%d) AS ok) INSERT INTO audit SELECT 'cte', ok FROM r},
	'update' => q{UPDATE audit SET released = sem_release(%d) WHERE note = 'same statement'});
for my $case (sort keys %together) {
	my $claim = query(q{SELECT sem_claim('crash-audit', 4, '1 hour')});
	query(sprintf($together{$case}, $claim));
	$node->stop('immediate');
	$node->start;
	is(query("SELECT sem_held($claim)"), 'f', "$case: the release survived the crash");
	my $note = $case eq 'update' ? 'same statement' : $case;
	is(query("SELECT count(*) FROM audit WHERE note = '$note' AND released"),
		'1', "$case: so did the write that came with it");
}

$node->stop;
done_testing();
