# Sessions the TAP tests drive side by side: a background psql per session, statements started
# without waiting for their end (a claim that waits in line), and their ends collected later.
package PgsemSessions;

use strict;
use warnings;

use Exporter 'import';
our @EXPORT = qw(session start finish standby_required);

# A background session on database postgres of $node, which keeps going after an error: the
# session and its backend's pid.
sub session
{
	my $node = shift;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	return ($s, $s->query_safe('SELECT pg_backend_pid()'));
}

# Sends $sql and returns once psql has it, without waiting for its end.
sub start
{
	my ($s, $sql) = @_;
	$s->query_until(qr/started/, "\\echo started\n$sql;\n");
	return;
}

# Waits for what start() sent to end: its output, then "1".
sub finish { my $s = shift; return scalar $s->query('SELECT 1 AS done') }

# Sets synchronous_standby_names on $node ('' for none) and reloads.
sub standby_required
{
	my ($node, $names) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET synchronous_standby_names = '$names'");
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	return;
}

1;
