//! # LinearIPLookup
//!
//! IP routing lookup using a linear table.
//!
//! ## Synopsis
//! `LinearIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! Expects a destination IP address annotation with each packet. Looks up
//! that address in its routing table using longest-prefix match, sets the
//! destination annotation to the route's gateway (if it has one), and emits
//! the packet on the route's output. A packet without a route is dropped and
//! counted; the first five such drops print `LinearIPLookup: no gw for
//! HEX` (Click prints one per packet).
//!
//! Each argument is a route: a prefix (`ADDR/LEN`, `ADDR/MASK`, or a bare
//! address meaning `/32`; AddressInfo names are accepted at configuration
//! time), an optional gateway (`-` for none), and an output port. If a
//! prefix occurs twice, the first route is kept and a warning printed.
//!
//! Lookups scan the table, most specific mask first, so they cost time in
//! proportion to the number of routes; prefer RadixIPLookup or
//! DirectIPLookup for large tables. LinearIPLookup is the one table that
//! also accepts non-contiguous masks.
//!
//! Hot swap: the new element takes the old table, with every change made
//! through the handlers, in place of its configured routes.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): the routes, one `PREFIX GW OUT` line each (`-` for no
//!   gateway).
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW` for the
//!   address; `-1` if no route matches.
//! - `add` (write): `ADDR/MASK [GW] OUT`; fails if a route for the prefix
//!   exists.
//! - `set` (write): adds or replaces a route.
//! - `remove` (write): `ADDR/MASK [GW OUT]`; with GW and OUT, only a route
//!   with that gateway and output is removed.
//! - `ctrl` (write): lines of `add ...`, `set ...`, `remove ...`, applied as
//!   one atomic operation: if any line fails, none takes effect.
//! - `flush` (write): removes every route (an rclick extension here; Click
//!   has it on DirectIPLookup).
//! - `memory` (read): route and next-hop counts and bytes held (rclick
//!   extension).
//! - `drops` (read): packets dropped for lack of a route (rclick extension).
//!
//! The `handlers` listing shows Click's handlers in Click's order and then
//! rclick's extensions, just before the standard handlers.
//!
//! ## Example
//! ```click
//! rt :: LinearIPLookup(18.26.4.24/32 0, 18.26.4.0/24 1,
//!                      0.0.0.0/0 18.26.4.1 1);
//! src :: FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
//! rt[0] -> ToHost;
//! rt[1] -> Discard;
//! ```
//! then `rclick -h 'rt.lookup 18.26.4.9' conf.click` prints `1`.

use super::routetable::{LinearLpm, NoRouteMessage, RouteLookup, TableClass};

pub type LinearIPLookup = RouteLookup<LinearIPLookupClass>;

rclick_core::element_class!(LinearIPLookup);

pub enum LinearIPLookupClass {}

impl TableClass for LinearIPLookupClass {
    const CLASS: &'static str = "LinearIPLookup";
    type Lpm = LinearLpm;
    const TABS: bool = false;
    const CLICK_FLUSH: bool = false;
    const NO_ROUTE: NoRouteMessage = NoRouteMessage::Linear;
}
