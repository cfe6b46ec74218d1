#!/usr/bin/perl
# The MaxMind peer's file for bench/maxmind_peer_bench.cc, made with MaxMind's own writer
# (libmaxmind-db-writer-perl): an IPv4 MaxMind DB whose record for each range is {"country_code": VALUE}.
# Usage: make_range_mmdb.pl OUT.mmdb < RANGES, one "FIRST,LAST,VALUE" line per range (dotted IPv4 addresses,
# disjoint ranges; a later line overwrites an earlier one where they overlap).
use strict;
use warnings;

use MaxMind::DB::Writer::Tree;

my $out = shift @ARGV or die "usage: make_range_mmdb.pl OUT.mmdb < RANGES\n";
my $tree = MaxMind::DB::Writer::Tree->new(
  ip_version            => 4,
  record_size           => 24,
  database_type         => 'Plan-B-Bench-Country',
  languages             => ['en'],
  description           => { en => 'Plan B bench: the ranges of the ranged map' },
  remove_reserved_networks => 0,
  map_key_type_callback => sub { 'utf8_string' },
);
while (my $line = <STDIN>) {
  chomp $line;
  my ($first, $last, $value) = split /,/, $line, 3;
  die "bad line $.: $line\n" unless defined $value;
  $tree->insert_range($first, $last, { country_code => $value });
}
open my $fh, '>:raw', $out or die "cannot write $out: $!\n";
$tree->write_tree($fh);
close $fh or die "cannot write $out: $!\n";
