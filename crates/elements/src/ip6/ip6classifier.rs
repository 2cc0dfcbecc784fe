//! # IP6Classifier
//!
//! Classifies IPv6 packets by their contents.
//!
//! ## Synopsis
//! `IP6Classifier(PATTERN_1, ..., PATTERN_N)`
//!
//! ## Ports and processing
//! One push input; N push outputs.
//!
//! ## Description
//! rclick's (Click 2.1 has none; the IPv6 elements report built one with
//! this name). The IPv6 twin of IPClassifier: a packet, an IPv6 packet with
//! its network header set, leaves on the output of the first pattern it
//! matches, or is dropped. A pattern `-`, `any` or `all` matches every
//! packet.
//!
//! Primitives (with an optional relation `==`, `!=`, `<`, `>`, `<=`, `>=`
//! before a numeric value):
//! - `ip6`: an IPv6 packet. `ip6 nxt N`: the fixed header's next header;
//!   `ip6 proto N` (or `proto N`): the upper-layer protocol, found past
//!   the extension headers (hop-by-hop, routing, destination options,
//!   fragment, AH); N a number or a name (`tcp`, `udp`, `icmp6`, `hopopt`,
//!   `routing`, `fragment`, `esp`, `ah`, `none`, `dstopts`, `sctp`, `gre`).
//! - `ip6 flow N`, `ip6 tc N`, `dscp N`, `ecn N`, `hlim N`, `plen N`: the
//!   flow label, traffic class, its DSCP and ECN parts, the hop limit, the
//!   payload length.
//! - `[src|dst|src or dst|src and dst] host ADDR`, `... net ADDR/LEN`, or
//!   the address or prefix alone: source and/or destination addresses
//!   (AddressInfo names allowed).
//! - `tcp`, `udp`, `icmp6`: the upper-layer protocol (present: a first
//!   fragment or no fragment).
//! - `[src|dst] [tcp|udp] port N` (numbers or service names), `icmp6 type
//!   T` (a number or `echo-request`, `echo-reply`, `unreachable`,
//!   `packet-too-big`, `time-exceeded`, `parameter-problem`,
//!   `router-solicit`, `router-advert`, `neighbor-solicit`,
//!   `neighbor-advert`, `redirect`), `icmp6 code N`, `tcp opt F` (`syn`,
//!   `ack`, `fin`, `rst`, `psh`, `urg`), `tcp win N`.
//! - `frag`, `unfrag`: has, or has not, a fragment header.
//! - `true`, `false`.
//!
//! Primitives combine with `and`/`&&` (or juxtaposition), `or`/`||`,
//! `not`/`!`, parentheses and `COND ? A : B`. A value with no qualifier
//! repeats the previous primitive's: `dst port 80 or 443`; an address or
//! prefix alone is a host or net test keeping only the previous src/dst,
//! as in IPFilter (`tcp or 2001:db8::1`). Relations other
//! than `==` fail on packets too short to hold the field, so `port != 80`
//! matches TCP and UDP packets with another port, while `not port 80`
//! matches everything else too.
//!
//! Patterns compile like IPClassifier's (shared tests made once, decided
//! tests skipped, long runs of range-conjunction rules matched by per-field
//! bit vectors); matching copies the fixed header to the stack and
//! allocates nothing.
//!
//! ## Keywords
//! None: every argument is a pattern.
//!
//! ## Handlers
//! - `program` (read): the compiled program (see IP6Filter).
//!
//! ## Example
//! ```click
//! c :: IP6Classifier(icmp6 type neighbor-solicit, tcp dst port 80 or 443, -);
//! ```

use super::ip6filter::IP6Filter;

rclick_core::element_class!("IP6Classifier" => IP6Filter::classifier());
