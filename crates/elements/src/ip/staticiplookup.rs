//! # StaticIPLookup
//!
//! Simple static IP routing table.
//!
//! ## Synopsis
//! `StaticIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! Acts like LinearIPLookup, but its routes are fixed by the configuration:
//! there are no handlers to add or remove routes. Each argument is a route,
//! `ADDR/MASK [GW] OUT`; packets are routed by longest-prefix match on their
//! destination annotation, which is set to the gateway when the route has
//! one. Packets without a route are dropped and counted, and the first five
//! print `StaticIPLookup: no gw for HEX`.
//!
//! Because the configuration is the whole table, hot swap takes nothing
//! from the old element.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): the routes, one `PREFIX GW OUT` line each.
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW`; `-1` if no
//!   route matches.
//! - `memory` (read): route and next-hop counts and bytes held (rclick
//!   extension).
//! - `drops` (read): packets dropped for lack of a route (rclick extension).
//!
//! The `handlers` listing shows Click's handlers in Click's order and then
//! rclick's extensions, just before the standard handlers.
//!
//! ## Example
//! ```click
//! rt :: StaticIPLookup(10.0.0.0/8 0, 10.1.0.0/16 10.1.0.1 1, 0/0 2);
//! ```

use super::routetable::{LinearLpm, NoRouteMessage, RouteLookup, TableClass};

pub type StaticIPLookup = RouteLookup<StaticClass<false>>;

rclick_core::element_class!(StaticIPLookup);

/// The static table, under its name or (`OLD_NAME`) under Click's original
/// name LookupIPRoute, which differs only in its messages.
pub enum StaticClass<const OLD_NAME: bool> {}

impl<const OLD_NAME: bool> TableClass for StaticClass<OLD_NAME> {
    const CLASS: &'static str = if OLD_NAME {
        "LookupIPRoute"
    } else {
        "StaticIPLookup"
    };
    type Lpm = LinearLpm;
    const DYNAMIC: bool = false;
    const TABS: bool = false;
    const NO_ROUTE: NoRouteMessage = NoRouteMessage::Linear;
}
