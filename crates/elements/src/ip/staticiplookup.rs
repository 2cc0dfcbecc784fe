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
//! ## Example
//! ```click
//! rt :: StaticIPLookup(10.0.0.0/8 0, 10.1.0.0/16 10.1.0.1 1, 0/0 2);
//! ```

use super::routetable::{LinearLpm, NoRouteMessage, RouteLookup, Style, TableClass};

pub type StaticIPLookup = RouteLookup<StaticIPLookupClass>;

/// StaticIPLookup's lookup structure and style.
pub enum StaticIPLookupClass {}

impl TableClass for StaticIPLookupClass {
    type Lpm = LinearLpm;
    const STYLE: Style = Style {
        class: "StaticIPLookup",
        dynamic: false,
        tabs: false,
        no_route: NoRouteMessage::Linear,
    };
}

rclick_core::element_class!(StaticIPLookup);
