//! # LookupIPRoute
//!
//! Simple static IP routing table (the original Click name of
//! StaticIPLookup).
//!
//! ## Synopsis
//! `LookupIPRoute(DST1/MASK1 [GW1] OUT1, DST2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! Input: IP packets with a destination IP address annotation. Looks up the
//! address by longest-prefix match, sets the destination annotation to the
//! route's gateway (if specified), and emits the packet on the route's
//! output. Each comma-separated argument is a route: a destination and mask,
//! optionally a gateway address, and an output index. Packets without a
//! route are dropped and counted; the first five print `LookupIPRoute: no gw
//! for HEX`.
//!
//! This is the element of the Click paper's IP router. Click 1.x exported
//! StaticIPLookup under this name as well; Click 2.1 kept only
//! StaticIPLookup. rclick provides both, with identical behaviour: a
//! static table whose routes cannot be changed at run time.
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
//! // Deliver packets for the router itself and broadcasts to output 0,
//! // route the local net directly and everything else via 18.26.4.1.
//! rt :: LookupIPRoute(18.26.4.24/32 0, 18.26.4.255/32 0, 18.26.4.0/32 0,
//!                     18.26.4.0/24 1, 0.0.0.0/0 18.26.4.1 1);
//! ```

use super::routetable::RouteLookup;
use super::staticiplookup::StaticClass;

pub type LookupIPRoute = RouteLookup<StaticClass<true>>;

rclick_core::element_class!(LookupIPRoute);
