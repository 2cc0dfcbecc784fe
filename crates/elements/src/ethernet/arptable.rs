//! # ARPTable
//!
//! Stores IP-to-Ethernet mappings for ARPQueriers to share.
//!
//! ## Synopsis
//! `ARPTable([*keywords* CAPACITY, ENTRY_CAPACITY, ENTRY_PACKET_CAPACITY,
//! CAPACITY_SLIM_FACTOR, TIMEOUT])`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! An ARP table on its own: ARPQueriers given `TABLE` this element's name
//! use it instead of a table of their own, so several queriers (on several
//! interfaces, or a querier and a control program) see the same entries.
//! Entries map an IP address to an Ethernet address, or to nothing yet
//! (an unresolved entry, holding packets that wait for an ARP reply). An
//! entry expires TIMEOUT after its last update; its held packets are then
//! dropped. CAPACITY bounds the packets held in total (beyond it the oldest
//! entries' packets go), ENTRY_CAPACITY the number of entries (the oldest
//! go), ENTRY_PACKET_CAPACITY the packets held per entry. Beyond CAPACITY,
//! packets of the oldest entries are dropped until 1/CAPACITY_SLIM_FACTOR
//! of CAPACITY is free.
//!
//! On a hot swap, a new ARPTable of the same name takes the old one's
//! entries, their ages and their held packets.
//!
//! ## Keywords
//! - **CAPACITY** (unsigned): held packets in total; 0 unlimited. Default
//!   2048.
//! - **ENTRY_CAPACITY** (unsigned): entries; 0 unlimited. Default 65536
//!   (Click's is 0, unlimited; see ARPQuerier for why rclick bounds it).
//! - **ENTRY_PACKET_CAPACITY** (unsigned): held packets per entry; 0
//!   unlimited. Default 0.
//! - **CAPACITY_SLIM_FACTOR** (unsigned, not 0): default 2.
//! - **TIMEOUT** (time): entry lifetime; 0 never expires. Default 300 s.
//!
//! ## Handlers
//! - `table` (read): one line per entry, oldest first: `IP VALID ETH AGE`
//!   (VALID is 1 for a known, unexpired entry; ETH is FF-FF-FF-FF-FF-FF
//!   for an unresolved one).
//! - `drops` (read): packets dropped (expired entries, capacity).
//! - `count` (read): entries. `length` (read): held packets.
//! - `insert` (write): `IP ETH` adds or updates an entry. Packets the entry
//!   held stay held, as in Click (only a querier can send them: the next
//!   ARP reply for the address a querier handles sends them on; otherwise
//!   they go, counted as drops, when the entry expires or is slimmed).
//! - `delete` (write): `IP` makes an entry unresolved (it stays, with its
//!   held packets, as in Click).
//! - `clear` (write): removes every entry, dropping held packets.
//!
//! ## Example
//! ```click
//! arpt :: ARPTable(TIMEOUT 60s);
//! q0 :: ARPQuerier(18.26.4.24, 00:00:C0:AE:67:EF, TABLE arpt);
//! q1 :: ARPQuerier(18.26.7.1, 00:00:C0:4F:71:EF, TABLE arpt);
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rclick_core::conf::{parse_ether, parse_ipv4, parse_seconds, parse_u32, split_words, Args};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, TimerId, Timestamp};

use crate::ip::arpquerier::{lock_table, SharedArpTable, Table};

pub struct ARPTable {
    table: SharedArpTable,
    timer: Option<TimerId>,
}

impl Default for ARPTable {
    fn default() -> Self {
        ARPTable {
            table: Arc::new(Mutex::new(Table::with_defaults())),
            timer: None,
        }
    }
}

impl ARPTable {
    /// The table, for the ARPQueriers that name this element.
    pub(crate) fn shared(&self) -> SharedArpTable {
        Arc::clone(&self.table)
    }

    fn read<R>(&self, f: impl FnOnce(&Table) -> R) -> R {
        f(&lock_table(&self.table))
    }

    fn write_insert(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let words = split_words(value);
        if words.len() != 2 {
            return Err("expected 'IP ETH'".into());
        }
        let ip = parse_ipv4(&words[0]).map_err(|e| format!("IP: {e}"))?;
        let eth = parse_ether(&words[1]).map_err(|e| format!("ETH: {e}"))?;
        lock_table(&self.table).update(ip, eth, ctx.now());
        Ok(())
    }

    fn write_delete(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let words = split_words(value);
        if words.len() != 1 {
            return Err("expected IP address".into());
        }
        let ip = parse_ipv4(&words[0]).map_err(|e| format!("IP: {e}"))?;
        lock_table(&self.table).invalidate(ip, ctx.now());
        Ok(())
    }

    fn schedule_expiry(&self, ctx: &Ctx) {
        let timeout = self.read(|t| t.timeout());
        if let (Some(t), true) = (self.timer, timeout != 0) {
            ctx.schedule_timer_after(t, Timestamp(timeout + 1_000_000_000));
        }
    }
}

const HANDLERS: &[Handler<ARPTable>] = &[
    Handler::read("table", |e, ctx| e.read(|t| t.text(ctx.now()))),
    Handler::read("drops", |e, _| e.read(|t| t.drops()).to_string()),
    Handler::read("count", |e, _| e.read(|t| t.count()).to_string()),
    Handler::read("length", |e, _| e.read(|t| t.length()).to_string()),
    Handler::write("insert", ARPTable::write_insert),
    Handler::write("delete", ARPTable::write_delete),
    Handler::write("clear", |e, _, _| {
        lock_table(&e.table).clear();
        Ok(())
    }),
];

rclick_core::element_class!(ARPTable);

/// A timeout of at most 2^31-1 seconds, as ARPQuerier's.
fn parse_timeout(s: &str) -> Result<Duration, String> {
    match parse_seconds(s)? {
        d if d.as_secs() > i32::MAX as u64 => Err("expected time in seconds".into()),
        d => Ok(d),
    }
}

impl Element for ARPTable {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    /// Writing `config` changes the limits; the entries stay.
    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let capacity = args.read_with("CAPACITY", parse_u32);
        let entry_capacity = args.read_with("ENTRY_CAPACITY", parse_u32);
        let entry_packet_capacity = args.read_with("ENTRY_PACKET_CAPACITY", parse_u32);
        let slim = args.read_with("CAPACITY_SLIM_FACTOR", parse_u32);
        let timeout = args.read_with("TIMEOUT", parse_timeout);
        args.complete()?;
        if slim == Some(0) {
            return Err("CAPACITY_SLIM_FACTOR cannot be zero".into());
        }
        lock_table(&self.table).set_limits(
            capacity,
            entry_capacity,
            entry_packet_capacity,
            slim,
            timeout,
        );
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_timer();
        self.timer = Some(t);
        let timeout = self.read(|t| t.timeout());
        if timeout != 0 {
            ctx.schedule_timer_at(t, ctx.now() + Timestamp(timeout));
        }
        Ok(())
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        lock_table(&self.table).slim(ctx.now());
        self.schedule_expiry(ctx);
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<ARPTable>() else {
            return false;
        };
        if Arc::ptr_eq(&old.table, &self.table) {
            return true;
        }
        let mut mine = lock_table(&self.table);
        mine.take_from(&mut lock_table(&old.table));
        true
    }
}
