# pg_dump and restore. The database's owner -- not a superuser, not the extension's owner -- can
# dump it: pgsem grants pg_database_owner read access to pgsem.claims and its id sequence, which
# pg_dump saves as extension configuration. A restore (by a superuser, who alone can create the
# extension) brings the claims back as they were: a claim still within its lease is held in the
# restored database until that lease runs out, and ids keep growing from where they were.
# Declarations (1.2) come along too: the database owner's and a superuser's, with their limits,
# owners and grants (roles by name), and they govern claims in the restored database; and so do
# the quotas per role.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->start;
$node->safe_psql('postgres', q{
    CREATE ROLE app_owner LOGIN;
    CREATE DATABASE appdb OWNER app_owner;
});
$node->safe_psql('appdb', 'CREATE EXTENSION pgsem');
sub app { return $node->safe_psql('appdb', shift) }

my $live = app(q{SELECT sem_claim('dumped', 2, '1 hour')});
my $released = app(q{SELECT sem_claim('dumped', 2, '1 hour')});
app(qq{SELECT sem_release($released)});
app(q{SELECT sem_release(sem_claim('churn', 1)) FROM generate_series(1, 40)});
my $max_id = app(q{SELECT max(id) FROM pgsem.claims});

$node->safe_psql('postgres', 'CREATE ROLE app_workers; CREATE ROLE worker LOGIN IN ROLE app_workers');
app(q{SELECT sem_declare('declared', 3, max_lease => '10 minutes', max_wait => '1 second');
      SELECT sem_grant('declared', 'app_workers')});
$node->safe_psql('appdb', q{SELECT sem_declare('tenant:*', 2); SELECT sem_grant_public('tenant:*')},
	extra_params => [ '-U', 'app_owner' ]);
my $declarations = app(q{SELECT name, n, max_lease, max_wait, owner, may_claim
                           FROM sem_declarations ORDER BY name});
my $superuser = app(q{SELECT current_user::regrole});  # the OS user that ran initdb, quoted
is($declarations, "declared|3|00:10:00|00:00:01|$superuser|{app_workers}\n"
	. "tenant:*|2|||app_owner|{PUBLIC}",
	'a superuser and the database owner declared a semaphore each');

app(q{SELECT sem_set_quota('worker', 5, 1)});
is($node->safe_psql('appdb', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'app_owner'}),
	'f', 'the database owner is an ordinary role');
my $dump = $node->basedir . '/appdb.dump';
my ($stdout, $stderr);
my $ok = IPC::Run::run(
	[ 'pg_dump', '-Fc', '-U', 'app_owner', '-d', $node->connstr('appdb'), '-f', $dump ],
	'>', \$stdout, '2>', \$stderr);
ok($ok, 'pg_dump by the (non-superuser) database owner succeeds');
is($stderr, '', 'and reports nothing') or diag($stderr);

# A role that does not own the database still cannot read the claims.
$node->safe_psql('postgres', 'CREATE ROLE stranger LOGIN');
my ($ret, $out, $err) = $node->psql('appdb', 'SELECT count(*) FROM pgsem.claims',
	extra_params => [ '-U', 'stranger' ]);
like($err, qr/permission denied/, 'another role still cannot read pgsem.claims');

# Restore into a fresh database, as a superuser.
$node->safe_psql('postgres', 'CREATE DATABASE restored OWNER app_owner');
$ok = IPC::Run::run([ 'pg_restore', '-d', $node->connstr('restored'), $dump ],
	'>', \$stdout, '2>', \$stderr);
ok($ok, 'pg_restore by a superuser succeeds') or diag($stderr);
sub restored { return $node->safe_psql('restored', shift) }

is(restored(qq{SELECT sem_held($live)}), 't',
	'a claim within its lease is held in the restored database');
is(restored(qq{SELECT sem_held($released)}), 'f', 'a released claim stays released');
is(restored(q{SELECT count(*) FROM sem_history WHERE name = 'churn'}), '40',
	'the history came along');
is(restored(q{SELECT count(*) FROM sem_holders WHERE name = 'dumped'}), '1',
	'the restored semaphore has one holder');
my $after = restored(q{SELECT sem_claim('dumped', 2, '1 hour')});
cmp_ok($after, '>', $max_id, 'ids keep growing after the restore');
is(restored(q{SELECT sem_claim('dumped', 2, '1 hour') IS NULL}), 't',
	'the restored claim still counts: n = 2 is full with the new one');
is(restored(qq{SELECT sem_release($live)}), 't',
	'the restored claim can be released (by a superuser) in the restored database');

is(restored(q{SELECT name, n, max_lease, max_wait, owner, may_claim
                FROM sem_declarations ORDER BY name}),
	$declarations, 'the declarations came along, with limits, owners and grants');
sub restored_as {
	my ($role, $sql) = @_;
	my ($r, $o, $e) = $node->psql('restored', $sql, extra_params => [ '-U', $role ]);
	return $e ne '' ? $e : $o;
}
is(restored_as('worker', q{SELECT count(sem_claim('declared')) FROM generate_series(1, 4)}), '3',
	'a member of the granted group claims the declared n (3 of 4 calls) in the restored database');
like(restored_as('stranger', q{SELECT sem_claim('declared')}),
	qr/permission denied to claim semaphore "declared"/,
	'a role without the grant is refused there');
like(restored_as('worker', q{SELECT sem_claim('declared', timeout => '1 hour')}),
	qr/above the declared maximum/, 'the restored maximum lease holds');
is(restored_as('stranger', q{SELECT sem_claim('tenant:1') IS NOT NULL}), 't',
	'PUBLIC may claim under the restored prefix');
is(restored(q{SELECT role || ' ' || max_claims || ' ' || max_waiters FROM sem_quotas}),
	'worker 5 1', 'the quota came along');
like(restored_as('worker', q{SELECT sem_claim('tenant:2'), sem_claim('tenant:3'), sem_claim('tenant:4')}),
	qr/reached its quota of live claims \(max_claims = 5\)/,
	'and it holds there: with its 3 leases on "declared", the third of these is refused');

$node->stop;
done_testing();
