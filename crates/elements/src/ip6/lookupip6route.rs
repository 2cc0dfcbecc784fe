//! # LookupIP6Route
//!
//! IPv6 routing table.
//!
//! ## Synopsis
//! `LookupIP6Route(DST1/MASK1 [GW1] OUT1, DST2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! Input: IPv6 packets with a destination IPv6 address annotation
//! (GetIP6Address(24) sets it). Looks the address up by longest-prefix
//! match, sets the annotation to the route's gateway unless the gateway is
//! `::`, and emits the packet on the route's output. Each argument is a
//! route: a prefix (`3ffe:1ce1:2::/80`, or a bare address meaning /128),
//! an optional gateway, and an output. A later route for the same prefix
//! replaces an earlier one. Packets without a route are dropped (and
//! counted). Masks must be contiguous, as in Click.
//!
//! Click's table is a list searched in full for every new destination;
//! rclick's is the trie of RadixIP6Lookup (a 16-bit root, then 4-bit
//! levels), so a full IPv6 Internet table of 200,000 prefixes loads in
//! well under a second, and a lookup reads one entry per 4 bits past the
//! first 16 (nine for a /48; about 3 million lookups a second for random
//! destinations over such a table, most of them cache misses; a run of
//! packets to one destination costs one lookup). The behaviour is Click's: `add` replaces a route for the same prefix,
//! `remove` of a missing route succeeds, and the table lists routes in
//! slot order (a removed route's slot is reused).
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): `# Active routes`, then one `PREFIX\tGW\tOUT` line
//!   per route (empty without routes).
//! - `add` (write): `ADDR/MASK [GW] OUT`, replacing a route for the
//!   prefix.
//! - `remove` (write): `ADDR/MASK [GW OUT]`.
//! - `ctrl` (write): lines of `add ...`, `set ...`, `remove ...`, applied
//!   as one operation (all or none).
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW`; `-1`
//!   without a route (rclick extension).
//! - `set` (write), `flush` (write): add or replace; remove everything
//!   (rclick extensions).
//! - `memory`, `drops` (read): table size; packets without a route
//!   (rclick extensions).
//!
//! ## Example
//! ```click
//! rt :: LookupIP6Route(3ffe:1ce1:2:0:200::1/128 ::0 0,
//!                      3ffe:1ce1:2::/80 ::0 1,
//!                      ::0/0 ::c0a8:1 2);
//! ```

use super::route6::{Class6, RouteLookup6};

pub type LookupIP6Route = RouteLookup6<LookupIP6RouteClass>;

rclick_core::element_class!(LookupIP6Route);

pub enum LookupIP6RouteClass {}

impl Class6 for LookupIP6RouteClass {
    const NAME: &'static str = "LookupIP6Route";
    const CLICK_RULES: bool = true;
}
