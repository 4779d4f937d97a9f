# Failover on Postgres' own streaming replication (issue 23). A primary with a synchronous
# standby grants claims; the primary is killed (immediate stop, no shutdown checkpoint) and the
# standby promoted. On the new primary every claim granted before the kill is held, with the id
# and the expiry the client was given, and expires on time; a renewal and a release acknowledged
# before the kill hold too; ids drawn after the promotion are greater than every id handed out
# before. Then the same with an asynchronous standby that falls behind (its WAL receiver
# stopped): claims acknowledged after it fell behind are gone after the promotion, and their ids
# are handed out again -- what the README says an asynchronous standby can lose.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ---- (a) a synchronous standby: nothing acknowledged is lost -----------------------------------
my $primary = PostgreSQL::Test::Cluster->new('failover_primary');
$primary->init(allows_streaming => 1, extra => [ '--encoding=UTF8', '--locale=C' ]);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pgsem');
$primary->backup('sync_backup');
my $standby = PostgreSQL::Test::Cluster->new('failover_standby');
$standby->init_from_backup($primary, 'sync_backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', "cluster_name = 'failover_standby'\n");
$standby->start;
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'failover_standby'\n");
$primary->reload;
ok( $primary->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'}),
	'(a) the standby is synchronous');

# Claims of every lease kind the test can read back: a plain lease, one of 3 permits, a set, a
# lease renewed to an hour, one released, a rate grant. The client records what it was given.
my $q = sub { return $primary->safe_psql('postgres', shift) };
my $short = $q->(q{SELECT sem_claim('fo.short', 2, '3 seconds')});
my $long = $q->(q{SELECT sem_claim('fo.long', 2, '1 hour')});
my $three = $q->(q{SELECT sem_claim('fo.three', 5, '1 hour', permits => 3)});
my $set = $q->(q{SELECT array_to_string(sem_claim_all(ARRAY['fo.a', 'fo.b'], ARRAY[1, 1], '1 hour'), ',')});
my $renewed = $q->(q{SELECT sem_claim('fo.renew', 2, '2 seconds')});
$q->("SELECT sem_renew($renewed, '1 hour')");
my $released = $q->(q{SELECT sem_claim('fo.release', 1, '1 hour')});
is($q->("SELECT sem_release($released)"), 't', '(a) a release is acknowledged');
is($q->(q{SELECT sem_rate('fo.rate', 1, '1 hour')}), 't', '(a) a rate grant is made');
my $expiries = $q->(q{SELECT string_agg(id || '=' || expires_at, ',' ORDER BY id, slot)
                        FROM sem_holders WHERE kind = 'lease'});
my $max_id = $q->(q{SELECT max(id) FROM sem_history});

$primary->stop('immediate');
$standby->promote;
my $s = sub { return $standby->safe_psql('postgres', shift) };
is($s->('SELECT pg_is_in_recovery()'), 'f', '(a) the standby is promoted');
is( $s->(q{SELECT string_agg(id || '=' || expires_at, ',' ORDER BY id, slot)
             FROM sem_holders WHERE kind = 'lease'}),
	$expiries, '(a) every lease granted before the kill is held, with its expiry');
is($s->("SELECT sem_held($long) AND sem_held($three) AND sem_held($renewed)"), 't',
	'(a) the long lease, the claim of 3 permits and the renewed lease are held');
is($s->("SELECT count(*) FROM sem_holders WHERE id = $three"), '3', '(a) with all 3 permits');
is($s->("SELECT bool_and(sem_held(x::bigint)) FROM unnest(string_to_array('$set', ',')) x"),
	't', '(a) and both leases of the set');
is($s->("SELECT sem_held($released)"), 'f', '(a) the acknowledged release holds');
is($s->(q{SELECT sem_rate('fo.rate', 1, '1 hour')}), 'f',
	'(a) the rate grant still counts: its window is full');
is($s->(q{SELECT sem_claim('fo.long', 2, '1 hour') IS NOT NULL
               AND sem_claim('fo.long', 2, '1 hour') IS NULL}), 't',
	'(a) the held lease still counts against n: one more slot, then none');
my $new_id = $s->(q{SELECT sem_claim('fo.new', 1, '1 hour')});
cmp_ok($new_id, '>', $max_id, "(a) ids after the promotion ($new_id) exceed every id before ($max_id)");
# The short lease expires on time, by the new primary's clock, and its slot goes to a claimer.
ok($standby->poll_query_until('postgres', "SELECT NOT sem_held($short)"),
	'(a) the 3-second lease expires on the new primary');
is($s->(q{SELECT count(*) FROM sem_history WHERE name = 'fo.short' AND ended_at <= now()
            AND ended_at = expires_at}), '1', '(a) at its expiry, not later');
$standby->stop;

# ---- (b) an asynchronous standby behind the primary: what it loses ---------------------------
my $primary2 = PostgreSQL::Test::Cluster->new('async_primary');
$primary2->init(allows_streaming => 1, extra => [ '--encoding=UTF8', '--locale=C' ]);
$primary2->start;
$primary2->safe_psql('postgres', 'CREATE EXTENSION pgsem');
$primary2->backup('async_backup');
my $standby2 = PostgreSQL::Test::Cluster->new('async_standby');
$standby2->init_from_backup($primary2, 'async_backup', has_streaming => 1);
$standby2->start;
my $q2 = sub { return $primary2->safe_psql('postgres', shift) };
my $before = $q2->(q{SELECT sem_claim('fa.kept', 1, '1 hour')});
$primary2->wait_for_catchup($standby2, 'replay', $primary2->lsn('insert'));
# The standby falls behind: its WAL receiver cannot connect any more.
$standby2->append_conf('postgresql.conf', "primary_conninfo = 'host=/nonexistent'\n");
$standby2->reload;
$q2->(q{SELECT pg_terminate_backend(pid) FROM pg_stat_replication});
ok($primary2->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_replication}),
	'(b) the asynchronous standby is cut off');
my $lost = $q2->(q{SELECT sem_claim('fa.lost', 1, '1 hour')});
like($lost, qr/^\d+$/, '(b) the primary still grants claims, acknowledged without the standby');
$primary2->stop('immediate');
$standby2->promote;
my $s2 = sub { return $standby2->safe_psql('postgres', shift) };
is($s2->("SELECT sem_held($before)"), 't', '(b) the claim the standby had received is held');
is($s2->("SELECT count(*) FROM sem_history WHERE id = $lost"), '0',
	'(b) the claim acknowledged after the standby fell behind is gone');
is($s2->(q{SELECT sem_claim('fa.lost', 1, '1 hour') IS NOT NULL}), 't',
	'(b) its slot is free again: a second holder can take it');
$standby2->stop;

done_testing();
