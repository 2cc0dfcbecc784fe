//! # DirectIPLookup
//!
//! IP routing lookup using direct-indexed tables (DIR-24-8).
//!
//! ## Synopsis
//! `DirectIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! Expects a destination IP address annotation with each packet. Looks up
//! that address using longest-prefix match, sets the destination annotation
//! to the route's gateway (if specified), and emits the packet on the
//! route's output. Packets without a route are dropped silently and counted.
//!
//! Each argument is a route, `ADDR/MASK [GW] OUT` (`-` for no gateway).
//! Masks must be contiguous. If a prefix occurs twice, the first route is
//! kept and a warning printed.
//!
//! DirectIPLookup implements DIR-24-8-BASIC (Gupta, Lin and McKeown,
//! "Routing Lookups in Hardware at Memory Access Speeds", Infocom 1998): a
//! table of 2^24 entries indexed by the top 24 address bits answers every
//! prefix up to /24 in one memory access; an address covered by a longer
//! prefix takes a second access into a 256-entry table for its /24. Routes
//! are added and removed incrementally at a high rate. The first table takes
//! 64 MB (Click's takes 48 MB), allocated as zero pages that the kernel
//! fills in only as routes touch them.
//!
//! Click limits DirectIPLookup to 32,768 second-level tables and 32,768
//! distinct (gateway, output) pairs; rclick's entries are 32 bits wide, so
//! the limits are 2^31 second-level tables and 2^25 next hops, and the
//! `no memory to store route` error appears only when memory runs out.
//!
//! Hot swap: the new element takes the old table, with every change made
//! through the handlers, in place of its configured routes.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): the routes, one per line, tab-separated `PREFIX GW OUT`
//!   columns (`-` for no gateway). rclick lists them in insertion order
//!   (reusing the places of removed routes); Click lists them in hash order.
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW`; `-1` if no
//!   route matches.
//! - `add` (write): `ADDR/MASK [GW] OUT`; fails if a route for the prefix
//!   exists.
//! - `set` (write): adds or replaces a route.
//! - `remove` (write): `ADDR/MASK [GW OUT]`.
//! - `ctrl` (write): lines of `add ...`, `set ...`, `remove ...`, applied as
//!   one atomic operation.
//! - `flush` (write): clears the whole table in one operation.
//! - `memory` (read): route and next-hop counts, bytes held by the lookup
//!   tables and by the route list, and the number of second-level tables
//!   (rclick extension).
//! - `drops` (read): packets dropped for lack of a route (rclick extension).
//!
//! The `handlers` listing shows Click's handlers in Click's order and then
//! rclick's extensions, just before the standard handlers.
//!
//! ## Example
//! ```click
//! rt :: DirectIPLookup(0.0.0.0/0 10.0.0.1 0, 192.168.0.0/16 1, 192.168.7.128/25 2);
//! ```

use super::routetable::{Dir24_8, NoRouteMessage, RouteLookup, TableClass};

pub type DirectIPLookup = RouteLookup<DirectIPLookupClass>;

rclick_core::element_class!(DirectIPLookup);

pub enum DirectIPLookupClass {}

impl TableClass for DirectIPLookupClass {
    const CLASS: &'static str = "DirectIPLookup";
    type Lpm = Dir24_8;
    const NO_ROUTE: NoRouteMessage = NoRouteMessage::Silent;
}
