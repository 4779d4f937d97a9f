# pgsem on a hot standby: everything that writes the claims table or takes an advisory lock is
# refused with SQLSTATE 25006, transaction and session claims too; hashing, sem_held and the monitoring views read what the primary
# replicated; the unlock functions just report that nothing was held.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, extra => [ '--encoding=UTF8', '--locale=C' ]);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pgsem');

$primary->backup('standby_backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'standby_backup', has_streaming => 1);
$standby->start;

# Claims made after the standby started reach it through streaming replication.
my $live = $primary->safe_psql('postgres', q{SELECT sem_claim('tap-standby', 2, '1 hour')});
my $released = $primary->safe_psql('postgres', q{SELECT sem_claim('tap-standby', 2, '1 hour')});
$primary->safe_psql('postgres', "SELECT sem_release($released)");
like($live, qr/^\d+$/, 'the primary grants a claim');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

# Runs $sql on $node with verbose errors; returns (psql exit code, SQLSTATE or '', stderr).
sub run_verbose
{
	my ($node, $sql) = @_;
	my ($rc, $stdout, $stderr) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	my ($state) = $stderr =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ($rc, $state // '', $stderr);
}

# Each statement must fail with 25006 and say which function cannot run on a hot standby.
sub refused_on_standby
{
	my ($function, $sql) = @_;
	my ($rc, $state, $stderr) = run_verbose($standby, $sql);
	(my $shown = $sql) =~ s/\s*\n\s*/ /g;
	isnt($rc, 0, "$function fails on the standby: $shown");
	is($state, '25006', "$function fails with SQLSTATE 25006 (read_only_sql_transaction)");
	like($stderr, qr/\Q$function\E cannot run on a hot standby/,
		"$function says it cannot run on a hot standby");
}

# ---- semaphore functions that write ----------------------------------------------------------
refused_on_standby('sem_claim()', q{SELECT sem_claim('tap-standby', 2, '1 hour')});
refused_on_standby('sem_claim()', q{SELECT sem_claim('tap-standby-new', 1)});
refused_on_standby('sem_release()', "SELECT sem_release($live)");
refused_on_standby('sem_release()', 'SELECT sem_release(987654321)');
refused_on_standby('sem_renew()', "SELECT sem_renew($live, '1 hour')");
refused_on_standby('sem_renew()', "SELECT sem_renew($live)");
refused_on_standby('sem_fence()', "BEGIN;\nSELECT sem_fence($live);");
refused_on_standby('sem_prune_history()', 'SELECT sem_prune_history(10)');
refused_on_standby('sem_prune_history()', 'SELECT sem_prune_history()');
refused_on_standby('sem_claim()', q{SELECT sem_claim('tap-standby', 2, '1 hour', '1 second')});

# ---- transaction and session claims: they write nothing, but a lock on the standby would exclude
# nobody on the primary, so they are refused too, waits included ------------------------------
refused_on_standby('sem_claim_xact()', "BEGIN;\nSELECT sem_claim_xact('tap-standby', 2);");
refused_on_standby('sem_claim_xact()',
	"BEGIN;\nSELECT sem_claim_xact('tap-standby', 2, '1 second');");
refused_on_standby('sem_claim_session()', q{SELECT sem_claim_session('tap-standby', 2)});
refused_on_standby('sem_claim_session()',
	q{SELECT sem_claim_session('tap-standby', 2, '1 second')});

# ---- text advisory locks that take a lock ----------------------------------------------------
for my $function (
	qw(advisory_lock_text advisory_lock_text_shared
	advisory_try_lock_text advisory_try_lock_text_shared))
{
	refused_on_standby("$function()", "BEGIN;\nSELECT $function('tap-standby-lock');");
}
for my $function (
	qw(advisory_session_lock_text advisory_session_lock_text_shared
	advisory_session_try_lock_text advisory_session_try_lock_text_shared))
{
	refused_on_standby("$function()", "SELECT $function('tap-standby-lock');");
}

# A refused call leaves no advisory lock behind in that session.
{
	my ($rc, $stdout, $stderr) = $standby->psql(
		'postgres', q{
SELECT advisory_session_lock_text('tap-standby-lock');
SELECT advisory_session_try_lock_text_shared('tap-standby-lock');
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
}, on_error_stop => 0);
	is($stdout, '0', 'refused lock calls leave no advisory lock on the standby');
}

# ---- what works on a standby -----------------------------------------------------------------
my $hash_sql = q{SELECT fnv1a_64(''), fnv1a_64('a'), fnv1a_64('foobar'), fnv1a_64('ключ'),
                        fnv1a_64('\x00ff'::bytea), fnv1a_64('tap-standby-lock')};
my $on_standby = $standby->safe_psql('postgres', $hash_sql);
is($on_standby, $primary->safe_psql('postgres', $hash_sql),
	'fnv1a_64 gives the same hashes on the standby as on the primary');
is( $standby->safe_psql('postgres', q{SELECT fnv1a_64(''), fnv1a_64('a'), fnv1a_64('ключ')}),
	'-3750763034362895579|-5808556873153909620|2981718160205118081',
	'fnv1a_64 on the standby gives the reference FNV-1a values');

is($standby->safe_psql('postgres', "SELECT sem_held($live)"),
	't', 'sem_held is true on the standby for the replicated live claim');
is($standby->safe_psql('postgres', "SELECT sem_held($released)"),
	'f', 'sem_held is false on the standby for the replicated released claim');
is($standby->safe_psql('postgres', 'SELECT sem_held(987654321)'),
	'f', 'sem_held is false on the standby for an unknown claim');
is( $standby->safe_psql('postgres',
		q{SELECT string_agg(id::text, ',' ORDER BY id) FROM sem_holders WHERE name = 'tap-standby'}),
	$live,
	'sem_holders on the standby lists the replicated live claim');
is( $standby->safe_psql('postgres',
		"SELECT string_agg(status, ',' ORDER BY id) FROM sem_history WHERE id IN ($live, $released)"),
	'held,released',
	'sem_history on the standby shows the replicated claims');

for my $function (qw(advisory_session_unlock_text advisory_session_unlock_text_shared))
{
	my ($rc, $stdout, $stderr) =
	  $standby->psql('postgres', "SELECT $function('tap-standby-lock')");
	is($rc, 0, "$function() runs on the standby");
	is($stdout, 'f', "$function() returns false on the standby");
}

is($standby->safe_psql('postgres', q{SELECT sem_release_session('tap-standby', 0)}),
	'f', 'sem_release_session() runs on the standby and returns false: nothing is held there');
is( $standby->safe_psql('postgres',
		q{SELECT (SELECT count(*) FROM sem_waiters) || ',' ||
                 (SELECT live || ',' || waiting FROM sem_summary WHERE name = 'tap-standby')}),
	'0,1,0', 'sem_waiters and sem_summary can be read on the standby');

# The standby follows the primary: a release there shows here.
$primary->safe_psql('postgres', "SELECT sem_release($live)");
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is($standby->safe_psql('postgres', "SELECT sem_held($live)"),
	'f', 'sem_held on the standby turns false once the primary releases the claim');

# The refused attempts changed nothing on the primary: no extra claim was made anywhere.
is( $primary->safe_psql('postgres',
		q{SELECT count(*) FROM sem_history WHERE name LIKE 'tap-standby%'}),
	'2',
	'the primary has exactly the two claims it granted');

$standby->stop;
$primary->stop;
done_testing();
