# pgsem works with CREATE EXTENSION alone, and preloaded (shared_preload_libraries = 'pgsem'):
# claims, waits and the views behave the same either way. What preloading changes, exactly:
#  - the registry's few bytes in the main shared memory segment are reserved at startup, rather
#    than taken from the server's spare shared memory when the first session needs them;
#  - the hooks that tell nested statements apart are there from each session's first statement,
#    so that statement, which loads the library, gets the "protects nothing" WARNING right.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

for my $preloaded (0, 1)
{
	my $how = $preloaded ? 'preloaded' : 'not preloaded';
	my $node = PostgreSQL::Test::Cluster->new($preloaded ? 'preloaded' : 'loaded');
	$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pgsem'") if $preloaded;
	$node->start;
	sub query { my ($n, $sql) = @_; return $n->safe_psql('postgres', $sql) }

	is(query($node, q{SELECT count(*) FROM pg_shmem_allocations WHERE name = 'pgsem'}),
		$preloaded ? '1' : '0', "$how: the registry's bytes are reserved at startup only when preloaded");
	query($node, 'CREATE EXTENSION pgsem');

	# The first statement of a session, a DO block whose lock protects the rest of the block.
	my ($ret, $out, $err) = $node->psql('postgres',
		q{DO $$ BEGIN PERFORM advisory_lock_text('first statement'); END $$});
	if ($preloaded)
	{
		is($err, '', "$how: no WARNING for a lock inside a DO block, even in the first statement");
	}
	else
	{
		like($err, qr/protects nothing/,
			"$how: the statement that loads the library cannot tell it is nested (documented)");
	}
	($ret, $out, $err) = $node->psql('postgres',
		q{SELECT sem_held(0); DO $$ BEGIN PERFORM advisory_lock_text('second'); END $$});
	is($err, '', "$how: once the library is loaded, a lock inside a DO block draws no WARNING");

	# A session claim, a waiter for it, and what the views show.
	my $holder = $node->background_psql('postgres');
	is($holder->query_safe(q{SELECT sem_claim_session('pre', 1)}), '0', "$how: a session claim");
	my $waiter = $node->background_psql('postgres');
	$waiter->query_until(qr/started/,
		"\\echo started\nSELECT sem_claim_xact('pre', 1, '1 minute') AS got;\n");
	ok($node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM sem_waiters}),
		"$how: the waiter is in line");
	is( query($node,
			q{SELECT name || ',' || n || ',' || kind || ',' || position FROM sem_waiters}),
		'pre,1,transaction,1', "$how: sem_waiters names the semaphore, n, kind and position");
	is(query($node, q{SELECT name || ',' || slot || ',' || kind FROM sem_holders}),
		'pre,0,session', "$how: sem_holders names the session claim");
	is(query($node, q{SELECT live || ',' || session_claims || ',' || waiting FROM sem_summary}),
		'1,1,1', "$how: sem_summary counts the holder and the waiter");
	is(query($node, q{SELECT count(*) FROM pg_shmem_allocations WHERE name = 'pgsem'}), '1',
		"$how: the registry's bytes are in the main segment now");
	$holder->query_safe(q{SELECT sem_release_session('pre', 0)});
	like($waiter->query('SELECT 1'), qr/^0\n1$/, "$how: the release hands the slot to the waiter");
	$holder->quit;
	$waiter->quit;
	$node->stop;
}

done_testing();
