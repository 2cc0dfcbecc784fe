//! TCP sequence-number deltas of a rewritten flow (not an element): when
//! FTPPortMapper changes a segment's length, later sequence numbers of that
//! direction move by the difference, and the other direction's
//! acknowledgements (and SACK blocks) move back. As in Click's TCPRewriter,
//! each direction keeps its transitions (trigger sequence number and the
//! delta from there on, newest first) and a base delta for sequence numbers
//! below every trigger; a transition is forgotten once its direction's
//! sequence numbers are 1G past it.

use rclick_core::wire::TcpHeader;

use super::rewriter_base::{apply_delta, csum_delta};

const ONE_G: u32 = 1 << 30;

/// `a >= b` in sequence space.
fn seq_geq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// The deltas of one direction.
#[derive(Clone, Debug, Default)]
struct Chain {
    /// (trigger, delta), newest (highest trigger) first.
    trans: Vec<(u32, i32)>,
    base: i32,
}

impl Chain {
    fn top(&self) -> i32 {
        self.trans.first().map_or(self.base, |t| t.1)
    }

    fn active(&self) -> bool {
        !self.trans.is_empty() || self.base != 0
    }
}

/// Both directions' deltas.
#[derive(Clone, Debug, Default)]
pub struct SeqDeltas {
    dir: [Chain; 2],
}

impl SeqDeltas {
    /// Sequence numbers of direction `dir` from `trigger` on move by `d`
    /// more. Triggers must not go backwards (refused: `false`).
    pub fn update(&mut self, dir: usize, trigger: u32, d: i32) -> bool {
        let c = &mut self.dir[dir & 1];
        if let Some(&(t, _)) = c.trans.first() {
            if !seq_geq(trigger, t) {
                return false;
            }
            if t == trigger {
                let below = c.trans.get(1).map_or(c.base, |x| x.1);
                c.trans[0].1 = below.wrapping_add(d);
                return true;
            }
        }
        let top = c.top();
        c.trans.insert(0, (trigger, top.wrapping_add(d)));
        // Forget transitions 1G behind the new one.
        if let Some(i) =
            (1..c.trans.len()).find(|&i| seq_geq(trigger, c.trans[i].0.wrapping_add(ONE_G)))
        {
            c.base = c.trans[i].1;
            c.trans.truncate(i);
        }
        true
    }

    /// The delta shown in the table for direction `dir`.
    pub fn shown(&self, dir: usize) -> i32 {
        self.dir[dir & 1].top()
    }

    fn new_seq(&self, dir: usize, s: u32) -> u32 {
        let c = &self.dir[dir];
        for &(t, d) in &c.trans {
            if seq_geq(s, t) {
                return s.wrapping_add(d as u32);
            }
        }
        s.wrapping_add(c.base as u32)
    }

    fn new_ack(&self, dir: usize, a: u32) -> u32 {
        let c = &self.dir[1 - dir];
        for &(t, d) in &c.trans {
            let x = a.wrapping_sub(d as u32);
            if seq_geq(x, t) {
                return x;
            }
        }
        a.wrapping_sub(c.base as u32)
    }

    /// Rewrites the sequence and acknowledgement numbers (and SACK blocks)
    /// of a segment of direction `dir`, updating its checksum.
    pub fn apply(&mut self, t: &mut TcpHeader<&mut [u8]>, dir: usize) {
        let dir = dir & 1;
        let seq = t.seq();
        if let Some(&(trig, _)) = self.dir[dir].trans.first() {
            if seq_geq(seq, trig.wrapping_add(ONE_G)) {
                let c = &mut self.dir[dir];
                c.base = c.trans[0].1;
                c.trans.clear();
            }
        }
        if self.dir[dir].active() {
            let n = self.new_seq(dir, seq);
            let c = apply_delta(
                t.checksum(),
                csum_delta(
                    &[(seq >> 16) as u16, seq as u16],
                    &[(n >> 16) as u16, n as u16],
                ),
                false,
            );
            t.set_seq(n);
            t.set_checksum(c);
        }
        if self.dir[1 - dir].active() {
            let ack = t.ack();
            let n = self.new_ack(dir, ack);
            let c = apply_delta(
                t.checksum(),
                csum_delta(
                    &[(ack >> 16) as u16, ack as u16],
                    &[(n >> 16) as u16, n as u16],
                ),
                false,
            );
            t.set_ack(n);
            t.set_checksum(c);
            let hl = t.header_len();
            let timestamp_only = hl == 32 && t.options().starts_with(&[1, 1, 8, 10]);
            if hl > 20 && !timestamp_only {
                self.apply_sack(t, dir);
            }
        }
    }

    fn apply_sack(&self, t: &mut TcpHeader<&mut [u8]>, dir: usize) {
        // Options start at byte 20 of the header, so their 16-bit words
        // are the checksum's words: the difference of their sums before
        // and after is the checksum change.
        let old_sum = rclick_core::wire::checksum::sum(t.options(), 0) as u16;
        let opts = t.options_mut();
        let mut i = 0;
        while i < opts.len() {
            match opts[i] {
                0 => break,
                1 => i += 1,
                kind => {
                    let Some(&len) = opts.get(i + 1) else { break };
                    let len = len as usize;
                    if len < 2 || i + len > opts.len() || (kind == 5 && len % 8 != 2) {
                        break;
                    }
                    if kind == 5 {
                        let mut j = i + 2;
                        while j + 8 <= i + len {
                            for k in [j, j + 4] {
                                if let Some(b) = opts.get_mut(k..k + 4) {
                                    let old = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                                    b.copy_from_slice(&self.new_ack(dir, old).to_be_bytes());
                                }
                            }
                            j += 8;
                        }
                    }
                    i += len;
                }
            }
        }
        let new_sum = rclick_core::wire::checksum::sum(t.options(), 0) as u16;
        if new_sum != old_sum {
            let c = apply_delta(t.checksum(), csum_delta(&[old_sum], &[new_sum]), false);
            t.set_checksum(c);
        }
    }
}
