# A TCP proxy on loopback in front of a node that loses the answer to one statement, the way a
# dropped connection does: once the client has sent a query containing `marker`, the server's
# replies are held back, and when the server says it is ready for the next query (ReadyForQuery:
# the statement has ended, its transaction committed) both connections are closed. The client
# never sees the answer of a statement that ran and committed.
package LossyProxy;

use strict;
use warnings;

use Exporter 'import';
use IO::Select;
use IO::Socket::INET;
use IO::Socket::UNIX;
use POSIX ();

our @EXPORT = qw(start_lossy_proxy stop_lossy_proxy);

# Starts the proxy in a child process; returns its pid and the port it listens on.
sub start_lossy_proxy
{
	my ($node, $marker) = @_;
	my $listener = IO::Socket::INET->new(
		LocalAddr => '127.0.0.1',
		LocalPort => 0,
		Listen => 5,
		ReuseAddr => 1) or die "cannot listen: $!";
	my $port = $listener->sockport;
	my $pid = fork() // die "cannot fork: $!";
	if ($pid == 0)
	{
		serve($listener, $node->host, $node->port, $marker);
		POSIX::_exit(0);
	}
	close $listener;
	return ($pid, $port);
}

sub stop_lossy_proxy
{
	my ($pid) = @_;
	kill 'KILL', $pid;
	waitpid($pid, 0);
}

sub connect_server
{
	my ($host, $port) = @_;
	return IO::Socket::UNIX->new(Peer => "$host/.s.PGSQL.$port") if $host =~ m{^/};
	return IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port);
}

# Whether `held` (the server's messages since the marker, from a message boundary) holds a
# complete ReadyForQuery message.
sub ready_for_query
{
	my ($held) = @_;
	my $offset = 0;
	while (length($held) - $offset >= 5)
	{
		my ($type, $length) = unpack('a N', substr($held, $offset, 5));
		return 0 if length($held) - $offset < 1 + $length;
		return 1 if $type eq 'Z';
		$offset += 1 + $length;
	}
	return 0;
}

sub serve
{
	my ($listener, $host, $port, $marker) = @_;
	while (my $client = $listener->accept)
	{
		my $server = connect_server($host, $port) or die "cannot reach the server: $!";
		my ($seen, $held, $armed) = ('', '', 0);
		my $select = IO::Select->new($client, $server);
	  RELAY: while (1)
		{
			for my $from ($select->can_read)
			{
				my $bytes;
				my $count = sysread($from, $bytes, 65536);
				last RELAY if !$count;
				if ($from == $client)
				{
					$seen .= $bytes;
					$armed = 1 if index($seen, $marker) >= 0;
					syswrite($server, $bytes);
				}
				elsif (!$armed)
				{
					syswrite($client, $bytes);
				}
				else
				{
					$held .= $bytes;
					last RELAY if ready_for_query($held);
				}
			}
		}
		close $client;
		close $server;
	}
}

1;
