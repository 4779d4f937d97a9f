# A caller that does not wait answers NULL only if every slot was held at one instant of its call.
# Its look reads the slots one after another, so when a slot it has passed is given back before
# it ends, it must look again (src/pg/store/release_epochs.cpp counts the releases).
#
# The look is stopped between two slots, deterministically: a lease claimer waits for a slot's
# mutex, and a claim holds its slot's mutex while its id waits for the synchronous standbys
# (synchronous_standby_names names one that never connects). So, on a semaphore of 2:
#   X holds slot 0; A's claim holds slot 1's mutex, its id waiting for the standby;
#   Y's claim (wait 0) reads slot 0 (held), then waits for slot 1's mutex;
#   X gives slot 0 back (a lease release, a transaction claim's commit, a session claim's release,
#   its lease running out);
#   the standby requirement is dropped: A takes slot 1, and Y reads it held.
# Y must then look again and get slot 0; a NULL is a slot lost to a refusal. A control case gives
# nothing back and must answer NULL.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $node = PostgreSQL::Test::Cluster->new('second_look');
$node->init(allows_streaming => 1, extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

# One case: `hold` makes X hold slot 0 of `name`, `give_back` (undef: the control) makes it let go.
sub case
{
	my ($label, $name, $hold, $give_back) = @_;
	my ($x) = session($node);
	my ($a, $a_pid) = session($node);
	my ($y, $y_pid) = session($node);
	$_->query_safe('SET synchronous_commit = local') for ($x, $a, $y);    # only ids wait for the standby
	$hold->($x, $name);

	# A takes slot 1's mutex; its id's sequence record must reach the standby (the next draw logs
	# a new batch of ids: setval resets it).
	standby_required($node, 'nosuchstandby');
	query(q{SET synchronous_commit = local;
	        SELECT setval('pgsem.claim_id', (SELECT last_value FROM pgsem.claim_id))});
	# In a transaction left open until Y has answered: the end of A's own transaction moves the
	# epoch too, and must not be what sends Y to its second look.
	start($a, "BEGIN; SELECT sem_claim('$name', 2, '1 hour') AS a_id");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT wait_event = 'SyncRep' FROM pg_stat_activity WHERE pid = $a_pid"),
		"$label: A holds slot 1's mutex, its id waiting for the standby");

	# Y reads slot 0, held, and waits for slot 1's mutex (objsubid 20563: pgsem's slot mutexes).
	start($y, "SELECT coalesce(sem_claim('$name', 2, '1 hour')::text, 'NULL') AS y_id");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM pg_locks WHERE pid = $y_pid AND NOT granted"
			  . " AND locktype = 'advisory' AND objsubid = 20563"),
		"$label: Y has read slot 0 and waits for slot 1's mutex");

	$give_back->($x, $name) if $give_back;
	standby_required($node, '');

	my $a_id = $a->query_safe('SELECT 1');    # A's claim ends first: its output comes with this
	my $y_out = $y->query_safe('SELECT 1');
	my ($y_id) = $y_out =~ /^(\d+|NULL)$/m;
	$a->query_safe('COMMIT');
	my $holders = query(
		"SELECT string_agg(slot || ':' || coalesce(id::text, kind), ',' ORDER BY slot)"
		  . " FROM sem_holders WHERE name = '$name'");
	if ($give_back)
	{
		like($y_id, qr/^\d+$/, "$label: Y, refused by its first look, looked again and got a claim");
		is($holders =~ /^0:$y_id,1:\d+$/ ? 'slot 0' : $holders,
			'slot 0', "$label: the slot given back during Y's look is Y's ($holders)");
	}
	else
	{
		is($y_id, 'NULL', "$label: with nothing given back, Y is refused");
	}
	query("SELECT sem_release(id) FROM sem_holders WHERE name = '$name' AND id IS NOT NULL");
	$_->quit for ($x, $a, $y);
}

my $lease_id;
case(
	'control', 'sl control',
	sub { my ($x, $name) = @_; $x->query_safe("SELECT sem_claim('$name', 2, '1 hour')") },
	undef);
case(
	'lease released', 'sl lease',
	sub { my ($x, $name) = @_; $lease_id = $x->query_safe("SELECT sem_claim('$name', 2, '1 hour')") },
	sub { my ($x) = @_; $x->query_safe("SELECT sem_release($lease_id)") });
case(
	'transaction claim committed', 'sl xact',
	sub { my ($x, $name) = @_; $x->query_safe("BEGIN; SELECT sem_claim_xact('$name', 2)") },
	sub { my ($x) = @_; $x->query_safe('COMMIT') });
case(
	'session claim released', 'sl session',
	sub { my ($x, $name) = @_; $x->query_safe("SELECT sem_claim_session('$name', 2)") },
	sub { my ($x, $name) = @_; $x->query_safe("SELECT sem_release_session('$name', 0)") });
# A lease that runs out frees its slot with no transaction at all: nothing is counted, and the
# look must tell from the expiries it read (X's lease lasts long enough for Y to read it held).
my $short_id;
case(
	'lease ran out', 'sl expiry',
	sub { my ($x, $name) = @_; $short_id = $x->query_safe("SELECT sem_claim('$name', 2, '5 s')") },
	sub {
		ok( $node->poll_query_until(
				'postgres',
				"SELECT expires_at < clock_timestamp() FROM pgsem.claims WHERE id = $short_id"),
			"lease ran out: X's lease has run out");
	});

$node->stop;
done_testing();
