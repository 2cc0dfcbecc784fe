//! # RadixIPLookup
//!
//! IP lookup using a multibit radix trie.
//!
//! ## Synopsis
//! `RadixIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! Expects a destination IP address annotation with each packet. Looks up
//! that address using longest-prefix match, sets the destination annotation
//! to the route's gateway (if specified), and emits the packet on the
//! route's output. Packets without a route are dropped and counted; the
//! first five print `IPRouteTable: no route for ADDR`.
//!
//! Each argument is a route, `ADDR/MASK [GW] OUT` (`-` for no gateway).
//! Masks must be contiguous. If a prefix occurs twice, the first route is
//! kept and a warning printed.
//!
//! The trie has a 65536-entry first level indexed by the top 16 address
//! bits, then levels of 16 entries consuming 4 bits each, created only under
//! prefixes longer than /16; prefixes are expanded into every entry they
//! cover, so a lookup reads one entry per level: three for a /24, at most
//! five. (Click's trie has a 256-entry first level and 16-entry levels, up
//! to seven.) Entries hold small next-hop ids; a full Internet table of
//! about 900,000 prefixes takes a few tens of megabytes and loads in well
//! under a second. Routes can be added and removed at any rate.
//!
//! Hot swap: the new element takes the old table, with every change made
//! through the handlers, in place of its configured routes.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): the routes, one per line, tab-separated `PREFIX GW OUT`
//!   columns as Click prints them (`-` for no gateway).
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW`; `-1` if no
//!   route matches.
//! - `add` (write): `ADDR/MASK [GW] OUT`; fails if a route for the prefix
//!   exists.
//! - `set` (write): adds or replaces a route.
//! - `remove` (write): `ADDR/MASK [GW OUT]`.
//! - `ctrl` (write): lines of `add ...`, `set ...`, `remove ...`, applied as
//!   one atomic operation.
//! - `flush` (write): removes every route.
//! - `memory` (read): route and next-hop counts, bytes held by the lookup
//!   structure and by the route list, and the trie's shape (rclick
//!   extension).
//! - `drops` (read): packets dropped for lack of a route (rclick extension).
//!
//! The `handlers` listing shows Click's handlers in Click's order and then
//! rclick's extensions, just before the standard handlers.
//!
//! ## Example
//! ```click
//! rt :: RadixIPLookup(10.0.0.0/8 0, 10.1.0.0/16 10.1.0.1 1, 0.0.0.0/0 192.168.1.1 2);
//! ```
//! then `write rt.add 172.16.0.0/12 1` and `read rt.lookup 172.16.9.9`.

use super::routetable::{Radix16_4, RouteLookup, TableClass};

pub type RadixIPLookup = RouteLookup<RadixIPLookupClass>;

rclick_core::element_class!(RadixIPLookup);

pub enum RadixIPLookupClass {}

impl TableClass for RadixIPLookupClass {
    const CLASS: &'static str = "RadixIPLookup";
    type Lpm = Radix16_4;
}
