# Logical replication with FOR ALL TABLES, pgsem installed on both sides: the publication includes
# pgsem.claims (and pgsem.declarations), but claims and declarations are the state of one database. The trigger on pgsem.claims drops what
# the replication workers bring -- the initial copy and every later change -- so the subscriber's
# own claims never collide with the publisher's (both draw the same ids), its semaphores keep
# working, and the application's tables keep flowing.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $publisher = PostgreSQL::Test::Cluster->new('publisher');
$publisher->init(allows_streaming => 'logical', extra => [ '--encoding=UTF8', '--locale=C' ]);
$publisher->start;
my $subscriber = PostgreSQL::Test::Cluster->new('subscriber');
$subscriber->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$subscriber->start;

my $schema = q{CREATE EXTENSION pgsem; CREATE TABLE orders (id int PRIMARY KEY, note text);};
$publisher->safe_psql('postgres', $schema);
$subscriber->safe_psql('postgres', $schema);

sub pub { return $publisher->safe_psql('postgres', shift) }
sub sub_ { return $subscriber->safe_psql('postgres', shift) }

# Declarations too belong to each side: both declare the same pattern, with different n.
pub(q{SELECT sem_declare('declared-both', 3)});
sub_(q{SELECT sem_declare('declared-both', 5)});

# Claims on both sides before the subscription: live ones and released ones, with the same ids.
my @pub_claims = map { pub(qq{SELECT sem_claim('shared-name', 4, '1 hour')}) } 1 .. 3;
pub(qq{SELECT sem_release($pub_claims[2])});
my @sub_claims = map { sub_(qq{SELECT sem_claim('shared-name', 4, '1 hour')}) } 1 .. 3;
sub_(qq{SELECT sem_release($sub_claims[2])});
is("@sub_claims", "@pub_claims", 'both sides drew the same claim ids');
pub(q{INSERT INTO orders VALUES (1, 'before the subscription')});

pub(q{CREATE PUBLICATION everything FOR ALL TABLES});
is(pub(q{SELECT count(*) FROM pg_publication_tables
           WHERE pubname = 'everything' AND schemaname = 'pgsem' AND tablename = 'claims'}),
	'1', 'the FOR ALL TABLES publication includes pgsem.claims');
my $connstr = $publisher->connstr . ' dbname=postgres';
sub_(qq{CREATE SUBSCRIPTION everything CONNECTION '$connstr' PUBLICATION everything});
$subscriber->wait_for_subscription_sync($publisher, 'everything');

is(sub_(q{SELECT note FROM orders}), 'before the subscription',
	'the initial copy brought the application table');
is(sub_(q{SELECT string_agg(id || ':' || coalesce(outcome, 'held'), ',' ORDER BY id) FROM pgsem.claims}),
	"$sub_claims[0]:held,$sub_claims[1]:held,$sub_claims[2]:released",
	'the initial copy left the subscriber\'s claims alone');

# Both sides claim, renew and release on; the publisher's changes stream to the subscriber.
my $log_offset = -s $subscriber->logfile;
my @more_pub = map { pub(qq{SELECT sem_claim('pub-only', 10, '1 hour')}) } 1 .. 5;
pub(qq{SELECT sem_renew($pub_claims[0], '2 hours')});
pub(qq{SELECT sem_release($pub_claims[1])});
my @more_sub = map { sub_(qq{SELECT sem_claim('sub-only', 10, '1 hour')}) } 1 .. 5;
is("@more_sub", "@more_pub", 'the two sides keep drawing the same ids');
pub(q{INSERT INTO orders VALUES (2, 'after the claims')});
$publisher->wait_for_catchup('everything');

is(sub_(q{SELECT string_agg(note, ', ' ORDER BY id) FROM orders}),
	'before the subscription, after the claims',
	'the application table keeps flowing past the claims');
is(sub_(q{SELECT count(*) FROM pgsem.claims WHERE name = 'pub-only'}),
	'0', 'no publisher claim reached the subscriber');
is(sub_(qq{SELECT sem_held($sub_claims[1])}),
	't', 'the publisher\'s release of the same id left the subscriber\'s claim held');
is(sub_(q{SELECT count(*) FROM sem_holders WHERE name = 'sub-only'}),
	'5', 'the subscriber\'s own claims work');
like(sub_(q{SELECT sem_claim('shared-name', 4, '1 hour')}),
	qr/^\d+$/, 'the subscriber keeps granting claims on a name both sides use');
pub(q{SELECT sem_declare('declared-both', 7)});
pub(q{SELECT sem_declare('declared-pub-only', 2)});
pub(q{INSERT INTO orders VALUES (3, 'after the declarations')});
$publisher->wait_for_catchup('everything');
is(sub_(q{SELECT count(*) FROM orders}), '3', 'the rows after the declarations arrived');
is(sub_(q{SELECT string_agg(name || '=' || n, ',' ORDER BY name) FROM sem_declarations}),
	'declared-both=5', 'the subscriber keeps its own declaration; none of the publisher\'s came');
is(sub_(q{SELECT count(*) FROM pg_stat_subscription WHERE subname = 'everything' AND pid IS NOT NULL}),
	'1', 'the apply worker is running');
ok(!$subscriber->log_contains(qr/duplicate key|logical replication apply worker .* exited/,
		$log_offset),
	'the subscriber log shows no duplicate key and no apply worker exit');

# Other writers are untouched by the trigger: a superuser's own INSERT into pgsem.claims on the
# subscriber lands (pg_restore of a data-only dump writes this way).
sub_(q{INSERT INTO pgsem.claims
         SELECT 999999, 'restored', 0, 1, now(), now() + interval '1 hour', interval '1 hour',
                NULL, NULL, 0, 10, 'restore'});
is(sub_(q{SELECT sem_held(999999)}), 't', 'a row written by another writer is kept');

$subscriber->stop;
$publisher->stop;
done_testing();
