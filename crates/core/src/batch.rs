//! Batches: what elements hand each other.
//!
//! A [`Batch`] holds up to [`BATCH_CAPACITY`] packets in a pooled buffer and
//! is one pointer wide, so forwarding a whole batch downstream costs the same
//! as forwarding one packet. Per-packet work happens in place
//! ([`Batch::retain_map`]) without building a second batch.

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use crate::packet::{Packet, PacketTemplate};
use crate::pool::{self, Pools};

/// Most packets one batch holds. Sources with a larger BURST emit several
/// batches.
pub const BATCH_CAPACITY: usize = 64;

pub(crate) struct BatchBuf {
    len: usize,
    pkts: [MaybeUninit<Packet>; BATCH_CAPACITY],
}

/// An owned, ordered group of packets.
pub struct Batch {
    buf: NonNull<BatchBuf>,
}

// SAFETY: a Batch exclusively owns its buffer and the packets in it, which
// are Send.
unsafe impl Send for Batch {}

impl Batch {
    /// An empty batch from this thread's pool.
    #[inline]
    pub fn new() -> Batch {
        Batch {
            buf: pool::with(take_buf),
        }
    }

    /// A batch of one packet.
    #[inline]
    pub fn single(p: Packet) -> Batch {
        let mut b = Batch::new();
        let bb = b.b_mut();
        // A new batch is empty.
        bb.pkts[0].write(p);
        bb.len = 1;
        b
    }

    /// A batch of `n` (at most [`BATCH_CAPACITY`]) unshared copies of
    /// `proto` (see [`Packet::deep_copy`]), made with one visit to the
    /// thread's pools: what a source emits.
    #[inline]
    pub fn copies_of(proto: &Packet, n: usize) -> Batch {
        let n = n.min(BATCH_CAPACITY);
        pool::with(|p| {
            let buf = take_buf(p);
            // SAFETY: the buffer is fresh and exclusively ours.
            let b = unsafe { &mut *buf.as_ptr() };
            // One copy (BURST 1) skips the set-up that pays off over many.
            if n == 1 {
                b.pkts[0].write(proto.deep_copy_in(p));
            } else {
                proto.deep_copies_in(p, &mut b.pkts[..n]);
            }
            b.len = n;
            Batch { buf }
        })
    }

    /// A batch of one unshared copy of `proto`: [`Batch::copies_of`] for
    /// one packet (a BURST 1 source's), without its length tests.
    #[inline(always)]
    pub fn copy_of(proto: &Packet) -> Batch {
        // Inline even into other crates' code: left to itself the compiler
        // made the closure a call of its own.
        pool::with(
            #[inline(always)]
            |p| {
                let buf = take_buf(p);
                // SAFETY: the buffer is fresh and exclusively ours.
                let b = unsafe { &mut *buf.as_ptr() };
                b.pkts[0].write(proto.deep_copy_in(p));
                b.len = 1;
                Batch { buf }
            },
        )
    }

    /// A batch of one copy of `template`'s packet: [`Batch::copy_of`]
    /// with what the copy takes worked out beforehand (a BURST 1 source's
    /// every packet).
    #[inline(always)]
    pub fn copy_of_template(template: &PacketTemplate) -> Batch {
        // Inline, as `copy_of`.
        pool::with(
            #[inline(always)]
            |p| {
                let buf = take_buf(p);
                // SAFETY: the buffer is fresh and exclusively ours.
                let b = unsafe { &mut *buf.as_ptr() };
                b.pkts[0].write(template.copy_in(p));
                b.len = 1;
                Batch { buf }
            },
        )
    }

    /// A batch of `n` unshared copies of `template`'s packet (at most a
    /// batch's capacity): [`Batch::copies_of`] with the template's
    /// fixed-size copy, its size dispatched on once for the batch.
    #[inline]
    pub fn copies_of_template(template: &PacketTemplate, n: usize) -> Batch {
        let n = n.min(BATCH_CAPACITY);
        pool::with(|p| {
            let buf = take_buf(p);
            // SAFETY: the buffer is fresh and exclusively ours.
            let b = unsafe { &mut *buf.as_ptr() };
            template.copies_in(p, &mut b.pkts[..n]);
            b.len = n;
            Batch { buf }
        })
    }

    /// Frees the batch and its packets, as dropping it does, but inline:
    /// what a sink does with every batch (the drop glue is a call of its
    /// own, with its register saves, once per packet at BURST 1).
    #[inline(always)]
    pub fn free(self) {
        let buf = self.buf;
        std::mem::forget(self);
        // SAFETY: the batch is gone; its buffer and packets are ours.
        unsafe { free_buf(buf) }
    }

    #[inline]
    fn b(&self) -> &BatchBuf {
        // SAFETY: exclusively owned.
        unsafe { self.buf.as_ref() }
    }

    #[inline]
    fn b_mut(&mut self) -> &mut BatchBuf {
        // SAFETY: exclusively owned.
        unsafe { self.buf.as_mut() }
    }

    /// The slots and the length, for bulk moves in and out of the batch
    /// (see `ring`): slots below the length hold packets, the others are
    /// free; a caller that moves packets sets the length to match.
    #[inline(always)]
    pub(crate) fn slots_mut(&mut self) -> (&mut [MaybeUninit<Packet>; BATCH_CAPACITY], &mut usize) {
        let b = self.b_mut();
        (&mut b.pkts, &mut b.len)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.b().len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.b().len == 0
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.b().len == BATCH_CAPACITY
    }

    /// Appends a packet. A full batch hands the packet back.
    #[inline]
    pub fn try_push(&mut self, p: Packet) -> Result<(), Packet> {
        let b = self.b_mut();
        if b.len == BATCH_CAPACITY {
            return Err(p);
        }
        b.pkts[b.len].write(p);
        b.len += 1;
        Ok(())
    }

    /// Appends a packet; a full batch drops it (callers that may overflow
    /// use [`Batch::try_push`]).
    #[inline]
    pub fn push(&mut self, p: Packet) {
        let _ = self.try_push(p);
    }

    /// Removes and returns the last packet.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        let b = self.b_mut();
        if b.len == 0 {
            return None;
        }
        b.len -= 1;
        // SAFETY: slots below the old len are initialised; we shrank len
        // first so the slot is never read twice.
        Some(unsafe { b.pkts[b.len].assume_init_read() })
    }

    /// The packets, in order.
    #[inline]
    pub fn packets(&self) -> &[Packet] {
        let b = self.b();
        // SAFETY: the first `len` slots are initialised.
        unsafe { std::slice::from_raw_parts(b.pkts.as_ptr() as *const Packet, b.len) }
    }

    #[inline]
    pub fn packets_mut(&mut self) -> &mut [Packet] {
        let b = self.b_mut();
        // SAFETY: the first `len` slots are initialised.
        unsafe { std::slice::from_raw_parts_mut(b.pkts.as_mut_ptr() as *mut Packet, b.len) }
    }

    pub fn first(&self) -> Option<&Packet> {
        self.packets().first()
    }

    /// Applies `f` to each packet in order, keeping what it returns and
    /// compacting in place. The Click `simple_action` loop.
    #[inline]
    pub fn retain_map(&mut self, mut f: impl FnMut(Packet) -> Option<Packet>) {
        let b = self.b_mut();
        let n = b.len;
        // SAFETY: len never exceeds the capacity (only `try_push` and the
        // loops that keep at most what they read raise it). Saying so lets
        // the compiler drop the loop's two bounds checks per packet.
        unsafe { std::hint::assert_unchecked(n <= BATCH_CAPACITY) };
        // Packets being processed are owned by the loop: if `f` panics they
        // leak rather than being dropped twice.
        b.len = 0;
        let mut kept = 0;
        for i in 0..n {
            // SAFETY: slot i < n was initialised and is read exactly once.
            let p = unsafe { b.pkts[i].assume_init_read() };
            if let Some(q) = f(p) {
                b.pkts[kept].write(q);
                kept += 1;
            }
        }
        b.len = kept;
    }

    /// Removes every packet, yielding them in order.
    pub fn drain(&mut self) -> Drain<'_> {
        let n = self.len();
        self.b_mut().len = 0;
        Drain {
            batch: self,
            next: 0,
            end: n,
        }
    }

    /// Moves the packets from index `at` on into a new batch; this one
    /// keeps the first `at`.
    pub fn split_off(&mut self, at: usize) -> Batch {
        let mut rest = Batch::new();
        let n = self.len();
        if at >= n {
            return rest;
        }
        let src = self.b_mut();
        let dst = rest.b_mut();
        // SAFETY: slots `at..n` of `src` hold packets; they move to the
        // start of the fresh `dst`, and `src` then ends at `at`, so each
        // packet has one owner.
        unsafe {
            std::ptr::copy_nonoverlapping(src.pkts.as_ptr().add(at), dst.pkts.as_mut_ptr(), n - at);
        }
        dst.len = n - at;
        src.len = at;
        rest
    }

    /// Moves every packet of `other` to the end of this batch. Gives
    /// `other` back, untouched, if they do not fit together.
    pub fn append(&mut self, mut other: Batch) -> Result<(), Batch> {
        let (n, m) = (self.len(), other.len());
        if n + m > BATCH_CAPACITY {
            return Err(other);
        }
        let dst = self.b_mut();
        let src = other.b_mut();
        // SAFETY: `src`'s first `m` slots hold packets; they move to
        // `dst[n..n + m]`, within capacity, and `src` is then empty, so
        // each packet has one owner.
        unsafe {
            std::ptr::copy_nonoverlapping(src.pkts.as_ptr(), dst.pkts.as_mut_ptr().add(n), m);
        }
        src.len = 0;
        dst.len = n + m;
        Ok(())
    }

    /// Removes every packet.
    pub fn clear(&mut self) {
        let b = self.b_mut();
        let n = b.len;
        b.len = 0;
        // SAFETY: the first `n` slots held packets, and `len` is now 0.
        pool::with(|p| unsafe { drop_packets(p, &mut b.pkts[..n]) });
    }
}

impl Default for Batch {
    fn default() -> Self {
        Batch::new()
    }
}

/// An empty batch buffer from the pool, or a new one.
#[inline(always)]
fn take_buf(p: &mut Pools) -> NonNull<BatchBuf> {
    match p.batches.pop() {
        Some(buf) => buf,
        None => new_buf(p),
    }
}

#[cold]
#[inline(never)]
fn new_buf(p: &mut Pools) -> NonNull<BatchBuf> {
    // Other threads may have left free batch buffers in the global depot.
    if let Some(buf) = p.batches.refill() {
        return buf;
    }
    let b = Box::new(BatchBuf {
        len: 0,
        // SAFETY: an array of MaybeUninit needs no initialisation.
        pkts: unsafe { MaybeUninit::uninit().assume_init() },
    });
    NonNull::from(Box::leak(b))
}

/// Drops the packets in `slots`, with one visit to the thread's pools.
///
/// # Safety
/// Every slot holds a packet that nothing else will read or drop.
#[inline(always)]
unsafe fn drop_packets(p: &mut Pools, slots: &mut [MaybeUninit<Packet>]) {
    for slot in slots {
        slot.assume_init_read().drop_in(p);
    }
}

/// Frees a batch's packets and gives its buffer back to the pool.
///
/// # Safety
/// `buf` is the buffer of a batch that is gone: nothing else reads or
/// frees it or its packets.
#[inline(always)]
unsafe fn free_buf(buf: NonNull<BatchBuf>) {
    // Inline, as in `Batch::copy_of`.
    pool::with(
        #[inline(always)]
        |p| {
            // SAFETY: the buffer is exclusively ours, its first `len` slots
            // hold packets; `len` is zeroed before they are dropped, and the
            // emptied buffer goes to the pool (or is freed: it came from
            // Box::leak).
            unsafe {
                let b = &mut *buf.as_ptr();
                let n = b.len;
                b.len = 0;
                // A batch of one (BURST 1) needs no loop; the loop is out of
                // line, so that this path saves no registers.
                if n == 1 {
                    b.pkts[0].assume_init_read().drop_in(p);
                } else {
                    drop_packets_outlined(p, &mut b.pkts[..n]);
                }
                if let Err(buf) = p.batches.push(buf) {
                    drop(Box::from_raw(buf.as_ptr()));
                }
            }
        },
    );
}

/// [`drop_packets`], out of line.
///
/// # Safety
/// As for [`drop_packets`].
#[inline(never)]
unsafe fn drop_packets_outlined(p: &mut Pools, slots: &mut [MaybeUninit<Packet>]) {
    drop_packets(p, slots)
}

impl Drop for Batch {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the batch is being dropped and exclusively owns its
        // buffer and packets.
        unsafe { free_buf(self.buf) }
    }
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.packets()).finish()
    }
}

/// Iterator returned by [`Batch::drain`].
pub struct Drain<'a> {
    batch: &'a mut Batch,
    next: usize,
    end: usize,
}

impl Iterator for Drain<'_> {
    type Item = Packet;
    #[inline]
    fn next(&mut self) -> Option<Packet> {
        if self.next == self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        // SAFETY: slots in next..end are initialised and each read once; the
        // batch's len is already 0 so nothing else reads them.
        Some(unsafe { self.batch.b_mut().pkts[i].assume_init_read() })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.end - self.next, Some(self.end - self.next))
    }
}

/// Frees the packets an iterator left in slots `*next..end` (usually
/// none: every packet was taken).
#[inline]
fn drop_untaken(buf: &mut BatchBuf, next: &mut usize, end: usize) {
    let start = *next;
    if start == end {
        return;
    }
    *next = end;
    // SAFETY: the iterators' slots start..end still hold packets that
    // nothing else reads (the batch's len is already 0).
    pool::with(|p| unsafe { drop_packets(p, &mut buf.pkts[start..end]) });
}

impl Drop for Drain<'_> {
    #[inline]
    fn drop(&mut self) {
        drop_untaken(self.batch.b_mut(), &mut self.next, self.end);
    }
}

impl IntoIterator for Batch {
    type Item = Packet;
    type IntoIter = IntoIter;
    fn into_iter(mut self) -> IntoIter {
        let end = self.len();
        self.b_mut().len = 0;
        IntoIter {
            batch: self,
            next: 0,
            end,
        }
    }
}

/// Owning iterator over a batch's packets.
pub struct IntoIter {
    batch: Batch,
    next: usize,
    end: usize,
}

impl Iterator for IntoIter {
    type Item = Packet;
    #[inline]
    fn next(&mut self) -> Option<Packet> {
        if self.next == self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        // SAFETY: as for Drain.
        Some(unsafe { self.batch.b_mut().pkts[i].assume_init_read() })
    }
}

impl Drop for IntoIter {
    #[inline]
    fn drop(&mut self) {
        drop_untaken(self.batch.b_mut(), &mut self.next, self.end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(b: u8) -> Packet {
        Packet::from_slice(&[b])
    }

    fn bytes(b: &Batch) -> Vec<u8> {
        b.packets().iter().map(|p| p.data()[0]).collect()
    }

    #[test]
    fn split_off_and_append_keep_order_and_ownership() {
        let mut a = Batch::new();
        for i in 0..10 {
            a.push(pkt(i));
        }
        let rest = a.split_off(4);
        assert_eq!(bytes(&a), [0, 1, 2, 3]);
        assert_eq!(bytes(&rest), [4, 5, 6, 7, 8, 9]);
        assert!(a.split_off(4).is_empty());
        assert!(a.append(rest).is_ok());
        assert_eq!(bytes(&a), (0..10).collect::<Vec<u8>>());
        let mut big = Batch::new();
        for i in 0..BATCH_CAPACITY {
            big.push(pkt(i as u8));
        }
        let back = a.append(big).expect_err("does not fit");
        assert_eq!(back.len(), BATCH_CAPACITY);
        assert_eq!(a.len(), 10);
    }

    #[test]
    fn retain_map_compacts_in_order() {
        let mut b = Batch::new();
        for i in 0..10 {
            b.push(pkt(i));
        }
        b.retain_map(|p| (p.data()[0] % 3 != 0).then_some(p));
        let got: Vec<u8> = b.packets().iter().map(|p| p.data()[0]).collect();
        assert_eq!(got, vec![1, 2, 4, 5, 7, 8]);
    }

    #[test]
    fn full_batch_rejects() {
        let mut b = Batch::new();
        for i in 0..BATCH_CAPACITY {
            b.push(pkt(i as u8));
        }
        assert!(b.is_full());
        assert!(b.try_push(pkt(0)).is_err());
        assert_eq!(b.into_iter().count(), BATCH_CAPACITY);
    }

    #[test]
    fn copies_of_makes_unshared_equal_packets() {
        let mut proto = Packet::with_room(20, b"0123456789", 5);
        proto.set_network_header(2, 4);
        proto.set_paint_anno(4);
        proto.pull(1);
        for n in [0, 1, 7, BATCH_CAPACITY, BATCH_CAPACITY + 1] {
            let b = Batch::copies_of(&proto, n);
            assert_eq!(b.len(), n.min(BATCH_CAPACITY));
            for p in b.packets() {
                assert!(!p.is_shared());
                assert_eq!(p.data(), b"123456789");
                assert_eq!(p.headroom(), proto.headroom());
                assert_eq!(p.tailroom(), proto.tailroom());
                assert_eq!(p.network_offset(), Some(1));
                assert_eq!(p.paint_anno(), 4);
                assert_eq!(p.bytes_before_network_header(1), Some(&b"1"[..]));
            }
        }
        assert!(!proto.is_shared());
    }

    #[test]
    fn single_and_partly_consumed_iterators() {
        let b = Batch::single(pkt(5));
        assert_eq!(b.len(), 1);
        assert_eq!(b.packets()[0].data(), [5]);
        let mut b = Batch::new();
        for i in 0..6 {
            b.push(pkt(i));
        }
        let mut it = b.into_iter();
        assert_eq!(it.next().map(|p| p.data()[0]), Some(0));
        drop(it);
        let mut b = Batch::new();
        b.push(pkt(1));
        b.clear();
        assert!(b.is_empty());
        b.push(pkt(2));
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn copy_of_and_free_pool_batches_of_one() {
        let proto = Packet::with_room(8, b"abcdef", 4);
        for _ in 0..3 {
            let b = Batch::copy_of(&proto);
            assert_eq!(b.len(), 1);
            assert!(!b.packets()[0].is_shared());
            assert_eq!(b.packets()[0].data(), b"abcdef");
            b.free();
        }
        let mut b = Batch::copies_of(&proto, 5);
        b.pop();
        b.free();
        Batch::new().free();
    }

    #[test]
    fn free_leaves_clones_of_its_packets_alive() {
        // A Tee's clones: freeing the batch (of one, and of several) drops
        // one reference each; the clone still owns the buffer, which is
        // neither freed nor reused until it goes too (Miri checks).
        let orig = Packet::with_room(8, b"shared", 4);
        let clone = orig.clone();
        Batch::single(orig).free();
        assert!(!clone.is_shared());
        let fresh = Batch::copy_of(&Packet::from_slice(b"zzzzzz"));
        assert_eq!(clone.data(), b"shared");
        let mut b = Batch::new();
        b.push(clone.clone());
        b.push(clone.clone());
        b.free();
        let mut clone = clone;
        assert!(!clone.is_shared());
        clone.writable()[0] = b'S';
        assert_eq!(clone.data(), b"Shared");
        assert_eq!(fresh.packets()[0].data(), b"zzzzzz");
        fresh.free();
    }

    #[test]
    fn drain_partially_consumed_drops_rest() {
        let mut b = Batch::new();
        for i in 0..5 {
            b.push(pkt(i));
        }
        let first: Vec<Packet> = b.drain().take(2).collect();
        assert_eq!(first.len(), 2);
        assert!(b.is_empty());
    }
}
