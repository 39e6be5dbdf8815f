#!/usr/bin/env perl
# A manni-bot/1 bot in Perl with core modules only (JSON::PP), written from docs/bot-protocol.md.
#
# Strategy: keep the hand and pass the Manni, discard and announce the first legal choice; in
# play, take tricks with the highest card that beats the trick in trump and grand, and stay low
# in nullo, where the ace is the lowest card of its suit.
use strict;
use warnings;
use JSON::PP;

$| = 1;    # flush after each answer: the referee waits for whole lines
my $json = JSON::PP->new->canonical;

# Strength of a card name such as "QS" within its suit (ace low in nullo).
sub strength {
    my ($name, $nullo) = @_;
    my $rank = index("23456789TJQKA", substr($name, 0, 1));
    return ($nullo && $rank == 12) ? -1 : $rank;
}

# One legal action for an "act" request.
sub choose {
    my ($request) = @_;
    my @legal = @{ $request->{legal} };
    my @names = @{ $request->{legal_names} };
    for my $wanted (qw(exchange_done keep_hand pass_manni)) {
        for my $i (0 .. $#names) {
            return $legal[$i] if $names[$i] eq $wanted;
        }
    }
    return $legal[0] if $request->{phase} ne "play";    # discard the lowest card / the first contract
    my $nullo = ($request->{contract}{kind} // "") eq "nullo";
    my @order = sort { strength($names[$a], $nullo) <=> strength($names[$b], $nullo) } 0 .. $#names;
    my ($low, $high) = ($legal[ $order[0] ], $legal[ $order[-1] ]);
    my @trick = @{ $request->{trick} };
    return $high unless @trick;                     # lead the highest card
    return $low if $nullo;                          # follow as low as possible
    my $led = substr($trick[0], 1, 1);
    my $top = -1;
    for my $card (@trick) {
        $top = strength($card, 0) if substr($card, 1, 1) eq $led && strength($card, 0) > $top;
    }
    my $best = $names[ $order[-1] ];
    return (substr($best, 1, 1) eq $led && strength($best, 0) > $top) ? $high : $low;
}

while (my $line = <STDIN>) {
    my $message = $json->decode($line);
    my $type = $message->{type};
    if ($type eq "hello") {
        print $json->encode({ type => "hello", protocol => "manni-bot/1", name => "simple-perl", version => "1" }), "\n";
    } elsif ($type eq "act") {
        print $json->encode({ action => choose($message) }), "\n";
    } elsif ($type eq "bye") {
        last;
    }    # game, deal_end, game_end and anything new: nothing to answer
}
