//! # RadixIP6Lookup
//!
//! IPv6 routing table for large tables (a multibit trie).
//!
//! ## Synopsis
//! `RadixIP6Lookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! The IPv6 twin of RadixIPLookup (rclick's; Click 2.1 has only
//! LookupIP6Route). Expects a destination IPv6 address annotation; looks
//! it up by longest-prefix match, sets the annotation to the route's
//! gateway (if not `::`) and emits the packet on the route's output.
//! Packets without a route are dropped and counted.
//!
//! The trie has a 65536-entry root indexed by the top 16 address bits,
//! then nodes of 16 entries consuming 4 bits each, made only under
//! prefixes longer than /16; prefixes are expanded into the entries they
//! cover, so a lookup reads one entry per level (nine for a /48). Entries
//! hold small next-hop ids. A full IPv6 Internet table (about 200,000
//! prefixes) takes under 100 MB and loads in well under a second; routes
//! can be added and removed at any rate.
//!
//! Unlike LookupIP6Route, `add` refuses a prefix that has a route (`set`
//! replaces it) and `remove` of a missing route fails, as with the IPv4
//! tables. Hot swap: the new element takes the old table.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): `# Active routes`, then `PREFIX\tGW\tOUT` lines.
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW`; `-1`
//!   without a route.
//! - `add`, `set`, `remove`, `ctrl`, `flush` (write): change the routes
//!   (`ctrl` takes lines of `add`/`set`/`remove`, all or none).
//! - `memory`, `drops` (read): table size; packets without a route.
//!
//! ## Example
//! ```click
//! rt :: RadixIP6Lookup(2001:db8::/32 0, 2001:db8:1::/48 fe80::1 1, ::/0 fe80::2 1);
//! ```
//! then `write rt.add 2001:db8:2::/48 1` and `read rt.lookup 2001:db8:2::5`.

use super::route6::{Class6, RouteLookup6};

pub type RadixIP6Lookup = RouteLookup6<RadixIP6LookupClass>;

rclick_core::element_class!(RadixIP6Lookup);

pub enum RadixIP6LookupClass {}

impl Class6 for RadixIP6LookupClass {
    const NAME: &'static str = "RadixIP6Lookup";
    const CLICK_RULES: bool = false;
}
