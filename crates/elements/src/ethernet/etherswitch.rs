//! # EtherSwitch
//!
//! Learning, forwarding Ethernet switch.
//!
//! ## Synopsis
//! `EtherSwitch([TIMEOUT])`
//!
//! ## Ports and processing
//! Two or more push inputs, as many push outputs. Input N and output N are
//! the two directions of the switch's port N (one LAN each).
//!
//! ## Description
//! A frame arriving on input I with source address A teaches the switch
//! that A lives behind port I. A frame to a unicast destination the switch
//! has learned leaves by that port only; one whose destination is behind
//! the port it came from is dropped (it already reached its LAN). Every
//! other frame (group destination, unknown or expired destination) is
//! flooded: a copy leaves by every output except the one of its own port,
//! highest port first.
//!
//! Ages are measured with the frames' timestamp annotations, as in Click:
//! an association older than TIMEOUT seconds is forgotten when a frame is
//! next sent to that address. TIMEOUT 0 turns learning off: the element is
//! a hub.
//!
//! EtherSwitch knows nothing of the spanning tree: to keep a port from
//! forwarding, put Suppressors before and after the switch (see
//! EtherSpanTree and conf/switch-stp.click). Flooded copies to a suppressed
//! port are then dropped by the output Suppressor, and frames from a
//! suppressed port never reach the switch, so nothing is learned there.
//!
//! Frames shorter than an Ethernet header (14 bytes) are dropped and
//! counted (Click reads past their end).
//!
//! ## Keywords
//! - **TIMEOUT** (seconds, rounded to whole seconds): how long an
//!   association lasts without traffic from that address. Default 300;
//!   0 makes a hub.
//!
//! ## Handlers
//! - `table` (read): one line `ADDRESS PORT` per association, in Click's
//!   hash table order (stale ones included until they are next looked up).
//! - `timeout` (read/write): TIMEOUT.
//! - `drops` (read, rclick addition): frames dropped as too short.
//!
//! ## Example
//! ```click
//! s :: EtherSwitch(TIMEOUT 60);
//! FromDevice(eth0) -> [0]s[0] -> Queue -> ToDevice(eth0);
//! FromDevice(eth1) -> [1]s[1] -> Queue -> ToDevice(eth1);
//! FromDevice(eth2) -> [2]s[2] -> Queue -> ToDevice(eth2);
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use rclick_core::batch::BATCH_CAPACITY;
use rclick_core::conf::{parse_seconds, Args};
use rclick_core::element::processing;
use rclick_core::wire::ether::{EtherAddr, EtherFrame};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, Timestamp};

const NONE: u32 = u32::MAX;
/// Click's HashContainer starts with 63 buckets.
const INITIAL_BUCKETS: usize = 63;

/// One learned association.
#[derive(Clone, Copy, Debug)]
struct Entry {
    addr: EtherAddr,
    port: usize,
    stamp: Timestamp,
    next: u32,
}

/// The address table: a chained hash table laid out as Click's
/// `HashTable<EtherAddress, AddrInfo>` (same hash, bucket counts, growth
/// and chain order), so that the `table` listing comes out in Click's
/// order. Entries live in one vector, reused after removals: learning a
/// new address may grow it, forwarding never allocates.
#[derive(Debug)]
pub struct AddrTable {
    buckets: Vec<u32>,
    entries: Vec<Entry>,
    free: Vec<u32>,
    len: usize,
}

impl Default for AddrTable {
    fn default() -> Self {
        AddrTable {
            buckets: vec![NONE; INITIAL_BUCKETS],
            entries: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

/// Click's `EtherAddress::hashcode()`: the address as three host-order
/// (little-endian) 16-bit words, combined in a C `int` and widened to
/// `size_t` with sign extension.
fn click_hash(a: &EtherAddr) -> u64 {
    let o = a.octets();
    let d = |i: usize| u32::from(u16::from_le_bytes([o[2 * i], o[2 * i + 1]]));
    let h = (d(2) | (d(1) << 16)) ^ (d(0) << 9);
    h as i32 as i64 as u64
}

impl AddrTable {
    fn bucket(&self, a: &EtherAddr) -> usize {
        (click_hash(a) % self.buckets.len() as u64) as usize
    }

    /// Number of associations.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn find(&self, a: &EtherAddr) -> Option<u32> {
        let mut i = self.buckets[self.bucket(a)];
        while i != NONE {
            let e = &self.entries[i as usize];
            if e.addr == *a {
                return Some(i);
            }
            i = e.next;
        }
        None
    }

    /// The port and time of `a`'s association.
    pub fn get(&self, a: &EtherAddr) -> Option<(usize, Timestamp)> {
        self.find(a).map(|i| {
            let e = &self.entries[i as usize];
            (e.port, e.stamp)
        })
    }

    /// Associates `a` with `port` at time `stamp`: an existing entry is
    /// updated where it is; a new one goes to the head of its bucket,
    /// after the table grows when it holds more than two entries per
    /// bucket (Click's HashTable::set).
    pub fn set(&mut self, a: EtherAddr, port: usize, stamp: Timestamp) {
        if let Some(i) = self.find(&a) {
            let e = &mut self.entries[i as usize];
            e.port = port;
            e.stamp = stamp;
            return;
        }
        self.len += 1;
        if self.len > 2 * self.buckets.len() {
            self.rehash(self.buckets.len() + 1);
        }
        let b = self.bucket(&a);
        let entry = Entry {
            addr: a,
            port,
            stamp,
            next: self.buckets[b],
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = entry;
                i
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        self.buckets[b] = i;
    }

    /// Forgets `a`.
    pub fn remove(&mut self, a: &EtherAddr) {
        let b = self.bucket(a);
        let mut prev: Option<u32> = None;
        let mut i = self.buckets[b];
        while i != NONE {
            let next = self.entries[i as usize].next;
            if self.entries[i as usize].addr == *a {
                match prev {
                    Some(p) => self.entries[p as usize].next = next,
                    None => self.buckets[b] = next,
                }
                self.free.push(i);
                self.len -= 1;
                return;
            }
            prev = Some(i);
            i = next;
        }
    }

    /// Forgets every address associated with `port`.
    pub fn remove_port(&mut self, port: usize) {
        let addrs: Vec<EtherAddr> = self.iter().filter(|e| e.1 == port).map(|e| e.0).collect();
        for a in addrs {
            self.remove(&a);
        }
    }

    /// Click's rehash: the next bucket count of the form 2^k - 1 that is at
    /// least `n`; old buckets are walked in order and each entry pushed to
    /// the head of its new bucket.
    fn rehash(&mut self, n: usize) {
        let mut nb = 1usize;
        while nb < n {
            nb = ((nb + 1) << 1) - 1;
        }
        if nb == self.buckets.len() {
            return;
        }
        let old = std::mem::replace(&mut self.buckets, vec![NONE; nb]);
        for head in old {
            let mut i = head;
            while i != NONE {
                let next = self.entries[i as usize].next;
                let b = self.bucket(&self.entries[i as usize].addr);
                self.entries[i as usize].next = self.buckets[b];
                self.buckets[b] = i;
                i = next;
            }
        }
    }

    /// Every association in Click's iteration order.
    pub fn iter(&self) -> impl Iterator<Item = (EtherAddr, usize, Timestamp)> + '_ {
        self.buckets.iter().flat_map(move |&head| {
            let mut i = head;
            std::iter::from_fn(move || {
                if i == NONE {
                    return None;
                }
                let e = &self.entries[i as usize];
                i = e.next;
                Some((e.addr, e.port, e.stamp))
            })
        })
    }

    /// Removes every association.
    pub fn clear(&mut self) {
        *self = AddrTable::default();
    }
}

/// The learning logic EtherSwitch and ListenEtherSwitch share.
#[derive(Debug)]
pub struct Learner {
    pub table: AddrTable,
    /// Seconds; 0: no learning (a hub).
    pub timeout: u32,
    pub drops: u64,
}

impl Default for Learner {
    fn default() -> Self {
        Learner {
            table: AddrTable::default(),
            timeout: 300,
            drops: 0,
        }
    }
}

/// Where a frame goes.
pub enum Route {
    /// Flood to every port but the one it came from.
    Flood,
    /// To this port only.
    Port(usize),
    /// Its destination is behind the port it came from.
    Back,
}

impl Learner {
    /// Learns from frame `p` arriving on `port` and says where it goes;
    /// `None` for a frame too short to be Ethernet.
    pub fn route(&mut self, port: usize, p: &Packet) -> Option<Route> {
        let (src, dst) = match EtherFrame::new_checked(p.data()) {
            Ok(f) => (f.src(), f.dst()),
            Err(_) => {
                self.drops += 1;
                return None;
            }
        };
        if self.timeout == 0 {
            return Some(Route::Flood);
        }
        let now = p.timestamp_anno();
        self.table.set(src, port, now);
        if dst.is_group() {
            return Some(Route::Flood);
        }
        let Some((out, stamp)) = self.table.get(&dst) else {
            return Some(Route::Flood);
        };
        let limit = stamp + Timestamp::from_sec_nsec(i64::from(self.timeout), 0);
        if now < limit {
            Some(if out == port {
                Route::Back
            } else {
                Route::Port(out)
            })
        } else {
            self.table.remove(&dst);
            Some(Route::Flood)
        }
    }

    /// The `table` handler.
    pub fn table_text(&self) -> String {
        let mut s = String::new();
        for (a, port, _) in self.table.iter() {
            let _ = writeln!(s, "{a} {port}");
        }
        s
    }

    /// Reads TIMEOUT.
    pub fn configure(&mut self, conf: &str) -> ConfigResult {
        let mut args = Args::new(conf);
        let t = args.read_with("TIMEOUT", parse_seconds);
        args.complete()?;
        if let Some(t) = t {
            self.timeout = whole_seconds(t);
        }
        Ok(())
    }

    /// The `timeout` write handler (Click saturates large values).
    pub fn write_timeout(&mut self, v: &str) -> Result<(), String> {
        match parse_seconds(v.trim()) {
            Ok(t) => {
                self.timeout = whole_seconds(t);
                Ok(())
            }
            Err(e) if e == "out of range" => {
                self.timeout = u32::MAX;
                Ok(())
            }
            Err(_) => Err("expected timeout (integer)".into()),
        }
    }
}

/// A duration as whole seconds, rounded to nearest, saturating.
fn whole_seconds(t: Duration) -> u32 {
    let s = t.as_secs() + u64::from(t.subsec_nanos() >= 500_000_000);
    u32::try_from(s).unwrap_or(u32::MAX)
}

/// Sends `p` from `source` out of every output but `source`, highest
/// first, the original on the last (Click's EtherSwitch::broadcast).
pub fn flood(ctx: &mut Ctx, source: usize, p: Packet) {
    let n = ctx.noutputs();
    let last = if source == 0 { 1 } else { 0 };
    if last >= n {
        return;
    }
    for i in (last + 1..n).rev() {
        if i != source {
            ctx.emit(i, p.clone());
        }
    }
    ctx.emit(last, p);
}

#[derive(Default)]
pub struct EtherSwitch {
    learner: Learner,
}

impl EtherSwitch {
    /// The learned table.
    pub fn learner(&self) -> &Learner {
        &self.learner
    }

    /// Sets TIMEOUT (seconds) and returns the old value (EtherSpanTree
    /// shortens aging during topology changes).
    pub fn set_timeout(&mut self, t: u32) -> u32 {
        std::mem::replace(&mut self.learner.timeout, t)
    }

    /// Forgets every address learned on `port` (EtherSpanTree, when the
    /// port is blocked).
    pub fn forget_port(&mut self, port: usize) {
        self.learner.table.remove_port(port);
    }
}

// Click's order; rclick's `drops` first, so it is listed after Click's.
const HANDLERS: &[Handler<EtherSwitch>] = &[
    Handler::data("drops", |e| &e.learner.drops),
    Handler::read("table", |e, _| e.learner.table_text()),
    Handler::read_write(
        "timeout",
        |e, _| e.learner.timeout.to_string(),
        |e, v, _| e.learner.write_timeout(v),
    ),
];

rclick_core::element_class!(EtherSwitch);

impl Element for EtherSwitch {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "2-/="
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn flow_code(&self) -> &'static str {
        "#/[^#]"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.learner.configure(conf)
    }

    fn push(&mut self, port: usize, mut batch: Batch, ctx: &mut Ctx) {
        // Learn and route every frame first (nothing downstream runs before
        // this returns), then send the batch on whole when every frame
        // takes the same port: the usual case between two busy hosts.
        // Otherwise each frame leaves by its own way, in arrival order.
        const FLOOD: u32 = u32::MAX;
        const DROP: u32 = u32::MAX - 1;
        let mut routes = [DROP; BATCH_CAPACITY];
        let mut common = None;
        let mut uniform = true;
        for (slot, p) in routes.iter_mut().zip(batch.packets()) {
            *slot = match self.learner.route(port, p) {
                Some(Route::Flood) => FLOOD,
                Some(Route::Port(out)) => out as u32,
                Some(Route::Back) | None => DROP,
            };
            uniform &= *slot < DROP && *common.get_or_insert(*slot) == *slot;
        }
        match common {
            Some(out) if uniform => ctx.emit_batch(out as usize, batch),
            _ => {
                for (p, route) in batch.drain().zip(routes) {
                    match route {
                        FLOOD => flood(ctx, port, p),
                        DROP => {}
                        out => ctx.emit(out as usize, p),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(i: u32) -> EtherAddr {
        let b = i.to_be_bytes();
        EtherAddr([0x02, 0, b[0], b[1], b[2], b[3]])
    }

    #[test]
    fn table_set_get_remove_and_growth() {
        let mut t = AddrTable::default();
        for i in 0..1000 {
            t.set(
                addr(i),
                (i % 7) as usize,
                Timestamp::from_sec_nsec(i64::from(i), 0),
            );
        }
        assert_eq!(t.len(), 1000);
        assert!(t.buckets.len() >= 500);
        for i in 0..1000 {
            assert_eq!(t.get(&addr(i)).map(|x| x.0), Some((i % 7) as usize));
        }
        for i in (0..1000).step_by(2) {
            t.remove(&addr(i));
        }
        assert_eq!(t.len(), 500);
        assert_eq!(t.iter().count(), 500);
        assert!(t.get(&addr(2)).is_none());
        assert!(t.get(&addr(3)).is_some());
        // Reuses freed slots.
        let n = t.entries.len();
        t.set(addr(5000), 1, Timestamp::default());
        assert_eq!(t.entries.len(), n);
    }

    #[test]
    fn click_hash_sign_extends() {
        // d1 = 0x8000 sets the int's sign bit.
        let a = EtherAddr([0, 0, 0x00, 0x80, 0, 0]);
        assert_eq!(click_hash(&a), 0xffff_ffff_8000_0000);
    }
}
