# Rate grants in a portal run with a row limit: a raw-protocol client (libpq never does this) can
# Execute `SELECT sem_rate(...)` with max_rows = 1. The portal is then suspended after the row
# that says the grant was made, its implicit transaction open until the next Execute or the Sync;
# a failing statement sent before the Sync rolls the grant back, after the client read `t` and
# made the call it allowed -- and the permit is granted again. So sem_rate, sem_bucket and a set
# with a rate member refuse to run there (25001), and nothing is granted; so they do in an
# extended-protocol portal whose rows are sent from a store (INSERT ... RETURNING and the like),
# where the row limit cannot be seen. Without a row limit the
# same messages grant, and the grant (the first statement before the Sync) is committed before
# the failing statement runs. A function's PL/pgSQL SELECT INTO fetches with a row limit of its
# own, which is not the client's: a grant there is not refused by this rule.
# Without the rule: the client reads `t` and the grant is rolled back by 1/0.
use strict;
use warnings;

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('row_limited_grants');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');
my $user = $node->safe_psql('postgres', 'SELECT current_user');
my $client = "$FindBin::Bin/../lib/row_limited_grant.py";

sub query { return $node->safe_psql('postgres', shift) }

sub send_with_row_limit {
	my ($call, $max_rows, @statement) = @_;
	my ($stdout, $stderr) = run_command(
		[ 'python3', $client, $node->host, $node->port, $user, 'postgres', $call, $max_rows,
		  @statement ]);
	is($stderr, '', "the raw client ran ($call)");
	return $stdout;
}

# Each call, and how to ask it whether it was granted (t or f).
my %calls = (
	sem_rate      => [ q{sem_rate('%s', 1, '1 hour')}, '%s' ],
	sem_bucket    => [ q{sem_bucket('%s', 1, '1 hour')}, '%s' ],
	sem_claim_all => [
		q{sem_claim_all(ARRAY['%s'], ARRAY[1], pers => ARRAY['1 hour']::interval[])},
		'%s IS NOT NULL'
	],
);
for my $function (sort keys %calls) {
	my ($call, $granted) = @{ $calls{$function} };
	my $limited = sprintf($call, "$function-limited");
	my $out = send_with_row_limit($limited, 1);
	like($out, qr/^call: .*'error', '25001 \Q$function\E\(\) cannot run in a portal fetched with a row limit'/m,
		"$function with max_rows = 1 is refused with 25001");
	unlike($out, qr/'row'/, "$function: the client read no answer");
	is(query('SELECT ' . sprintf($granted, $limited)), 't', "$function: the refused call granted nothing");
	is(query('SELECT ' . sprintf($granted, $limited)), 'f', "$function: one permit, one grant");

	my $whole = sprintf($call, "$function-whole");
	$out = send_with_row_limit($whole, 0);
	like($out, qr/^call: \[\('row', \[/m, "$function with no row limit answers");
	like($out, qr/^then: .*division by zero/m, 'and the next statement fails');
	is(query('SELECT ' . sprintf($granted, $whole)), 'f',
		"$function: the grant was committed before the failing statement");
}

# A portal whose rows are sent from a store its query filled first (INSERT ... RETURNING, a WITH
# that writes, EXECUTE of a prepared statement): the row limit applies to the sending, which
# runs no query, so such portals of the extended protocol are refused whatever the limit.
query(q{CREATE TABLE marks (n integer)});
for my $statement (
	q{INSERT INTO marks VALUES (1) RETURNING sem_rate('store-1', 1, '1 hour')},
	q{WITH m AS (INSERT INTO marks VALUES (2) RETURNING n) SELECT sem_rate('store-2', 1, '1 hour') FROM m})
{
	my $out = send_with_row_limit('-', 1, $statement);
	like($out, qr/^call: .*'error', '25001 sem_rate\(\) cannot run in a portal fetched with a row limit'/m,
		"refused: $statement");
}
# EXECUTE runs its query in a portal of its own; the client's is the EXECUTE's. In a new session,
# whose EXECUTE loads the library.
my $out = send_with_row_limit('-', 1, 'EXECUTE p',
	q{PREPARE p AS SELECT sem_rate('store-3', 1, '1 hour')});
like($out, qr/^call: .*'error', '25001 sem_rate\(\) cannot run in a portal fetched with a row limit'/m,
	'refused: EXECUTE of a prepared statement');
is(query(q{SELECT sem_rate('store-3', 1, '1 hour')}), 't', 'and it granted nothing');
is(query(q{SELECT count(*) FROM marks}), '0', 'and nothing of them was done');
is(query(q{INSERT INTO marks VALUES (3) RETURNING sem_rate('store-1', 1, '1 hour')}), 't',
	'the same statement as a simple query grants');

# A function's own fetches are not the client's: its SELECT ... INTO runs with a row limit of 2,
# inside a statement that runs to its end.
query(q{CREATE FUNCTION take_one() RETURNS boolean LANGUAGE plpgsql AS $$
        DECLARE granted boolean;
        BEGIN SELECT sem_rate('in-a-function', 1, '1 hour') INTO STRICT granted; RETURN granted; END $$});
is(query('SELECT take_one()'), 't', 'a grant by SELECT INTO in a function is made');
is(query('SELECT take_one()'), 'f', 'and counts');

$node->stop;
done_testing();
