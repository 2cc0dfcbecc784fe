//! # IPClassifier
//!
//! Classifies IP packets by contents, with tcpdump-like patterns.
//!
//! ## Synopsis
//! `IPClassifier(PATTERN1, ..., PATTERNN)`
//!
//! ## Ports and processing
//! One push input; N push outputs, one per pattern.
//!
//! ## Description
//! Sends each packet to the output of the first pattern it matches and
//! drops packets that match none. Input packets must have their IP header
//! annotation set (CheckIPHeader or MarkIPHeader do this); the transport
//! header is the one the annotation gives (the IP header length past the
//! IP header otherwise).
//!
//! Primitives:
//! - `ip proto PROTO` (`tcp`, `udp`, `icmp`, `igmp`, `ipip`, ... or a
//!   number); a bare protocol name (`tcp`) means the same.
//! - `[SRCORDST] host ADDR`, `[SRCORDST] net ADDR/LEN` or
//!   `net ADDR mask MASK`; SRCORDST is `src`, `dst`, `src or dst` (the
//!   default) or `src and dst`. A bare address or prefix is a host or net.
//! - `[SRCORDST] [tcp | udp] port PORT`: a number or a name (`www`, `ssh`,
//!   `domain`, ... or a PortInfo name); without `tcp`/`udp` either
//!   protocol is accepted (`tcpudp port PORT` says so explicitly). A bare
//!   port name is a port.
//! - `ip vers`, `ip hl`, `ip id`, `ip tos`, `ip dscp`, `ip ttl`, `ip len`
//!   with a value; `ip ect`, `ip ce`; `ip frag`, `ip unfrag` (bare `frag`,
//!   `unfrag` too).
//! - `tcp opt FLAG` (`syn`, `fin`, `ack`, `rst`, `psh`, `urg`; a bare flag
//!   name too): TCP packets with that flag set; `tcp win N`.
//! - `icmp type TYPE`: a number or a name (`echo`, `echo-reply`,
//!   `unreachable`, `timeexceeded`, ...).
//! - `ip[POS]`, `ip[POS:LEN] VALUE`: the LEN (1-4) bytes at POS of the IP
//!   header; `transp[POS:LEN]`, `tcp[...]`, `udp[...]`, `icmp[...]` for the
//!   transport header. The field must lie within one aligned 4-byte word.
//! - `ether src ETH`, `ether dst ETH`, `ether host ETH` (source or
//!   destination), also written `[SRCORDST] ether host ETH` as in Click:
//!   the Ethernet addresses in the 14 bytes before the IP header. ETH is
//!   `00:01:02:03:04:05`, `00-01-02-03-04-05` or an AddressInfo name. The
//!   bytes must be part of the packet's frame: the Ethernet header that
//!   Strip(14) left in the headroom, or data before the IP header (after
//!   MarkIPHeader(14)). A packet without them fails the test, so
//!   `not ether src ETH` matches it. An Ethernet address where an IP
//!   address could stand (`src 00:01:02:03:04:05`, `host ETH`) is an
//!   Ethernet test too, as in Click.
//! - `true`, `false`.
//!
//! Every primitive but `tcp opt`, `host`, `net` and `ether` takes an optional
//! relation `==`, `!=`, `<`, `>`, `<=`, `>=` before its value, and an
//! optional bit mask `& MASK` before that (`src tcp port & 0xff00 == 0x1200`;
//! for addresses the mask may be an address: `src & 255.0.0.0 = 10.0.0.0`).
//! `port != 5` matches TCP/UDP packets whose port is not 5, unlike
//! `not port 5`, which also matches other protocols. Primitives combine
//! with `and`/`&&` (or juxtaposition), `or`/`||`, `not`/`!`, parentheses
//! and `COND ? A : B` (the colon separated by spaces). A value with no
//! qualifier repeats the previous primitive's: `src port 80 or 81`. A
//! pattern `-`, `any` or `all` matches every packet.
//!
//! Port, TCP option, ICMP type, TCP window and transport-header fields only
//! match first fragments of the protocol they name; a packet too short to
//! hold a tested field fails that test, and fails a negated relation
//! (`port != 80`, `port < 1024`) too, while `not` turns the failure into a
//! match (`not port 80` matches a packet cut before its ports), as in
//! Click 2.1. One difference remains: Click tests `port <= 1023` on the
//! port's high byte alone, so it answers a packet cut after that byte;
//! rclick needs the whole port.
//!
//! Patterns compile to a decision program of masked header-word range
//! tests with shared tests made once and decided tests skipped; long runs
//! of rules that are conjunctions of field ranges (ACLs) are matched with
//! per-field bit vectors instead, so matching cost grows slowly with the
//! rule count, and memory in proportion to it (the vectors have a budget
//! per rule; see IPFilter). Matching allocates nothing.
//!
//! ## Keywords
//! None: every argument is a pattern.
//!
//! ## Handlers
//! - `program` (read): Click's program for the patterns, byte for byte as
//!   Click 2.1 lists it: one step per line, `STEP OFFSET/VALUE%MASK
//!   yes->T  no->T` (and `short->yes` where a packet too short for the
//!   masked bytes takes the yes branch), OFFSET in Click's coordinates
//!   (the Ethernet header's words from 0, the IP header at 256, the
//!   transport header at 512), T `step N`, an output `[N]` or `[X]` for
//!   drop; or `all->[N]` when one output takes every packet (a drop prints
//!   as `[2147483647]`); then `safe length N` and `alignment offset 0`.
//!   The program is rebuilt for the handler as Click builds and optimizes
//!   it (patterns merged in pairs, each merge optimized); rclick
//!   classifies with its own compiled form, which the listing does not
//!   show. Past 5,000 tests in Click's program (summed over the
//!   patterns, before optimizing) there is no listing: Click's optimizer
//!   takes time and memory quadratic in the tests; the handler says so.
//!   Where Click 2.1 aborts listing (an assertion in its optimizer, e.g.
//!   `ip proto != 6 and tcp opt syn, ip[8] < 89`), rclick lists the
//!   program it optimizes to.
//!
//! ## Example
//! ```click
//! c :: IPClassifier(dst tcp port www or dst tcp port ssh, icmp type echo, -);
//! c[0] -> web :: Discard; c[1] -> ping :: Discard; c[2] -> other :: Discard;
//! ```

use super::ipfilter::IPFilter;

rclick_core::element_class!("IPClassifier" => IPFilter::classifier());
