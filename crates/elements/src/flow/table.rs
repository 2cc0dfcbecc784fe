//! The flow table shared by a FlowTable element and the gates and
//! stateful flow elements that use it (not an element class).
//!
//! A record per flow, keyed by the exact six-tuple (`sixtuple::Key`: five
//! tuple plus incoming interface), in a hash map from key to record index.
//! Each record has a row of 64-bit state slots: every element using the
//! table registers the slots it needs at initialization (a gate one, for
//! its cached binding; FlowCounter two; FlowDRRQueue one) and reads and
//! writes its own slots of the packet's record. A record is found by the
//! packet's flow annotation (`FLOW_ANNO`: record index + 1 and the
//! record's stamp) when an element upstream already looked it up, else by
//! hashing the key; a stale annotation (the record was recycled since: its
//! stamp changed; or it names another flow's record, the packet's key
//! having changed or the annotation having been copied from another
//! packet) falls back to hashing. The packet's key is parsed either way;
//! the annotation saves the hash and the probe.
//!
//! Records live in pools that grow 1024, 2048, 4096, ... up to CAPACITY
//! (each growth reserves once; nothing allocates per packet afterwards).
//! At CAPACITY the least recently used record is recycled; a record idle
//! for longer than TIMEOUT expires: it is recycled first, and a packet
//! finding its own flow's record expired starts it afresh (state slots
//! cleared). Recycling gives a record a new stamp, so annotations on
//! packets still in flight no longer name it.
//!
//! Threads: the table is shared (`Arc`) and locked once per batch by each
//! element using it (as the IPRewriter family's table), so gates on
//! several threads share one table and a packet may cross threads with
//! its annotation. In a router of several threads the lock is a mutex; in
//! a router of one thread (the FlowTable knows at configuration) it is a
//! flag taken with one atomic swap, cheaper than a mutex's uncontended
//! path (see [`SharedTable::for_threads`]).

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rclick_core::{Batch, Packet};

use super::sixtuple::{Key, KeyError};
use crate::ip::ipcommon::AddrHashBuilder;

/// The annotation bytes holding a packet's flow record: the record index
/// plus one (0: none) and the record's stamp, both 32-bit native order.
/// Bytes 40..48 of the 48-byte area (Click 2.x layout), which no other
/// rclick element uses.
pub const FLOW_ANNO: usize = rclick_core::packet::anno::FLOW;

const NIL: u32 = u32::MAX;
const FIRST_POOL: usize = 1024;

/// Stamps are unique across every table of the process (until 2^32
/// records have been allocated), so an annotation set by one table never
/// names a record of another.
static STAMPS: AtomicU32 = AtomicU32::new(1);

fn next_stamp() -> u32 {
    loop {
        let s = STAMPS.fetch_add(1, Ordering::Relaxed);
        if s != 0 {
            return s;
        }
    }
}

/// One flow.
#[derive(Clone, Copy)]
pub struct Record {
    pub key: Key,
    pub stamp: u32,
    /// Last packet, router clock nanoseconds.
    pub last: i64,
    /// When the record was (re)started.
    pub first: i64,
    pub packets: u64,
    prev: u32,
    next: u32,
    live: bool,
}

/// What [`Table::lookup_in_batch`] remembers of the previous packet of a
/// batch. Start each batch with `LastLookup::default()`.
#[derive(Clone, Copy, Default)]
pub struct LastLookup {
    key: Key,
    anno_in: u64,
    anno_out: u64,
    now: i64,
    idx: u32,
    /// Found by the annotation (counted in `anno_hits`, not touched).
    by_anno: bool,
    valid: bool,
}

/// The table (behind the shared handle's mutex).
pub struct Table {
    map: HashMap<Key, u32, AddrHashBuilder>,
    recs: Vec<Record>,
    slots: Vec<u64>,
    nslots: usize,
    free: Vec<u32>,
    /// Most recently used first.
    head: u32,
    tail: u32,
    live: usize,
    pool: usize,
    capacity: usize,
    /// Idle timeout in nanoseconds; 0: none.
    timeout: i64,
    pub hits: u64,
    pub misses: u64,
    pub anno_hits: u64,
    pub recycled: u64,
    pub expired: u64,
    pub bad: u64,
}

/// A shared handle to a table.
#[derive(Clone)]
pub struct SharedTable(Arc<Shared>);

/// The table and its lock: a mutex in a router of several threads; in a
/// router of one thread, where nothing ever contends for it, a flag set
/// and cleared with one atomic swap and one store (a mutex's uncontended
/// path also checks for waiters on release and for poisoning both ways,
/// which is most of a gate's per-batch cost at small batches).
struct Shared {
    mutex: Option<Mutex<()>>,
    held: AtomicBool,
    table: UnsafeCell<Table>,
}

// SAFETY: `table` is reached only through a `TableGuard`, which holds the
// mutex or (without one) the `held` flag, taken with Acquire and released
// with Release, so at most one guard exists at a time and each sees the
// previous one's writes.
unsafe impl Sync for Shared {}

/// The table, locked (see [`SharedTable::lock`]).
pub struct TableGuard<'a> {
    shared: &'a Shared,
    _mutex: Option<MutexGuard<'a, ()>>,
}

impl std::ops::Deref for TableGuard<'_> {
    type Target = Table;
    #[inline(always)]
    fn deref(&self) -> &Table {
        // SAFETY: the guard holds the lock (see `Shared`).
        unsafe { &*self.shared.table.get() }
    }
}

impl std::ops::DerefMut for TableGuard<'_> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Table {
        // SAFETY: the guard holds the lock (see `Shared`).
        unsafe { &mut *self.shared.table.get() }
    }
}

impl Drop for TableGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if self._mutex.is_none() {
            self.shared.held.store(false, Ordering::Release);
        }
    }
}

impl SharedTable {
    /// A table for a router of several threads (or for any use outside
    /// a router): locked by a mutex.
    pub fn new(capacity: usize, timeout_ns: i64) -> SharedTable {
        SharedTable::for_threads(capacity, timeout_ns, true)
    }

    /// A table locked by a mutex when `threaded`, else by a flag (still a
    /// lock, correct under contention, but one that spins: for a router
    /// of one thread, where nothing contends).
    pub fn for_threads(capacity: usize, timeout_ns: i64, threaded: bool) -> SharedTable {
        SharedTable(Arc::new(Shared {
            mutex: threaded.then(|| Mutex::new(())),
            held: AtomicBool::new(false),
            table: UnsafeCell::new(Table::new(capacity, timeout_ns)),
        }))
    }

    /// Whether the table is locked by a mutex (see [`for_threads`](Self::for_threads)).
    pub fn threaded(&self) -> bool {
        self.0.mutex.is_some()
    }

    /// Locks the table (once per batch). A panic in another holder does
    /// not poison it for good: the table is consistent between calls.
    #[inline(always)]
    pub fn lock(&self) -> TableGuard<'_> {
        let shared: &Shared = &self.0;
        match &shared.mutex {
            Some(m) => TableGuard {
                shared,
                _mutex: Some(m.lock().unwrap_or_else(|e| e.into_inner())),
            },
            None => {
                if shared.held.swap(true, Ordering::Acquire) {
                    shared.wait();
                }
                TableGuard {
                    shared,
                    _mutex: None,
                }
            }
        }
    }

    pub fn same(&self, other: &SharedTable) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Shared {
    /// The flag is held: by another thread (a one-thread table used from
    /// two, which the router never does), so wait for it.
    #[cold]
    #[inline(never)]
    fn wait(&self) {
        while self.held.swap(true, Ordering::Acquire) {
            std::thread::yield_now();
        }
    }
}

impl Table {
    pub fn new(capacity: usize, timeout_ns: i64) -> Table {
        Table {
            map: HashMap::with_hasher(AddrHashBuilder::default()),
            recs: Vec::new(),
            slots: Vec::new(),
            nslots: 0,
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            live: 0,
            pool: 0,
            capacity: capacity.max(1),
            timeout: timeout_ns.max(0),
            hits: 0,
            misses: 0,
            anno_hits: 0,
            recycled: 0,
            expired: 0,
            bad: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records allocated so far (the pools' size).
    pub fn allocated(&self) -> usize {
        self.recs.len()
    }

    /// Live flows.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    pub fn timeout_ns(&self) -> i64 {
        self.timeout
    }

    /// Reserves `n` state slots per record for one element; returns the
    /// first. Existing records get the new slots zeroed.
    pub fn register_slots(&mut self, n: usize) -> usize {
        let base = self.nslots;
        let new = base + n;
        if !self.recs.is_empty() && n > 0 {
            let mut slots = Vec::with_capacity(self.recs.capacity() * new);
            slots.resize(self.recs.len() * new, 0u64);
            for r in 0..self.recs.len() {
                slots[r * new..r * new + base]
                    .copy_from_slice(&self.slots[r * base..r * base + base]);
            }
            self.slots = slots;
        }
        self.nslots = new;
        base
    }

    #[inline]
    pub fn record(&self, idx: u32) -> &Record {
        &self.recs[idx as usize]
    }

    #[inline]
    pub fn slot(&self, idx: u32, slot: usize) -> u64 {
        self.slots[idx as usize * self.nslots + slot]
    }

    #[inline]
    pub fn slot_mut(&mut self, idx: u32, slot: usize) -> &mut u64 {
        &mut self.slots[idx as usize * self.nslots + slot]
    }

    /// The record of `p`'s flow, found by annotation or key, created if
    /// new; marks `p` with it and counts the packet.
    #[inline]
    pub fn lookup(&mut self, p: &mut Packet, now: i64) -> Result<u32, KeyError> {
        let key = match Key::of(p) {
            Ok(k) => k,
            Err(e) => {
                self.bad += 1;
                return Err(e);
            }
        };
        let anno_in = u64::from_ne_bytes(p.anno_bytes(FLOW_ANNO));
        Ok(self.lookup_key(p, key, anno_in, now))
    }

    /// [`lookup`](Self::lookup) for the packets of one batch, in order,
    /// at one `now`: a packet with the same key and the same flow
    /// annotation on arrival as the packet before it (a train of one
    /// flow's packets) gets that packet's answer without a probe, with the
    /// same counts and marks a full lookup would give. Returns the record
    /// and whether the answer was the previous packet's, so that the
    /// caller can reuse its own per-flow decision too.
    #[inline]
    pub fn lookup_in_batch(
        &mut self,
        p: &mut Packet,
        now: i64,
        last: &mut LastLookup,
    ) -> Result<(u32, bool), KeyError> {
        let key = match Key::of(p) {
            Ok(k) => k,
            Err(e) => {
                self.bad += 1;
                return Err(e);
            }
        };
        let anno_in = u64::from_ne_bytes(p.anno_bytes(FLOW_ANNO));
        if last.valid && last.key == key && last.anno_in == anno_in && last.now == now {
            // Nothing has used the table since the previous packet, so
            // the record is still live, the most recently used and
            // touched at `now`: only the counts remain.
            if last.by_anno {
                self.anno_hits += 1;
            } else {
                self.hits += 1;
                self.recs[last.idx as usize].packets += 1;
                p.set_anno_bytes(FLOW_ANNO, &last.anno_out.to_ne_bytes());
            }
            return Ok((last.idx, true));
        }
        let anno_hits = self.anno_hits;
        let idx = self.lookup_key(p, key, anno_in, now);
        let anno_out = u64::from_ne_bytes(p.anno_bytes(FLOW_ANNO));
        *last = LastLookup {
            key,
            anno_in,
            anno_out,
            now,
            idx,
            // Found by the annotation, or the annotation the packets
            // arrive with names the record just started (it predicted
            // the fresh stamp: garbage, or stamps wrapped): the next
            // packet's annotation finds it.
            by_anno: self.anno_hits != anno_hits || anno_out == anno_in,
            valid: true,
        };
        Ok((idx, false))
    }

    /// The record of a batch whose packets are all one flow, arriving
    /// with one flow annotation (a train, the common case): looks the
    /// first up, then counts and marks the rest as
    /// [`lookup_in_batch`](Self::lookup_in_batch) would, in one pass
    /// without per-packet probes. `None`, with nothing counted or changed,
    /// when the batch is empty, mixed or has a packet without a key.
    #[inline(always)]
    pub fn lookup_one_flow_batch(&mut self, batch: &mut Batch, now: i64) -> Option<u32> {
        let (first, rest) = batch.packets_mut().split_first_mut()?;
        let key = Key::of(first).ok()?;
        let anno_in = u64::from_ne_bytes(first.anno_bytes(FLOW_ANNO));
        if !rest.iter().all(|p| {
            u64::from_ne_bytes(p.anno_bytes(FLOW_ANNO)) == anno_in && Key::of(p) == Ok(key)
        }) {
            return None;
        }
        let anno_hits = self.anno_hits;
        let idx = self.lookup_key_train(first, key, anno_in, now);
        let more = rest.len() as u64;
        // As in `lookup_in_batch`: the rest are found by the annotation
        // when the first was, or when it names the record just started.
        if self.anno_hits != anno_hits || u64::from_ne_bytes(first.anno_bytes(FLOW_ANNO)) == anno_in
        {
            self.anno_hits += more;
        } else {
            self.hits += more;
            self.recs[idx as usize].packets += more;
            let mark: [u8; 8] = first.anno_bytes(FLOW_ANNO);
            for p in rest {
                p.set_anno_bytes(FLOW_ANNO, &mark);
            }
        }
        Some(idx)
    }

    /// [`lookup_key`](Self::lookup_key) for a batch of one flow (a train):
    /// inline, with the most recently used record tried inline too. The
    /// per-packet paths keep the call (inlining there cost about 10
    /// instructions a packet on an interleaved trace).
    #[inline(always)]
    fn lookup_key_train(&mut self, p: &mut Packet, key: Key, anno_in: u64, now: i64) -> u32 {
        self.lookup_key_with::<true>(p, key, anno_in, now)
    }

    /// The record of `p`'s flow, `key`, given the flow annotation it
    /// arrived with.
    #[inline]
    fn lookup_key(&mut self, p: &mut Packet, key: Key, anno_in: u64, now: i64) -> u32 {
        self.lookup_key_with::<false>(p, key, anno_in, now)
    }

    #[inline(always)]
    fn lookup_key_with<const TRAIN: bool>(
        &mut self,
        p: &mut Packet,
        key: Key,
        anno_in: u64,
        now: i64,
    ) -> u32 {
        let a = anno_in.to_ne_bytes();
        let idx = u32::from_ne_bytes([a[0], a[1], a[2], a[3]]).wrapping_sub(1);
        let stamp = u32::from_ne_bytes([a[4], a[5], a[6], a[7]]);
        if let Some(r) = self.recs.get(idx as usize) {
            // The key is compared too: the annotation may have been
            // copied onto another packet (an element building a packet
            // from another copies its annotations), or the header
            // rewritten since the packet was marked (a NAT, StoreIPAddress,
            // ICMPPingResponder), and it then names a live record of
            // another flow.
            if r.live && r.stamp == stamp && stamp != 0 && r.key == key {
                // Neither counted nor touched: whoever marked the packet
                // did both, moments ago.
                self.anno_hits += 1;
                return idx;
            }
        }
        let idx = if TRAIN {
            self.find_or_insert_inline(&key, now)
        } else {
            self.find_or_insert(&key, now)
        };
        let r = &self.recs[idx as usize];
        let mut a = [0u8; 8];
        a[..4].copy_from_slice(&(idx + 1).to_ne_bytes());
        a[4..].copy_from_slice(&r.stamp.to_ne_bytes());
        p.set_anno_bytes(FLOW_ANNO, &a);
        idx
    }

    /// [`find_or_insert`](Self::find_or_insert) with its commonest case
    /// inline: the most recently used record (a train of packets of one
    /// flow), live and not expired, is already at the head of the LRU
    /// list, so only its counts and time change.
    #[inline(always)]
    fn find_or_insert_inline(&mut self, key: &Key, now: i64) -> u32 {
        let head = self.head;
        let timeout = self.timeout;
        if let Some(r) = self.recs.get_mut(head as usize) {
            if r.key == *key && (timeout == 0 || now.saturating_sub(r.last) <= timeout) {
                r.last = now;
                r.packets += 1;
                self.hits += 1;
                return head;
            }
        }
        self.find_or_insert(key, now)
    }

    /// The record of `key`, created (or restarted, if expired) as needed.
    pub fn find_or_insert(&mut self, key: &Key, now: i64) -> u32 {
        // The most recently used record first (a train of packets of one
        // flow): a live record's key is its map key, so no hashing.
        let head = self.head;
        let found = match self.recs.get(head as usize) {
            Some(r) if r.key == *key => Some(head),
            _ => self.map.get(key).copied(),
        };
        if let Some(idx) = found {
            if self.is_expired(idx, now) {
                self.expired += 1;
                self.misses += 1;
                self.restart(idx, now);
            } else {
                self.hits += 1;
            }
            self.touch(idx, now);
            self.recs[idx as usize].packets += 1;
            return idx;
        }
        self.misses += 1;
        let idx = self.allocate(now);
        self.map.insert(*key, idx);
        let r = &mut self.recs[idx as usize];
        r.key = *key;
        r.packets = 1;
        idx
    }

    #[inline]
    fn is_expired(&self, idx: u32, now: i64) -> bool {
        self.timeout > 0 && now.saturating_sub(self.recs[idx as usize].last) > self.timeout
    }

    fn restart(&mut self, idx: u32, now: i64) {
        let n = self.nslots;
        self.slots[idx as usize * n..idx as usize * n + n].fill(0);
        let r = &mut self.recs[idx as usize];
        r.stamp = next_stamp();
        r.first = now;
        r.last = now;
        r.packets = 0;
    }

    /// A fresh live record at the head of the LRU list (key unset).
    fn allocate(&mut self, now: i64) -> u32 {
        // An expired record is reused before the pools grow.
        if self.tail != NIL && self.is_expired(self.tail, now) {
            self.expired += 1;
            let t = self.tail;
            self.release(t);
        }
        let idx = if let Some(i) = self.free.pop() {
            i
        } else if self.recs.len() < self.pool {
            self.push_record()
        } else if self.pool < self.capacity {
            self.pool = (self.pool * 2).max(FIRST_POOL).min(self.capacity);
            let more = self.pool - self.recs.len();
            self.recs.reserve_exact(more);
            self.slots.reserve_exact(more * self.nslots);
            self.map.reserve(self.pool.saturating_sub(self.map.len()));
            self.free
                .reserve_exact(self.pool.saturating_sub(self.free.len()));
            self.push_record()
        } else {
            self.recycled += 1;
            let t = self.tail;
            self.release(t);
            self.free.pop().unwrap_or(t)
        };
        self.restart(idx, now);
        let r = &mut self.recs[idx as usize];
        r.live = true;
        r.prev = NIL;
        r.next = self.head;
        if self.head != NIL {
            self.recs[self.head as usize].prev = idx;
        } else {
            self.tail = idx;
        }
        self.head = idx;
        self.live += 1;
        idx
    }

    fn push_record(&mut self) -> u32 {
        self.recs.push(Record {
            key: Key::default(),
            stamp: 0,
            last: 0,
            first: 0,
            packets: 0,
            prev: NIL,
            next: NIL,
            live: false,
        });
        self.slots.extend(std::iter::repeat_n(0, self.nslots));
        (self.recs.len() - 1) as u32
    }

    fn unlink(&mut self, idx: u32) {
        let (prev, next) = {
            let r = &self.recs[idx as usize];
            (r.prev, r.next)
        };
        if prev != NIL {
            self.recs[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.recs[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    /// Removes a live record: off the LRU list and the map, onto the free
    /// list, its stamp cleared.
    fn release(&mut self, idx: u32) {
        if idx == NIL || !self.recs[idx as usize].live {
            return;
        }
        self.unlink(idx);
        let key = self.recs[idx as usize].key;
        if self.map.get(&key) == Some(&idx) {
            self.map.remove(&key);
        }
        let r = &mut self.recs[idx as usize];
        r.live = false;
        r.stamp = 0;
        self.live -= 1;
        self.free.push(idx);
    }

    #[inline]
    fn touch(&mut self, idx: u32, now: i64) {
        self.recs[idx as usize].last = now;
        if self.head != idx {
            self.unlink(idx);
            let r = &mut self.recs[idx as usize];
            r.prev = NIL;
            r.next = self.head;
            if self.head != NIL {
                self.recs[self.head as usize].prev = idx;
            } else {
                self.tail = idx;
            }
            self.head = idx;
        }
    }

    /// Releases every record idle for longer than the timeout.
    pub fn expire(&mut self, now: i64) {
        while self.tail != NIL && self.is_expired(self.tail, now) {
            self.expired += 1;
            let t = self.tail;
            self.release(t);
        }
    }

    /// Drops every flow (records stay allocated; their stamps change).
    pub fn clear(&mut self) {
        while self.head != NIL {
            let h = self.head;
            self.release(h);
        }
    }

    /// Live records, most recently used first.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Record)> {
        let mut i = self.head;
        std::iter::from_fn(move || {
            if i == NIL {
                return None;
            }
            let idx = i;
            let r = &self.recs[i as usize];
            i = r.next;
            Some((idx, r))
        })
    }

    /// The `flows` listing: one flow a line, most recently used first:
    /// `SRC DST PROTO SPORT DPORT IIF PACKETS IDLE` (IDLE in seconds).
    pub fn listing(&self, now: i64) -> String {
        let mut s = String::new();
        for (_, r) in self.iter() {
            let idle = now.saturating_sub(r.last).max(0);
            let _ = writeln!(
                s,
                "{} {} {}.{:03}",
                r.key,
                r.packets,
                idle / 1_000_000_000,
                idle % 1_000_000_000 / 1_000_000
            );
        }
        s
    }
}
