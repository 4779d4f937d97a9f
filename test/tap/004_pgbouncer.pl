# pgsem behind pgbouncer. In transaction pooling consecutive transactions of one client may run on
# different server sessions: leases are rows, not session state, so one made in one transaction
# can be released in a later one on another server session; transaction claims, waits,
# transaction-level text locks and fences work inside BEGIN..COMMIT and end with the transaction;
# session claims are unsafe (shown below). In session pooling, session claims work and end when
# the client leaves, by the pooler's reset query. In statement pooling, leases and waits work and
# transaction blocks are refused by the pooler.
use strict;
use warnings;

use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my ($pgbouncer) = grep { -x $_ }
  map { File::Spec->catfile($_, 'pgbouncer') }
  (split(/:/, $ENV{PATH} // ''), '/usr/sbin', '/usr/local/sbin', '/usr/local/bin');
plan skip_all => 'pgbouncer is not installed' unless defined $pgbouncer;

# The node listens on loopback TCP for pgbouncer, and on its Unix socket for everything else.
my $node = PostgreSQL::Test::Cluster->new('pooled');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "listen_addresses = '127.0.0.1'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');
$node->safe_psql('postgres', 'CREATE TABLE guarded (claim bigint, note text)');
my $user = $node->safe_psql('postgres', 'SELECT current_user');

# ---- pgbouncer -------------------------------------------------------------------------------
# Clients reach the node through pgbouncer: a Cluster whose connection string names the pooler,
# so that psql, safe_psql and background_psql all go through it.
package ViaBouncer
{
	our @ISA = ('PostgreSQL::Test::Cluster');

	sub connstr
	{
		my ($self) = @_;
		return "host=127.0.0.1 port=$self->{_bouncer_port} dbname=pgsemdb";
	}
}

my @bouncers;
END { $_->kill_kill(grace => 5) for @bouncers; }

# Starts a pgbouncer in front of the node in the given pool mode, with its defaults otherwise
# (in session mode: server_reset_query = DISCARD ALL when a client leaves); returns a ViaBouncer
# and the pooler's port.
sub start_bouncer
{
	my ($mode) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	my $bouncer_port = PostgreSQL::Test::Cluster::get_free_port();
	my $node_port = $node->port;
	PostgreSQL::Test::Utils::append_to_file("$dir/userlist.txt", qq{"$user" ""\n});
	PostgreSQL::Test::Utils::append_to_file(
		"$dir/pgbouncer.ini", qq{[databases]
pgsemdb = host=127.0.0.1 port=$node_port dbname=postgres user=$user

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = any
auth_file = $dir/userlist.txt
admin_users = $user
pool_mode = $mode
default_pool_size = 4
max_client_conn = 50
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
});
	my $bouncer_out = '';
	push @bouncers, IPC::Run::start([ $pgbouncer, "$dir/pgbouncer.ini" ],
		'<', \undef, '>&', \$bouncer_out);
	my $via = bless { %$node, _bouncer_port => $bouncer_port }, 'ViaBouncer';
	my $up = 0;
	for (1 .. 100)
	{
		my ($rc, $out) = $via->psql('pgsemdb', 'SELECT 1');
		if ($rc == 0 && $out eq '1') { $up = 1; last; }
		usleep(100_000);
	}
	if (!$up)
	{
		$bouncers[-1]->pump_nb;
		diag "pgbouncer output:\n$bouncer_out";
		diag "pgbouncer log:\n" . slurp_file("$dir/pgbouncer.log") if -e "$dir/pgbouncer.log";
		die 'pgbouncer did not come up';
	}
	ok(1, "pgbouncer ($mode pooling) listens on 127.0.0.1:$bouncer_port");
	my ($rc, $out, $err) = $node->psql('pgbouncer', 'SHOW CONFIG',
		connstr => "host=127.0.0.1 port=$bouncer_port dbname=pgbouncer user=$user");
	like($out, qr/^pool_mode\|$mode\|/m, "its console reports $mode pooling");
	return ($via, $bouncer_port);
}

my ($via, $bouncer_port) = start_bouncer('transaction');

sub direct { return $node->safe_psql('postgres', shift) }
sub pooled { return $via->safe_psql('pgsemdb', shift) }

# Runs $sql through the pooler with verbose errors; returns (SQLSTATE or '', stderr).
sub pooled_error
{
	my ($sql) = @_;
	my ($rc, $out, $err) = $via->psql('pgsemdb', "\\set VERBOSITY verbose\n$sql");
	my ($state) = $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ($state // '', $err);
}

is(direct(q{SELECT count(*) > 0 FROM pg_stat_activity WHERE client_addr = '127.0.0.1'}),
	't', 'the pooler holds server connections to the node over loopback TCP');

# ---- a claim is not bound to a server session --------------------------------------------------
{
	my $id = pooled(q{SELECT sem_claim('bouncer-sem', 1, '1 hour')});
	like($id, qr/^\d+$/, 'a claim is made through the pooler');
	is(pooled(q{SELECT sem_claim('bouncer-sem', 1, '1 hour') IS NULL}),
		't', 'a second client through the pooler finds the semaphore full');
	is(pooled("SELECT sem_release($id)"), 't',
		'the claim is released through the pooler in a later transaction');
	is(direct("SELECT sem_held($id)"), 'f', 'and is no longer held');
}
{
	my $id = pooled(q{SELECT sem_claim('bouncer-sem', 1, '1 hour')});
	my $holder = direct("SELECT pid FROM sem_holders WHERE id = $id");
	is( direct("SELECT count(*) FROM pg_stat_activity
                 WHERE pid = $holder AND client_addr = '127.0.0.1'"),
		'1',
		'the claim records the pooled server session that made it');
	# End that server session: the pooler opens another one for the next transaction.
	is(direct("SELECT pg_terminate_backend($holder, 30000)"),
		't', 'the server session that made the claim is terminated');
	my $served = 0;
	for (1 .. 50)
	{
		my ($rc, $out) = $via->psql('pgsemdb', "SELECT pg_backend_pid() <> $holder");
		if ($rc == 0 && $out eq 't') { $served = 1; last; }
		usleep(100_000);
	}
	ok($served, 'the pooler serves the next transaction from another server session');
	is(pooled("SELECT sem_held($id), sem_release($id), pg_backend_pid() <> $holder"),
		't|t|t', 'the claim outlives its server session and is released from another one');
	like(pooled(q{SELECT sem_claim('bouncer-sem', 1, '1 hour')}),
		qr/^\d+$/, 'its slot can be claimed again');
}

# ---- advisory_lock_text inside BEGIN..COMMIT -----------------------------------------------------
{
	my $key_match = q{locktype = 'advisory' AND objsubid = 1
                      AND ((classid::bigint << 32) | objid::bigint) = fnv1a_64('bouncer-lock')};
	my $a = $via->background_psql('pgsemdb');
	$a->query_safe('BEGIN');
	$a->query_safe(q{SELECT advisory_lock_text('bouncer-lock')});
	my $a_pid = $a->query_safe('SELECT pg_backend_pid()');
	is(direct("SELECT count(*) FROM pg_locks WHERE $key_match AND granted AND pid = $a_pid"),
		'1', 'a client holds advisory_lock_text through the pooler inside BEGIN');
	is(pooled(q{BEGIN; SELECT advisory_try_lock_text('bouncer-lock'); COMMIT;}),
		'f', 'a second client through the pooler cannot take it');
	my ($state) = pooled_error(q{BEGIN;
SET LOCAL lock_timeout = '300ms';
SELECT advisory_lock_text('bouncer-lock');});
	is($state, '55P03', 'a second client waiting for it gets a lock timeout');
	$a->query_safe('COMMIT');
	$a->quit;
	is(direct("SELECT count(*) FROM pg_locks WHERE $key_match"),
		'0', 'the lock ends with the transaction: nothing stays on the pooled server session');
	is(pooled(q{BEGIN; SELECT advisory_try_lock_text('bouncer-lock'); COMMIT;}),
		't', 'after COMMIT the second client takes it');
}

# ---- sem_fence inside one transaction -------------------------------------------------------
{
	my $id = pooled(q{SELECT sem_claim('bouncer-fence', 1, '1 hour')});
	my ($rc, $out, $err) = $via->psql(
		'pgsemdb', "BEGIN;
SELECT sem_fence($id);
INSERT INTO guarded VALUES ($id, 'first');
COMMIT;");
	is($rc, 0, 'sem_fence and the write it guards commit in one transaction through the pooler');
	is($err, '', 'without any warning');

	my $a = $via->background_psql('pgsemdb');
	$a->query_safe('BEGIN');
	$a->query_safe("SELECT sem_fence($id)");
	my ($state) = pooled_error("BEGIN;
SET LOCAL lock_timeout = '300ms';
SELECT sem_release($id);");
	is($state, '55P03', 'while a transaction fences the claim, a release from another client waits');
	$a->query_safe("INSERT INTO guarded VALUES ($id, 'second')");
	$a->query_safe('COMMIT');
	$a->quit;
	is(pooled("SELECT sem_release($id)"), 't', 'after the fencing transaction commits, the release goes through');
	is(direct("SELECT string_agg(note, ',' ORDER BY note) FROM guarded WHERE claim = $id"),
		'first,second', 'both fenced writes committed');
	($state) = pooled_error("BEGIN;\nSELECT sem_fence($id);");
	is($state, '55000', 'sem_fence on the released claim fails (object_not_in_prerequisite_state)');

	# Outside BEGIN the fence ends with its own statement: pgsem warns, which matters most in
	# transaction pooling, where nothing ties two statements together.
	my $id2 = pooled(q{SELECT sem_claim('bouncer-fence', 1, '1 hour')});
	($rc, $out, $err) = $via->psql('pgsemdb', "SELECT sem_fence($id2)");
	like($err, qr/WARNING:.*sem_fence\(\) outside a transaction block protects nothing/,
		'sem_fence outside a transaction block warns through the pooler');
}

# ---- transaction claims and waits through transaction pooling ---------------------------------
{
	my $a = $via->background_psql('pgsemdb');
	$a->query_safe('BEGIN');
	is($a->query_safe(q{SELECT sem_claim_xact('bouncer-xact', 1)}),
		'0', 'a transaction claim inside BEGIN through the pooler');
	is(pooled(q{BEGIN; SELECT sem_claim_xact('bouncer-xact', 1) IS NULL; COMMIT;}),
		't', 'another client through the pooler finds the semaphore full');
	# A waiter keeps its server session for as long as it waits.
	my $w = $via->background_psql('pgsemdb');
	$w->query_until(qr/started/,
		"\\echo started\nBEGIN;\nSELECT sem_claim_xact('bouncer-xact', 1, '1 minute') AS got;\n");
	ok( $node->poll_query_until(
			'postgres', q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'bouncer-xact'}),
		'a client waits in line through the pooler');
	$a->query_safe('COMMIT');
	like($w->query('SELECT 1'), qr/^0\n1$/, "the holder's COMMIT hands the slot to the waiter");
	$w->query_safe('COMMIT');
	is(direct(q{SELECT count(*) FROM sem_holders WHERE name = 'bouncer-xact'}),
		'0', 'transaction claims leave nothing on the pooled server sessions');
	$a->quit;
	$w->quit;
}

# ---- session claims through transaction pooling: unsafe, and why --------------------------------
{
	my $c = $via->background_psql('pgsemdb');
	is($c->query_safe(q{SELECT sem_claim_session('bouncer-session', 1)}),
		'0', 'a session claim through transaction pooling is taken by whichever server session ran it');
	my $server = direct(q{SELECT pid FROM sem_holders WHERE name = 'bouncer-session'});
	$c->quit;
	is(direct("SELECT count(*) FROM pg_stat_activity WHERE pid = $server"),
		'1', 'the client left; the pooler keeps that server session for others');
	is( direct(
			q{SELECT count(*) FROM sem_holders WHERE name = 'bouncer-session' AND kind = 'session'}),
		'1',
		'UNSAFE: the slot stays held by the pooled server session, with no client to release it');
	is(direct("SELECT pg_terminate_backend($server, 30000)"),
		't', 'ending that server session frees it (as would the pooler closing it)');
	ok( $node->poll_query_until(
			'postgres', q{SELECT count(*) = 0 FROM sem_holders WHERE name = 'bouncer-session'}),
		'and then the slot is free');
}

# ---- session claims through session pooling --------------------------------------------------
my ($session_via) = start_bouncer('session');
{
	my $c = $session_via->background_psql('pgsemdb');
	is($c->query_safe(q{SELECT sem_claim_session('bouncer-pinned', 1)}),
		'0', 'session pooling: a session claim');
	my $server = $c->query_safe('SELECT pg_backend_pid()');
	is($c->query_safe(q{SELECT count(*) FROM sem_holders WHERE name = 'bouncer-pinned'}),
		'1', 'session pooling: held across transactions of the client');
	my $w = $session_via->background_psql('pgsemdb');
	$w->query_until(qr/started/,
		"\\echo started\nSELECT sem_claim_session('bouncer-pinned', 1, '1 minute') AS got;\n");
	ok( $node->poll_query_until(
			'postgres', q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'bouncer-pinned'}),
		'session pooling: another client waits for it');
	$c->quit;
	like($w->query('SELECT 1'), qr/^0\n1$/,
		"session pooling: when the client leaves, the pooler's DISCARD ALL frees its session claim and the waiter gets the slot");
	is(direct("SELECT count(*) FROM pg_stat_activity WHERE pid = $server"),
		'1', 'session pooling: while the server session lives on in the pool');
	is($w->query_safe(q{SELECT sem_release_session('bouncer-pinned', 0)}),
		't', 'session pooling: the new holder releases it');
	$w->quit;
}

# ---- statement pooling: every statement on its own ------------------------------------------
my ($statement_via) = start_bouncer('statement');
{
	sub by_statement { return $statement_via->safe_psql('pgsemdb', shift) }
	my $id = by_statement(q{SELECT sem_claim('bouncer-statement', 1, '1 hour')});
	like($id, qr/^\d+$/, 'statement pooling: a lease is taken');
	is(by_statement(q{SELECT sem_claim('bouncer-statement', 1, '1 hour') IS NULL}),
		't', 'statement pooling: and holds its slot');
	my $w = $statement_via->background_psql('pgsemdb');
	$w->query_until(qr/started/,
		"\\echo started\nSELECT sem_claim('bouncer-statement', 1, '1 hour', '1 minute') > 0 AS got;\n");
	ok( $node->poll_query_until(
			'postgres', q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'bouncer-statement'}),
		'statement pooling: a claim waits in line');
	is(by_statement("SELECT sem_release($id)"), 't', 'statement pooling: the lease is released');
	like($w->query('SELECT 1'), qr/^t\n1$/, 'statement pooling: and the waiter gets the slot');
	$w->quit;
	my ($rc, $out, $err) = $statement_via->psql('pgsemdb',
		"BEGIN;\nSELECT sem_claim_xact('bouncer-statement', 2);\nCOMMIT;");
	like($err, qr/transaction blocks not allowed in statement pooling mode/,
		'statement pooling: BEGIN is refused, so sem_claim_xact, sem_fence and transaction-level locks cannot be used');
	($rc, $out, $err) = $statement_via->psql('pgsemdb',
		"SELECT sem_claim_xact('bouncer-statement', 2)");
	like($err, qr/WARNING:.*protects nothing/,
		'statement pooling: sem_claim_xact on its own warns that it protects nothing');
	direct(q{SELECT count(sem_release(id)) FROM sem_holders WHERE name = 'bouncer-statement'});
}

$_->kill_kill(grace => 5) for @bouncers;
@bouncers = ();
$node->stop;
done_testing();
