#!/usr/bin/perl
# Writes a MaxMind DB file from a small JSON description, with MaxMind's own writer (libmaxmind-db-writer-perl), so
# tests read files made as real ones are, never committed ones. Usage: make_mmdb.pl OUT.mmdb [DESCRIPTION.json]
# (the description from standard input when no file is named):
#   { "ip_version": 6, "record_size": 28, "alias_ipv6_to_ipv4": true, "database_type": "Test",
#     "languages": ["en"], "remove_reserved_networks": false,
#     "types": { "name": "utf8_string", "tags": ["array", "utf8_string"], "big": "uint128", ... },
#     "networks": [ { "network": "1.2.3.0/24", "record": { "name": "x", ... } }, ... ] }
# Networks are inserted in the order given (a later one overwrites an earlier one where they overlap). The writer
# types each map value by its key ("types", through map_key_type_callback); the values are converted here so that
# the JSON can say them: uint64 and uint128 as decimal strings, bytes as hex strings, booleans as true/false.
use strict;
use warnings;

use JSON::PP ();
use Math::Int128 qw(string_to_uint128);
use MaxMind::DB::Writer::Tree;

my $out = shift @ARGV or die "usage: make_mmdb.pl OUT.mmdb [DESCRIPTION.json]\n";
my $text = do { local $/; <> };
my $spec = JSON::PP->new->utf8->decode($text);
my %types = %{ $spec->{types} // {} };

sub convert {
  my ($type, $value, $element_type) = @_;
  die "no type given\n" unless defined $type;
  if ($type eq 'map') {
    my %converted;
    for my $key (keys %{$value}) {
      my $t = $types{$key} // die "no type for key '$key'\n";
      my ($vt, $et) = ref $t ? @{$t} : ($t, undef);
      $converted{$key} = convert($vt, $value->{$key}, $et);
    }
    return \%converted;
  }
  return [ map { convert($element_type, $_) } @{$value} ] if $type eq 'array';
  return string_to_uint128("$value") if $type eq 'uint64' || $type eq 'uint128';
  return pack('H*', $value) if $type eq 'bytes';
  return $value ? 1 : 0 if $type eq 'boolean';
  return "$value" if $type eq 'utf8_string';
  return 0 + $value;  # uint16, uint32, int32, double, float
}

my $tree = MaxMind::DB::Writer::Tree->new(
  ip_version               => $spec->{ip_version},
  record_size              => $spec->{record_size} // 28,
  database_type            => $spec->{database_type} // 'Plan-B-Test',
  languages                => $spec->{languages} // [],
  description              => $spec->{description} // { en => 'Plan B test data' },
  alias_ipv6_to_ipv4       => $spec->{alias_ipv6_to_ipv4} ? 1 : 0,
  remove_reserved_networks => $spec->{remove_reserved_networks} ? 1 : 0,
  map_key_type_callback    => sub { $types{ $_[0] } },
);
for my $n (@{ $spec->{networks} }) {
  $tree->insert_network($n->{network}, convert('map', $n->{record}));
}
open my $fh, '>:raw', $out or die "$out: $!\n";
$tree->write_tree($fh);
close $fh or die "$out: $!\n";
