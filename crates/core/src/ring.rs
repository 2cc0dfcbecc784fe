//! A first-in, first-out ring of packets, for queues.
//!
//! [`PacketRing`] is a double-ended queue like `VecDeque<Packet>`, with
//! what a queue element needs on top: a whole batch goes in
//! ([`PacketRing::push_batch`]) or out ([`PacketRing::pop_into`]) as at
//! most two block copies of packet pointers. Moved one by one through
//! `VecDeque`'s `push_back` and `pop_front`, a packet cost a queue about
//! 27 instructions each way (the deque's head and length written back per
//! packet); a block copy costs a burst of 32 a few instructions.

use std::mem::MaybeUninit;
use std::ptr;

use crate::batch::{Batch, BATCH_CAPACITY};
use crate::packet::Packet;

/// A growable ring buffer of packets, head first.
pub struct PacketRing {
    /// `len` packets start at `head` and wrap around the end; the other
    /// slots are free.
    slots: Box<[MaybeUninit<Packet>]>,
    head: usize,
    len: usize,
}

impl Default for PacketRing {
    fn default() -> Self {
        PacketRing::new()
    }
}

impl PacketRing {
    /// An empty ring (no allocation until the first packet).
    pub fn new() -> PacketRing {
        PacketRing {
            slots: Box::new([]),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many packets fit before the ring grows.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The slot of the `i`th packet from the head (`i` at most the
    /// capacity).
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        let j = self.head + i;
        if j >= self.slots.len() {
            j - self.slots.len()
        } else {
            j
        }
    }

    /// Makes room for at least `additional` more packets.
    pub fn reserve(&mut self, additional: usize) {
        let need = self
            .len
            .checked_add(additional)
            .expect("ring size overflows");
        if need > self.slots.len() {
            self.grow_to(need.max(self.slots.len() * 2).max(8));
        }
    }

    /// Moves the packets, in order, to the start of `cap` new slots.
    #[cold]
    #[inline(never)]
    fn grow_to(&mut self, cap: usize) {
        let mut slots: Box<[MaybeUninit<Packet>]> = std::iter::repeat_with(MaybeUninit::uninit)
            .take(cap)
            .collect();
        let first = self.len.min(self.slots.len() - self.head);
        // SAFETY: the `len` packets are the `first` from `head` and the
        // rest from slot 0, all within the old slots; `cap >= len` new
        // slots receive them. The old box is then freed without dropping
        // its slots (MaybeUninit), so each packet has one owner.
        unsafe {
            let src = self.slots.as_ptr();
            let dst = slots.as_mut_ptr();
            ptr::copy_nonoverlapping(src.add(self.head), dst, first);
            ptr::copy_nonoverlapping(src, dst.add(first), self.len - first);
        }
        self.slots = slots;
        self.head = 0;
    }

    /// Appends a packet at the tail.
    #[inline]
    pub fn push_back(&mut self, p: Packet) {
        if self.len == self.slots.len() {
            self.reserve(1);
        }
        let at = self.slot(self.len);
        self.slots[at].write(p);
        self.len += 1;
    }

    /// Inserts a packet at the head.
    pub fn push_front(&mut self, p: Packet) {
        if self.len == self.slots.len() {
            self.reserve(1);
        }
        self.head = self.slot(self.slots.len() - 1);
        self.slots[self.head].write(p);
        self.len += 1;
    }

    /// Takes the packet at the head.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Packet> {
        if self.len == 0 {
            return None;
        }
        let at = self.head;
        self.head = self.slot(1);
        self.len -= 1;
        // SAFETY: the head slot held a packet, and is now outside the
        // ring's packets, so it is read once.
        Some(unsafe { self.slots[at].assume_init_read() })
    }

    /// Takes the packet at the tail.
    pub fn pop_back(&mut self) -> Option<Packet> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let at = self.slot(self.len);
        // SAFETY: as in `pop_front`, for the tail slot.
        Some(unsafe { self.slots[at].assume_init_read() })
    }

    /// The `i`th packet from the head.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Packet> {
        if i >= self.len {
            return None;
        }
        // SAFETY: the first `len` slots from the head hold packets.
        Some(unsafe { self.slots[self.slot(i)].assume_init_ref() })
    }

    /// The packets, head first: the run from the head to the end of the
    /// slots, then the run that wrapped around to slot 0.
    pub fn as_slices(&self) -> (&[Packet], &[Packet]) {
        let first = self.len.min(self.slots.len() - self.head);
        // SAFETY: these slots hold packets (see `slots`), and
        // MaybeUninit<Packet> has Packet's layout.
        unsafe {
            let base = self.slots.as_ptr() as *const Packet;
            (
                std::slice::from_raw_parts(base.add(self.head), first),
                std::slice::from_raw_parts(base, self.len - first),
            )
        }
    }

    /// The packets, head first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Packet> + '_ {
        let (a, b) = self.as_slices();
        a.iter().chain(b)
    }

    /// Takes the `i`th packet from the head; those behind it move up.
    pub fn remove(&mut self, i: usize) -> Option<Packet> {
        if i >= self.len {
            return None;
        }
        // SAFETY: slot(i) holds a packet, read once; each later packet
        // then moves one slot towards the head (a bitwise move, leaving
        // its old slot free), and the length drops by one.
        unsafe {
            let p = self.slots[self.slot(i)].assume_init_read();
            for k in i..self.len - 1 {
                let next = self.slots[self.slot(k + 1)].assume_init_read();
                let at = self.slot(k);
                self.slots[at].write(next);
            }
            self.len -= 1;
            Some(p)
        }
    }

    /// Drops the packets past the first `n`.
    pub fn truncate(&mut self, n: usize) {
        while self.len > n {
            drop(self.pop_back());
        }
    }

    /// Drops the first `n` packets (all of them when there are fewer).
    pub fn drop_front(&mut self, n: usize) {
        for _ in 0..n.min(self.len) {
            drop(self.pop_front());
        }
    }

    /// Drops every packet.
    pub fn clear(&mut self) {
        self.truncate(0);
        self.head = 0;
    }

    /// Moves every packet of `batch`, in order, to the tail (growing the
    /// ring as needed); `batch` is left empty.
    #[inline]
    pub fn push_batch(&mut self, batch: &mut Batch) {
        let n = batch.len();
        if self.len + n > self.slots.len() {
            self.reserve(n);
        }
        let (pkts, batch_len) = batch.slots_mut();
        let tail = self.slot(self.len);
        let first = n.min(self.slots.len() - tail);
        // SAFETY: the batch's first `n` slots hold packets; they move to
        // the `n` free slots after the ring's tail (`first` up to the end
        // of the slots, the rest from slot 0: free, as `len + n` fits),
        // and the batch is then emptied, so each packet has one owner.
        unsafe {
            let src = pkts.as_ptr();
            let dst = self.slots.as_mut_ptr();
            ptr::copy_nonoverlapping(src, dst.add(tail), first);
            ptr::copy_nonoverlapping(src.add(first), dst, n - first);
        }
        *batch_len = 0;
        self.len += n;
    }

    /// Moves up to `max` packets from the head to the end of `batch`, as
    /// many as there are and the batch has room for; returns how many.
    #[inline]
    pub fn pop_into(&mut self, batch: &mut Batch, max: usize) -> usize {
        let (pkts, batch_len) = batch.slots_mut();
        let at = *batch_len;
        let n = max.min(self.len).min(BATCH_CAPACITY - at);
        let first = n.min(self.slots.len() - self.head);
        // SAFETY: the ring's first `n` packets (`first` from the head, the
        // rest from slot 0) move to the batch's free slots `at..at + n`
        // (within its capacity); the ring then starts after them, so each
        // packet has one owner.
        unsafe {
            let src = self.slots.as_ptr();
            let dst = pkts.as_mut_ptr().add(at);
            ptr::copy_nonoverlapping(src.add(self.head), dst, first);
            ptr::copy_nonoverlapping(src, dst.add(first), n - first);
        }
        *batch_len = at + n;
        self.head = self.slot(n);
        self.len -= n;
        n
    }
}

impl Drop for PacketRing {
    fn drop(&mut self) {
        self.clear();
    }
}

impl std::ops::Index<usize> for PacketRing {
    type Output = Packet;

    fn index(&self, i: usize) -> &Packet {
        match self.get(i) {
            Some(p) => p,
            None => panic!("packet {i} of a ring of {}", self.len),
        }
    }
}

impl std::fmt::Debug for PacketRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn pkt(tag: u32) -> Packet {
        Packet::from_slice(&tag.to_be_bytes())
    }

    fn tag(p: &Packet) -> u32 {
        u32::from_be_bytes(p.data().try_into().unwrap())
    }

    fn tags(r: &PacketRing) -> Vec<u32> {
        r.iter().map(tag).collect()
    }

    #[derive(Debug, Clone)]
    enum Op {
        PushBack,
        PushFront,
        PopFront,
        PopBack,
        Remove(usize),
        Truncate(usize),
        DropFront(usize),
        PushBatch(usize),
        PopInto(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            Just(Op::PushBack),
            Just(Op::PushFront),
            Just(Op::PopFront),
            Just(Op::PopBack),
            (0..40usize).prop_map(Op::Remove),
            (0..40usize).prop_map(Op::Truncate),
            (0..10usize).prop_map(Op::DropFront),
            (0..=BATCH_CAPACITY).prop_map(Op::PushBatch),
            (0..=BATCH_CAPACITY, 0..=BATCH_CAPACITY).prop_map(|(a, b)| Op::PopInto(a, b)),
        ]
    }

    proptest! {
        /// Every operation does to the ring what it does to a `VecDeque`
        /// (the model), through growth and wrap-around, and moves each
        /// packet whole: the tags come out in the model's order, and
        /// no packet is lost or freed twice (Miri checks the latter).
        #[test]
        fn the_ring_behaves_as_a_deque(ops in proptest::collection::vec(op(), 1..60)) {
            let mut ring = PacketRing::new();
            let mut model: VecDeque<u32> = VecDeque::new();
            let mut next = 0u32;
            let mut fresh = || { next += 1; next };
            for op in ops {
                match op {
                    Op::PushBack => { let t = fresh(); ring.push_back(pkt(t)); model.push_back(t); }
                    Op::PushFront => { let t = fresh(); ring.push_front(pkt(t)); model.push_front(t); }
                    Op::PopFront => prop_assert_eq!(ring.pop_front().map(|p| tag(&p)), model.pop_front()),
                    Op::PopBack => prop_assert_eq!(ring.pop_back().map(|p| tag(&p)), model.pop_back()),
                    Op::Remove(i) => prop_assert_eq!(ring.remove(i).map(|p| tag(&p)), model.remove(i)),
                    Op::Truncate(n) => { ring.truncate(n); model.truncate(n); }
                    Op::DropFront(n) => { ring.drop_front(n); model.drain(..n.min(model.len())); }
                    Op::PushBatch(n) => {
                        let mut b = Batch::new();
                        for _ in 0..n { let t = fresh(); b.push(pkt(t)); model.push_back(t); }
                        ring.push_batch(&mut b);
                        prop_assert!(b.is_empty());
                    }
                    Op::PopInto(already, max) => {
                        let mut b = Batch::new();
                        let mut want: Vec<u32> = Vec::new();
                        for _ in 0..already { let t = fresh(); b.push(pkt(t)); want.push(t); }
                        let room = BATCH_CAPACITY - already;
                        let n = max.min(model.len()).min(room);
                        want.extend(model.drain(..n));
                        prop_assert_eq!(ring.pop_into(&mut b, max), n);
                        prop_assert_eq!(b.packets().iter().map(tag).collect::<Vec<_>>(), want);
                    }
                }
                prop_assert_eq!(ring.len(), model.len());
                prop_assert!(ring.len() <= ring.capacity());
                prop_assert_eq!(tags(&ring), model.iter().copied().collect::<Vec<_>>());
                for (i, t) in model.iter().enumerate() {
                    prop_assert_eq!(tag(&ring[i]), *t);
                }
            }
        }
    }

    #[test]
    fn a_batch_wraps_around_the_end_of_the_slots() {
        let mut ring = PacketRing::new();
        ring.reserve(8);
        assert_eq!(ring.capacity(), 8);
        for t in 0..6 {
            ring.push_back(pkt(t));
        }
        let mut out = Batch::new();
        assert_eq!(ring.pop_into(&mut out, 5), 5);
        // Head at slot 5, one packet: a batch of 6 fills slots 6, 7, 0-3.
        let mut b = Batch::new();
        for t in 6..12 {
            b.push(pkt(t));
        }
        ring.push_batch(&mut b);
        assert_eq!(ring.capacity(), 8, "no growth needed");
        assert_eq!(tags(&ring), (5..12).collect::<Vec<_>>());
        let mut out = Batch::new();
        assert_eq!(ring.pop_into(&mut out, 64), 7);
        assert_eq!(
            out.packets().iter().map(tag).collect::<Vec<_>>(),
            (5..12).collect::<Vec<_>>()
        );
        assert!(ring.is_empty());
    }

    #[test]
    fn packets_left_in_a_ring_are_freed_with_it() {
        let p = pkt(1);
        let mut ring = PacketRing::new();
        for _ in 0..20 {
            ring.push_back(p.clone());
        }
        assert!(p.is_shared());
        drop(ring);
        assert!(!p.is_shared(), "the ring's clones were dropped");
    }
}
