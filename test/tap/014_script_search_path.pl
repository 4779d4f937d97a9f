# The install and update scripts run as a superuser with search_path = the extension's schema,
# pg_temp (pg_catalog implicitly first). A role that may create objects in that schema (in PG 15
# the database owner owns public; elsewhere CREATE may have been granted) can plant there an
# operator or function whose argument types match a script's unqualified call better than
# pg_catalog's does; the script then runs it as the superuser (CVE-2022-2625 class). Here each
# attacker plants before CREATE EXTENSION pgsem, before ALTER EXTENSION pgsem UPDATE from 1.0 and
# before the update from 1.1, and nobody may gain anything: the attacker is no superuser
# afterwards, no planted function ever ran, no object of the extension refers to a planted one.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('search_path');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
# mallory owns a database (and so, in PG 15, its schema public); trudy and oscar were granted
# CREATE on public of a database the superuser owns. app is a role a DBA granted sem_claim to.
$node->safe_psql('postgres', q{
    CREATE ROLE mallory LOGIN;
    CREATE ROLE trudy LOGIN;
    CREATE ROLE oscar LOGIN;
    CREATE ROLE app;
    CREATE DATABASE created OWNER mallory;
    CREATE DATABASE from_10;
    CREATE DATABASE from_11;
});
my $default_version = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'pgsem'});

# The checks run with pg_catalog alone on the path, so that they never run a plant themselves.
sub check
{
	my ($db, $sql) = @_;
	return $node->safe_psql($db, "SET search_path = pg_catalog;\n$sql");
}

# What the attacker plants in public. Every planted function records its call in
# public.planted_calls and, when a superuser runs it, makes the attacker a superuser; then it
# answers as the builtin would, so that the script carries on and nobody notices.
#
# The operators and aggregates the scripts used unqualified, each with the argument types of its
# use. Those marked 1 win: =(oid, regclass), =(oid, regprocedure) and =(oid, integer) match
# exactly where pg_catalog's =(oid, oid) needs a cast (and <> likewise); string_agg(text, unknown)
# beats pg_catalog's string_agg(text, text) for a call with a literal delimiter (an aggregate may
# take unknown, through a polymorphic transition function), and its final function runs even over
# no rows. The others have exactly pg_catalog's signature, which hides them (pg_catalog comes
# first): they would win only if a script put its own schema before pg_catalog.
my @operators = (
	[ '=',  'oid',         'regclass',     1 ],
	[ '=',  'oid',         'regprocedure', 1 ],
	[ '=',  'oid',         'integer',      1 ],
	[ '<>', 'oid',         'regclass',     1 ],
	[ '<>', 'oid',         'regprocedure', 1 ],
	[ '<>', 'oid',         'integer',      1 ],
	[ '=',  'oid',         'oid',          0 ],
	[ '<>', 'oid',         'oid',          0 ],
	[ '=',  '"char"',      '"char"',       0 ],
	[ '=',  'text',        'text',         0 ],
	[ '=',  'integer',     'integer',      0 ],
	[ '>',  'timestamptz', 'timestamptz',  0 ],
	[ '<=', 'timestamptz', 'timestamptz',  0 ]);

sub op_label { my ($name, $left, $right) = @_; (my $l = "$name($left, $right)") =~ s/"//g; return $l }
my @winners = sort(('string_agg(text, unknown)',
		map { op_label(@$_[ 0 .. 2 ]) } grep { $_->[3] } @operators));

sub plants
{
	my ($attacker) = @_;
	my $sql = qq{
CREATE TABLE public.planted_calls (planted text, called_as name);
CREATE FUNCTION public.planted_ran(what text) RETURNS void LANGUAGE plpgsql AS \$body\$
BEGIN
    INSERT INTO public.planted_calls VALUES (what, current_user);
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) current_user)
       AND NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) '$attacker')
    THEN
        ALTER ROLE $attacker SUPERUSER;
    END IF;
END \$body\$;
CREATE FUNCTION public.planted_agg_step(state text, value text, delimiter anyelement)
    RETURNS text LANGUAGE sql
    AS 'SELECT pg_catalog.concat_ws(\$3::pg_catalog.text, \$1, \$2)';
CREATE FUNCTION public.planted_agg_final(state text) RETURNS text LANGUAGE plpgsql AS \$body\$
BEGIN PERFORM public.planted_ran('string_agg(text, unknown)'); RETURN state; END \$body\$;
CREATE AGGREGATE public.string_agg(text, unknown) (
    SFUNC = public.planted_agg_step, STYPE = text, FINALFUNC = public.planted_agg_final);
CREATE FUNCTION public.planted_agg_final_text(state text) RETURNS text LANGUAGE plpgsql AS \$body\$
BEGIN PERFORM public.planted_ran('string_agg(text, text)'); RETURN state; END \$body\$;
CREATE AGGREGATE public.string_agg(text, text) (
    SFUNC = public.planted_agg_step, STYPE = text, FINALFUNC = public.planted_agg_final_text);
CREATE FUNCTION public.planted_bool_or_final(state boolean) RETURNS boolean LANGUAGE plpgsql
    AS \$body\$ BEGIN PERFORM public.planted_ran('bool_or(boolean)'); RETURN state; END \$body\$;
CREATE AGGREGATE public.bool_or(boolean) (
    SFUNC = pg_catalog.boolor_statefunc, STYPE = boolean,
    FINALFUNC = public.planted_bool_or_final);
};
	my $n = 0;
	for my $op (@operators)
	{
		my ($name, $left, $right) = @$op;
		my $label = op_label($name, $left, $right);
		$n++;
		$sql .= qq{
CREATE FUNCTION public.planted_op_$n(a $left, b $right) RETURNS boolean LANGUAGE plpgsql AS \$body\$
BEGIN
    PERFORM public.planted_ran('$label');
    RETURN a OPERATOR(pg_catalog.$name) b;
END \$body\$;
CREATE OPERATOR public.$name (LEFTARG = $left, RIGHTARG = $right, FUNCTION = public.planted_op_$n);
};
	}
	return $sql;
}

sub calls
{
	my ($db) = @_;
	return check($db,
		q{SELECT string_agg(planted || ' as ' || called_as || ': ' || n, E'\n' ORDER BY planted)
		    FROM (SELECT planted, called_as, count(*) AS n FROM public.planted_calls
		           GROUP BY 1, 2) c});
}

# One attacker, one database, one install or update run by the superuser over the plants.
sub attack
{
	my ($db, $attacker, $what, $statement) = @_;
	$node->safe_psql($db, plants($attacker), extra_params => [ '-U', $attacker ]);

	# The plants work: an unqualified use in the attacker's own session picks each winner.
	$node->safe_psql(
		$db, q{
		SELECT 0::oid = 'pg_catalog.pg_class'::regclass, 0::oid <> 'pg_catalog.pg_class'::regclass,
		       0::oid = 'pg_catalog.now()'::regprocedure, 0::oid <> 'pg_catalog.now()'::regprocedure,
		       0::oid = 0, 0::oid <> 0,
		       (SELECT string_agg(x, ', ') FROM (SELECT ''::text WHERE false) v(x));
		},
		extra_params => [ '-U', $attacker ]);
	is( check($db,
			q{SELECT string_agg(DISTINCT planted, ', ' ORDER BY planted) FROM public.planted_calls}),
		join(', ', @winners),
		"$what: the planted operators and string_agg win over pg_catalog's in an unqualified use");
	$node->safe_psql($db, 'TRUNCATE public.planted_calls', extra_params => [ '-U', $attacker ]);

	my ($rc, $out, $err) = $node->psql($db, $statement);
	is($rc, 0, "$what: $statement succeeds with the plants in place") or diag($err);
	is(check($db, q{SELECT extversion FROM pg_extension WHERE extname = 'pgsem'}),
		$default_version, "$what: pgsem is at the default version");
	is(check($db, "SELECT rolsuper FROM pg_roles WHERE rolname = '$attacker'"),
		'f', "$what: $attacker is no superuser");
	is(calls($db), '', "$what: no planted function ran");
	is( check($db, qq{
		SELECT string_agg(pg_describe_object(d.classid, d.objid, d.objsubid) || ' uses '
		                  || pg_describe_object(d.refclassid, d.refobjid, 0), E'\n')
		  FROM pg_depend d
		 WHERE (d.refclassid = 'pg_proc'::regclass AND d.refobjid IN
		           (SELECT oid FROM pg_proc WHERE proowner = '$attacker'::regrole)
		        OR d.refclassid = 'pg_operator'::regclass AND d.refobjid IN
		           (SELECT oid FROM pg_operator WHERE oprowner = '$attacker'::regrole))
		   AND NOT (d.classid = 'pg_proc'::regclass AND d.objid IN
		           (SELECT oid FROM pg_proc WHERE proowner = '$attacker'::regrole))
		   AND NOT (d.classid = 'pg_operator'::regclass AND d.objid IN
		           (SELECT oid FROM pg_operator WHERE oprowner = '$attacker'::regrole))}),
		'', "$what: no object refers to a planted one");

	# The views and functions, used with the planted objects on the path, run none of them.
	check($db, 'TRUNCATE public.planted_calls');
	$node->safe_psql($db, q{
		SELECT sem_release(sem_claim('planted', 2));
		SELECT count(*) FROM sem_holders, sem_summary, sem_history, sem_waiters;
	});
	is(calls($db), '', "$what: reading the views and claiming run no planted function");
}

attack('created', 'mallory', 'install into the schema of the database owner',
	'CREATE EXTENSION pgsem');

# From 1.0, with privileges a DBA set on sem_claim: the update carries them over to the new
# sem_claim, which runs the part of its DO block that only such privileges reach.
$node->safe_psql('from_10', q{
    CREATE EXTENSION pgsem VERSION '1.0';
    REVOKE EXECUTE ON FUNCTION sem_claim(text, integer, interval) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION sem_claim(text, integer, interval) TO app WITH GRANT OPTION;
    GRANT CREATE ON SCHEMA public TO trudy;
});
attack('from_10', 'trudy', 'update from 1.0', 'ALTER EXTENSION pgsem UPDATE');
is( check('from_10', q{
		SELECT has_function_privilege('app',
		                              'public.sem_claim(text, integer, interval, interval, integer, text)',
		                              'EXECUTE WITH GRANT OPTION')
		   AND NOT has_function_privilege('public',
		                                  'public.sem_claim(text, integer, interval, interval, integer, text)',
		                                  'EXECUTE')}),
	't', 'update from 1.0: the privileges set on sem_claim carried over');

# From 1.1, with privileges a DBA set on sem_claim_xact: 1.2 replaces it (permits) and carries
# them over, in the part of its DO block that only such privileges reach.
$node->safe_psql('from_11', q{
    CREATE EXTENSION pgsem VERSION '1.1';
    REVOKE EXECUTE ON FUNCTION sem_claim_xact(text, integer, interval) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION sem_claim_xact(text, integer, interval) TO app WITH GRANT OPTION;
    GRANT CREATE ON SCHEMA public TO oscar;
});
attack('from_11', 'oscar', 'update from 1.1', 'ALTER EXTENSION pgsem UPDATE');
is( check('from_11', q{
		SELECT has_function_privilege('app', 'public.sem_claim_xact(text, integer, interval, integer)',
		                              'EXECUTE WITH GRANT OPTION')
		   AND NOT has_function_privilege('public',
		                                  'public.sem_claim_xact(text, integer, interval, integer)',
		                                  'EXECUTE')}),
	't', 'update from 1.1: the privileges set on sem_claim_xact carried over');

$node->stop;
done_testing();
