# The Prometheus files of monitoring/ against the real programs: a preloaded node runs a known
# workload -- claims granted at once, refused, timed out, granted after a wait, a wait ended by
# lock_timeout, renewed, released, a lease reclaimed after it ran out, a pause, 205 more names
# past the exporters' cap of 200 -- and keeps a lease, a session claim, a transaction claim and
# a waiter in place. prometheus-postgres-exporter (--extend.query-path
# monitoring/postgres_exporter.yaml) and prometheus-sql-exporter (monitoring/sql_exporter.yaml
# pointed at the node) connect as an ordinary role; their /metrics must hold every series with
# its exact value for each name (times as sem_stats has them; the oldest wait between two
# readings), the 200 names of the stated ranking and the rest summed into name="(other)". A
# Prometheus server then scrapes both, the sql_exporter's series renamed by the relabelling
# sql_exporter.yaml documents, and evaluates monitoring/pgsem_alerts.yml on them (the callers'
# wait set to 1 s): every rule evaluates without error and only the oldest-wait alert is
# pending, for the waiter's name, from either exporter. Last, promtool check rules and
# promtool test rules pass. A missing program is a failure, not a skip.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use IPC::Run;
use JSON::PP;
use Time::HiRes qw(time sleep);

use FindBin;
use lib $FindBin::Bin;
use PgsemSessions;

my $monitoring = "$FindBin::Bin/../../monitoring";
my %program;
for my $p (qw(prometheus-postgres-exporter prometheus-sql-exporter prometheus promtool))
{
	($program{$p}) = grep { -x } map { "$_/$p" } split /:/, $ENV{PATH};
	ok(defined $program{$p}, "$p is installed");
}
if (grep { !defined } values %program)
{
	diag('Debian: apt-get install prometheus-postgres-exporter prometheus-sql-exporter prometheus');
	done_testing();
	exit;
}

# Programs started here, killed at the end however the script ends.
my @started;
END
{
	local $?;
	for my $h (@started) { eval { $h->kill_kill(grace => 2) } }
}
my $tmp = PostgreSQL::Test::Utils::tempdir();

sub launch
{
	my ($what, $env, @cmd) = @_;
	my $log = "$tmp/$what.log";
	local %ENV = (%ENV, %$env);
	my $h = IPC::Run::start(\@cmd, '<', \undef, '>', $log, '2>&1');
	push @started, $h;
	return $log;
}

sub slurp_log { my $f = shift; return -f $f ? PostgreSQL::Test::Utils::slurp_file($f) : '' }

my $http = HTTP::Tiny->new(timeout => 10);

# GETs $url until $ready->(body) is true: the body, or undef after the default timeout.
sub get_until
{
	my ($url, $ready) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $r = $http->get($url);
		return $r->{content} if $r->{success} && eval { $ready->($r->{content}) };
		sleep 0.2;
	}
	return undef;
}

# ---- the node and the workload ---------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('prometheus');
$node->init(extra => [ '--encoding=UTF8', '--locale=C' ]);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pgsem'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgsem; CREATE ROLE prometheus LOGIN');

sub query { return $node->safe_psql('postgres', shift) }

# p.busy (n = 1): granted, refused, timed out; its holder and a waiter stay.
query(q{SELECT sem_claim('p.busy', 1, '1 hour')});
is(query(q{SELECT sem_claim('p.busy', 1, '1 hour') IS NULL}), 't', 'p.busy: a claim is refused');
is(query(q{SELECT sem_claim('p.busy', 1, '1 hour', '100 milliseconds') IS NULL}), 't',
	'p.busy: a waiting claim times out');
my ($waiter, $waiter_pid) = session($node);
start($waiter, q{SELECT sem_claim('p.busy', 1, '1 hour', '10 minutes')});
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'p.busy'}),
	'p.busy: a claim waits in line');

# p.flow (n = 1): granted after a wait, renewed, released twice, then paused for 200 ms.
my $flow = query(q{SELECT sem_claim('p.flow', 1, '1 hour')});
my ($flower) = session($node);
start($flower, q{SELECT sem_claim('p.flow', 1, '1 hour', '1 minute')});
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM sem_waiters WHERE name = 'p.flow'}),
	'p.flow: a claim waits in line');
sleep 0.1;
query("SELECT sem_release($flow)");
my ($flow2) = finish($flower) =~ /^(\d+)\n1$/;
ok(defined $flow2, 'p.flow: the waiter is granted the released slot');
query("SELECT sem_renew($flow2, '2 hours')");
query("SELECT sem_release($flow2)");
query(q{SELECT sem_pause('p.flow', clock_timestamp() + interval '200 milliseconds')});

# p.expire (n = 1): a lease runs out and the next claim reclaims it.
query(q{SELECT sem_claim('p.expire', 1, '100 milliseconds')});
sleep 0.15;
query(q{SELECT sem_claim('p.expire', 1, '1 hour')});

# p.err (n = 1): a wait ended by lock_timeout.
query(q{SELECT sem_claim('p.err', 1, '1 hour')});
my ($rc, $out, $err) = $node->psql('postgres',
	q{SET lock_timeout = '100ms'; SELECT sem_claim('p.err', 1, '1 hour', '1 minute')});
like($err, qr/lock timeout/, 'p.err: a wait ends with lock_timeout');

# p.kinds (n = 5): a session claim and a transaction claim of 2 permits held open, a lease.
my ($holder_s) = session($node);
$holder_s->query_safe(q{SELECT sem_claim_session('p.kinds', 5)});
my ($holder_x) = session($node);
$holder_x->query_safe(q{BEGIN; SELECT sem_claim_xact('p.kinds', 5, permits => 2)});
query(q{SELECT sem_claim('p.kinds', 5, '1 hour')});

# 205 names with one lease each: 195 keep a label of their own, 10 go into (other).
query(q{SELECT count(sem_claim(format('p.many.%s', lpad(i::text, 3, '0')), 1, '1 hour'))
          FROM generate_series(1, 205) i});

# The pause has run out, the waiter has waited over 1.5 s (the alerts below say 0.8 s).
ok($node->poll_query_until('postgres',
		q{SELECT oldest_wait > '1.5 s' FROM sem_stats WHERE name = 'p.busy'}),
	'p.busy: the waiter has waited 1.5 s');
is(query(q{SELECT count(*) FROM sem_stats WHERE name IS NOT NULL AND granted IS NOT NULL}),
	'210', 'sem_stats counts 210 names');

# What sem_stats says of the times (they no longer move), as Perl numbers printed in full.
sub num { my $v = shift; return defined $v && $v ne '' ? sprintf('%.17g', $v) : 'missing' }
my @times = qw(wait_seconds held_seconds paused_seconds wait_max_seconds);
my %db_time;
for my $row (split /\n/,
	query(q{SELECT name, wait_seconds, held_seconds, paused_seconds, wait_max_seconds
              FROM sem_stats WHERE name IN ('p.busy', 'p.flow', 'p.expire', 'p.err', 'p.kinds')}))
{
	my ($name, @v) = split /\|/, $row;
	@{ $db_time{$name} }{qw(wait_seconds_total held_seconds_total paused_seconds_total
		  wait_max_seconds)} = map { num($_) } @v;
}
ok( $db_time{'p.busy'}{wait_seconds_total} >= 0.1
	  && $db_time{'p.flow'}{wait_seconds_total} >= 0.1
	  && $db_time{'p.flow'}{held_seconds_total} >= 0.1
	  && $db_time{'p.flow'}{paused_seconds_total} >= 0.19,
	'sem_stats has the times waited, held and paused');

# ---- what each exporter must show --------------------------------------------------------------
my @counters = qw(granted_total granted_after_wait_total refused_total timed_out_total
  wait_errors_total released_total expired_permits_total renewed_total permits_granted_total
  wait_seconds_total held_seconds_total paused_seconds_total);
my @gauges = qw(wait_max_seconds leases transaction_slots session_slots permits_in_use waiters
  permits_waited oldest_wait_seconds);
my @columns = (@counters, @gauges);

my %want = (
	'p.busy' => {
		granted_total => 1, refused_total => 1, timed_out_total => 1,
		permits_granted_total => 1, leases => 1, permits_in_use => 1, waiters => 1,
		permits_waited => 1, oldest_wait_seconds => 'between'
	},
	'p.flow' => {
		granted_total => 1, granted_after_wait_total => 1, released_total => 2,
		renewed_total => 1, permits_granted_total => 2
	},
	'p.expire' => {
		granted_total => 2, expired_permits_total => 1, permits_granted_total => 2,
		leases => 1, permits_in_use => 1
	},
	'p.err' => {
		granted_total => 1, wait_errors_total => 1, permits_granted_total => 1, leases => 1,
		permits_in_use => 1
	},
	'p.kinds' => {
		granted_total => 3, permits_granted_total => 4, leases => 1, transaction_slots => 2,
		session_slots => 1, permits_in_use => 4
	},
	'(other)' => { granted_total => 10, permits_granted_total => 10, leases => 10,
		permits_in_use => 10 },
);
%{ $want{$_} } = (%{ $want{$_} }, %{ $db_time{$_} }) for keys %db_time;
my $many = { granted_total => 1, permits_granted_total => 1, leases => 1, permits_in_use => 1 };
my @named = ((sort grep { $_ ne '(other)' } keys %want),
	map { sprintf 'p.many.%03d', $_ } 1 .. 195);

# A name's values as "column=value ...", the oldest wait as "between" when it lies in
# [$low, $high].
sub render
{
	my ($values, $low, $high) = @_;
	return join ' ', map {
		my $v = $values->{$_};
		my $shown = num($v);
		$shown = 'between'
		  if $_ eq 'oldest_wait_seconds' && defined $v && $v > 0 && $v >= $low && $v <= $high;
		"$_=$shown"
	} @columns;
}
sub expected
{
	my $w = shift;
	return join ' ', map {
		my $v = $w->{$_} // 0;
		"$_=" . ($v eq 'between' ? $v : num($v))
	} @columns;
}

# Series of a /metrics text: [name, {labels}, value], and the TYPE of each family.
sub parse_metrics
{
	my $text = shift;
	my (@series, %type);
	for my $line (split /\n/, $text)
	{
		if ($line =~ /^# TYPE (\S+) (\S+)$/) { $type{$1} = $2; next }
		next if $line =~ /^#/ || $line !~ /^(\w+)(?:\{(.*)\})? (\S+)$/;
		my ($metric, $labels, $value) = ($1, $2 // '', $3);
		my %l;
		while ($labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g)
		{
			my ($k, $v) = ($1, $2);
			$v =~ s/\\(.)/$1/g;
			$l{$k} = $v;
		}
		push @series, [ $metric, \%l, $value ];
	}
	return (\@series, \%type);
}

# Checks one exporter's values per name: %$got is name => {column => value}.
sub check_values
{
	my ($who, $got, $low, $high) = @_;
	is_deeply([ sort keys %$got ], [ sort(@named, '(other)') ],
		"$who: the 200 names of the ranking and (other), nothing else");
	for my $name (sort keys %want)
	{
		is(render($got->{$name} // {}, $low, $high), expected($want{$name}),
			"$who: every series of $name");
	}
	my @off = grep { render($got->{$_} // {}, $low, $high) ne expected($many) }
	  map { sprintf 'p.many.%03d', $_ } 1 .. 195;
	is("@off", '', "$who: every series of p.many.001 .. p.many.195");
}

sub oldest_wait
{
	return query(q{SELECT extract(epoch FROM oldest_wait) FROM sem_stats WHERE name = 'p.busy'});
}

# ---- prometheus-postgres-exporter ---------------------------------------------------------------
my $pg_port = PostgreSQL::Test::Cluster::get_free_port();
my $dsn = sprintf 'host=%s port=%d user=prometheus dbname=postgres sslmode=disable',
  $node->host, $node->port;
my $pg_log = launch('postgres_exporter', { DATA_SOURCE_NAME => $dsn },
	$program{'prometheus-postgres-exporter'},
	"--extend.query-path=$monitoring/postgres_exporter.yaml",
	"--web.listen-address=127.0.0.1:$pg_port",
	'--disable-default-metrics', '--disable-settings-metrics',
	'--no-collector.database', '--no-collector.bgwriter', '--log.level=warn');
my $low = oldest_wait();
my $text = get_until("http://127.0.0.1:$pg_port/metrics", sub { $_[0] =~ /^pgsem_/m });
my $high = oldest_wait();
ok(defined $text, 'postgres_exporter serves pgsem_* series')
  or diag(slurp_log($pg_log));
$text //= '';
my ($series, $type) = parse_metrics($text);
like($text, qr/^pg_exporter_user_queries_load_error\{[^}]*\} 0$/m,
	'postgres_exporter: the query file loads');
is(join(' ', map { "$_=" . ($type->{"pgsem_$_"} // 'none') } @columns),
	join(' ', map { "$_=" . (/_total$/ ? 'counter' : 'gauge') } @columns),
	'postgres_exporter: the *_total series are counters, the others gauges');
my %pg_got;
my %pg_labels;
for (@$series)
{
	my ($metric, $l, $v) = @$_;
	next unless $metric =~ /^pgsem_(\w+)$/;
	$pg_got{ $l->{name} // 'NO NAME' }{$1} = $v;
	$pg_labels{ join ',', sort keys %$l } = 1;
}
is(join(' ', sort keys %pg_labels), 'name,server', 'postgres_exporter: labels name and server');
check_values('postgres_exporter', \%pg_got, $low, $high);

# ---- prometheus-sql-exporter --------------------------------------------------------------------
my $sql_config = PostgreSQL::Test::Utils::slurp_file("$monitoring/sql_exporter.yaml");
my $url = sprintf 'postgres://prometheus@/postgres?host=%s&port=%d&sslmode=disable',
  $node->host, $node->port;
is($sql_config =~ s{^(\s+- )'postgres://[^']*'$}{$1'$url'}mg, 1,
	'sql_exporter.yaml has one connection, pointed at the node');
PostgreSQL::Test::Utils::append_to_file("$tmp/sql_exporter.yaml", $sql_config);
my $sql_port = PostgreSQL::Test::Cluster::get_free_port();
$low = oldest_wait();
my $sql_log = launch('sql_exporter', {}, $program{'prometheus-sql-exporter'},
	'-config.file', "$tmp/sql_exporter.yaml", '-web.listen-address', "127.0.0.1:$sql_port");
$text = get_until("http://127.0.0.1:$sql_port/metrics", sub { $_[0] =~ /^sql_pgsem\{/m });
$high = oldest_wait();
ok(defined $text, 'sql_exporter serves sql_pgsem') or diag(slurp_log($sql_log));
$text //= '';
($series, $type) = parse_metrics($text);
is($type->{sql_pgsem}, 'gauge', 'sql_exporter: sql_pgsem is a gauge');
my %sql_got;
my %sql_labels;
for (@$series)
{
	my ($metric, $l, $v) = @$_;
	next unless $metric eq 'sql_pgsem';
	$sql_got{ $l->{name} // 'NO NAME' }{ $l->{col} // 'NO COL' } = $v;
	$sql_labels{ join ',', sort keys %$l } = 1;
}
is(join(' ', sort keys %sql_labels), 'col,database,driver,host,name,sql_job,user',
	'sql_exporter: labels col, name and its own');
check_values('sql_exporter', \%sql_got, $low, $high);
unlike(slurp_log($sql_log), qr/"level":"error"/, 'sql_exporter logs no error');

# The two files run the same query.
sub block_after
{
	my ($text, $key) = @_;
	my ($indent, $body) = $text =~ /^([ ]*)\Q$key\E \|\n((?:\1[ ]+\S.*\n|\n)+)/m;
	return 'none' unless defined $body;
	my ($first) = $body =~ /^([ ]+)/;
	return $body =~ s/^\Q$first\E//mgr =~ s/\s+\z//r;
}
my $pg_query = block_after(PostgreSQL::Test::Utils::slurp_file("$monitoring/postgres_exporter.yaml"),
	'query:');
is(block_after($sql_config, 'query:'), $pg_query, 'the two files hold the same query');
like($pg_query, qr/rank <= 200\b/, 'which keeps 200 names');

# ---- Prometheus: both exporters scraped, the alerts evaluated on what they give -----------------
my ($relabel) = PostgreSQL::Test::Utils::slurp_file("$monitoring/sql_exporter.yaml")
  =~ /^(#   scrape_configs:\n(?:#   .*\n)+)/m;
ok(defined $relabel, 'sql_exporter.yaml shows its scrape config');
$relabel = ($relabel // '') =~ s/^#   //mgr;
$relabel =~ s/localhost:9237/127.0.0.1:$sql_port/;
my $rules = PostgreSQL::Test::Utils::slurp_file("$monitoring/pgsem_alerts.yml");
is($rules =~ s/^(\s+expr: )vector\(30\)$/$1vector(1)/mg, 1,
	'the callers\' wait is the one number set to 30 s (1 s here)');
PostgreSQL::Test::Utils::append_to_file("$tmp/pgsem_alerts.yml", $rules);
PostgreSQL::Test::Utils::append_to_file("$tmp/prometheus.yml", <<"EOF" . $relabel . <<"EOF2");
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $tmp/pgsem_alerts.yml
EOF
  - job_name: postgres_exporter
    static_configs: [{targets: ['127.0.0.1:$pg_port']}]
EOF2
my $prom_port = PostgreSQL::Test::Cluster::get_free_port();
my $prom = "http://127.0.0.1:$prom_port/api/v1";
my $prom_log = launch('prometheus', {}, $program{prometheus},
	"--config.file=$tmp/prometheus.yml", "--storage.tsdb.path=$tmp/prometheus-data",
	"--web.listen-address=127.0.0.1:$prom_port", '--log.level=warn');
my $json = JSON::PP->new;
my $busy = get_until("$prom/query?query=pgsem_granted_total%7Bname%3D%22p.busy%22%7D",
	sub { @{ $json->decode($_[0])->{data}{result} } == 2 });
ok(defined $busy, 'Prometheus has pgsem_granted_total of p.busy from both exporters')
  or diag(slurp_log($prom_log));
is( join(' ',
		sort map { "$_->{metric}{job}:" . ($_->{metric}{col} // '') . ":$_->{value}[1]" }
		  @{ $json->decode($busy // '{"data":{"result":[]}}')->{data}{result} }),
	'pgsem_sql_exporter::1 postgres_exporter::1',
	'the same value, renamed and without col from sql_exporter');
my $alerts = get_until("$prom/alerts",
	sub { @{ $json->decode($_[0])->{data}{alerts} } >= 2 });
is( join(' ',
		sort map { "$_->{labels}{alertname}:$_->{labels}{name}:$_->{labels}{job}:$_->{state}" }
		  @{ $json->decode($alerts // '{"data":{"alerts":[]}}')->{data}{alerts} }),
	'PgsemOldestWaitNearTimeout:p.busy:pgsem_sql_exporter:pending '
	  . 'PgsemOldestWaitNearTimeout:p.busy:postgres_exporter:pending',
	'the oldest wait past 80 % of 1 s is pending for p.busy from each exporter, nothing else');
my @rules = map { @{ $_->{rules} } }
  @{ $json->decode($http->get("$prom/rules")->{content})->{data}{groups} };
is(join(' ', map { "$_->{name}:$_->{health}" } @rules),
	join(' ', map { "$_:ok" } qw(pgsem:callers_wait_seconds PgsemWaitersGrowing
		  PgsemOldestWaitNearTimeout PgsemLeasesReclaimed PgsemAtCapacity PgsemRefusals
		  PgsemWaitsTimingOut)),
	'every rule evaluates without error');

# ---- promtool --------------------------------------------------------------------------------
for my $args ([ 'check', 'rules', "$monitoring/pgsem_alerts.yml" ],
	[ 'test', 'rules', "$monitoring/pgsem_alerts_test.yml" ])
{
	my ($stdout, $stderr);
	my $ok = IPC::Run::run([ $program{promtool}, @$args ], '>', \$stdout, '2>', \$stderr);
	ok($ok, "promtool @$args[0 .. 1] passes") or diag("$stdout$stderr");
}

diag("---- $_\n" . slurp_log("$tmp/$_.log")) for Test::More->builder->is_passing
  ? ()
  : qw(postgres_exporter sql_exporter prometheus);

query("SELECT pg_cancel_backend($waiter_pid)");
eval { $waiter->quit };
$holder_s->quit;
$holder_x->quit;
$node->stop;
done_testing();
