# A client whose connection drops after its claim committed, before the answer reached it, does
# not know whether it holds a slot. Without a request key its retry takes a second slot and the
# first is lost until its lease runs out; with one, the retry gets the claim the first attempt
# made, and one slot is held. The answer is lost for real: a proxy on loopback
# (test/tap/LossyProxy.pm) holds back the server's replies to the claim and closes both
# connections once the server is ready for the next query, that is, once the claim committed.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::Bin;
use LossyProxy;

my $node = PostgreSQL::Test::Cluster->new('lost_answer');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

my ($proxy, $proxy_port) = start_lossy_proxy($node, 'lose-this-answer');
END { local $?; stop_lossy_proxy($proxy) if $proxy; }    # keeps the exit status

# Runs `sql` through the proxy: the statement runs and commits, its answer never arrives.
sub claim_losing_answer
{
	my ($label, $sql) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'psql', '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d',
			"host=127.0.0.1 port=$proxy_port dbname=postgres sslmode=disable gssencmode=disable",
			'-c', "$sql -- lose-this-answer"
		],
		'>', \$out, '2>', \$err);
	ok(!$ok && $out eq '', "$label: the client got no answer")
	  or diag("stdout: $out\nstderr: $err");
	like($err, qr/server closed the connection|connection to server was lost|terminat/i,
		"$label: the client saw its connection drop");
}

# Without a key: the retry takes another slot, and the first attempt's is lost to everyone.
claim_losing_answer('no key', q{SELECT sem_claim('lost', 2, '1 hour')});
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'lost'}),
	'1', 'no key: the first attempt committed, holding a slot');
my $retry = query(q{SELECT sem_claim('lost', 2, '1 hour')});
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'lost'}),
	'2', 'no key: the retry took a second slot (the failure request keys are for)');
query(q{SELECT sem_release(id) FROM sem_holders WHERE name = 'lost'});

# With a key: the retry gets the first attempt's claim, and one slot is held.
claim_losing_answer('key',
	q{SELECT sem_claim('lost', 2, '1 hour', request_key => 'job-42')});
my $made = query(
	q{SELECT id FROM sem_holders WHERE name = 'lost'});
like($made, qr/^\d+$/, 'key: the first attempt committed one claim');
$retry = query(q{SELECT sem_claim('lost', 2, '1 hour', request_key => 'job-42')});
is($retry, $made, 'key: the retry answers with the claim the first attempt made');
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'lost'}),
	'1', 'key: one slot is held');
is(query("SELECT sem_release($retry)"), 't', 'key: the retry\'s answer releases it');
is(query(qq{SELECT sem_claim('lost', 2, '1 hour', request_key => 'job-42') <> $made}),
	't', 'key: once released, the key makes a new claim');

# A claim of several permits whose answer is lost: the retry gets the whole claim.
claim_losing_answer('permits',
	q{SELECT sem_claim('lost big', 4, '1 hour', permits => 3, request_key => 'big-7')});
$made = query(q{SELECT DISTINCT id FROM sem_holders WHERE name = 'lost big'});
is(query(q{SELECT sem_claim('lost big', 4, '1 hour', permits => 3, request_key => 'big-7')}),
	$made, 'permits: the retry answers with the claim of three');
is(query(q{SELECT count(*) FROM sem_holders WHERE name = 'lost big'}),
	'3', 'permits: three slots are held, not six');

$node->stop;
done_testing();
