# Rate grants in a libpq pipeline (extended protocol, no Sync between statements). A pipeline is
# one implicit transaction until its Sync: a grant answered to the client and then rolled back by
# a later failing statement of the same pipeline would be granted again, after the call it allowed
# was made. So sem_rate and sem_bucket refuse to run after a pipeline's first statement (25001),
# and as its first statement they commit at once, before the next statement runs. pgbench sends
# the pipelines (\startpipeline, in extended query mode).
# Without the pipeline rule: the refused calls grant, and the grants before 1/0 are rolled back.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('pipelined_grants');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem');

sub query { return $node->safe_psql('postgres', shift) }

my %calls = (
	sem_rate   => q{sem_rate('%s', 1, '1 hour')},
	sem_bucket => q{sem_bucket('%s', 1, '1 hour')},
);
for my $function (sort keys %calls) {
	my $call = $calls{$function};
	my $late = sprintf($call, "$function-late");
	$node->pgbench(
		'--no-vacuum --protocol=extended --transactions=1',
		2,
		[qr/^.*$/s],
		[qr/$function\(\) cannot run inside a pipeline/],
		"$function after a pipeline's first statement is refused",
		{ "021_${function}_late" => "\\startpipeline\nSELECT 1;\nSELECT $late;\n\\endpipeline\n" });
	is(query("SELECT $late"), 't', "$function: the refused call granted nothing");

	my $first = sprintf($call, "$function-first");
	$node->pgbench(
		'--no-vacuum --protocol=extended --transactions=1',
		2,
		[qr/^.*$/s],
		[qr/division by zero/],
		"$function first in a pipeline whose next statement fails",
		{ "021_${function}_first" => "\\startpipeline\nSELECT $first;\nSELECT 1/0;\n\\endpipeline\n" });
	is(query("SELECT $first"), 'f',
		"$function: the pipeline's first grant was committed before the failing statement");
}

$node->stop;
done_testing();
