//! Click's own IPFilter program, for the `program` read handler only.
//!
//! rclick classifies with its own compiled form (see `ipfilter_compile`);
//! Click users and Click's test suite read the `program` handler and
//! expect Click's listing byte for byte. This module rebuilds that
//! listing the way Click 2.1 builds its program: each pattern is emitted
//! as a tree of word tests while it is parsed (the parser in
//! `ipfilter_compile` drives a [`Builder`]), the patterns are merged in
//! pairs and optimized after each merge (sorting `and` chains by offset,
//! shifting branches past tests their dominators decide, combining
//! compatible tests on one word, dropping unused tests), and the result
//! is compressed (runs of tests of one word with one `yes` target become
//! one test of several values) and printed.
//!
//! Nothing here runs on packets. The listing's offsets are Click's: the
//! Ethernet header's words at 0 (starting two bytes before it), the IP
//! header at 256, the transport header at 512.

use std::fmt::Write as _;

/// Click's `j_never`: drop.
const J_NEVER: i32 = -2_147_483_647;
/// Parse-time target of a failing test.
const J_FAILURE: i32 = J_NEVER + 1;
/// Parse-time target of a succeeding test.
const J_SUCCESS: i32 = J_NEVER + 2;

pub(crate) const OFFSET_MAC: u32 = 0;
pub(crate) const OFFSET_NET: u32 = 256;
pub(crate) const OFFSET_TRANSP: u32 = 512;

/// Click sorts the values of a compressed test of this many or more.
const MIN_BINARY_SEARCH: usize = 7;

/// One test: the word at `offset`, masked, equals `value`. Mask and value
/// hold the word's bytes in packet order (the first byte most
/// significant); `short` is where a packet too short for the masked bytes
/// goes (`true`: the yes branch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Insn {
    offset: u16,
    short: bool,
    mask: u32,
    value: u32,
    /// `[no, yes]`: a step (> 0) or an output (`-N`, or a `J_` value).
    j: [i32; 2],
}

fn single_bit(x: u32) -> bool {
    x & x.wrapping_sub(1) == 0
}

impl Insn {
    fn new(offset: u32, value: u32, mask: u32) -> Insn {
        Insn {
            offset: offset as u16,
            short: false,
            mask,
            value: value & mask,
            j: [J_FAILURE, J_SUCCESS],
        }
    }

    fn yes(&self) -> i32 {
        self.j[1]
    }

    fn no(&self) -> i32 {
        self.j[0]
    }

    /// Mask byte `i` (0 = the word's first byte).
    fn mask_byte(&self, i: usize) -> u32 {
        (self.mask >> (24 - 8 * i)) & 0xFF
    }

    fn required_length(&self) -> u32 {
        let o = u32::from(self.offset);
        if self.mask == 0 {
            0
        } else if self.mask_byte(3) != 0 {
            o + 4
        } else if self.mask_byte(2) != 0 {
            o + 3
        } else if self.mask_byte(1) != 0 {
            o + 2
        } else {
            o + 1
        }
    }

    fn implies_short_ok(&self, dir: bool, x: &Insn, next_dir: bool, known: u32) -> bool {
        if self.short != dir || u32::from(self.offset) + 4 <= known {
            return true;
        }
        let r = self.required_length();
        r <= known || (r <= x.required_length() && next_dir == x.short)
    }

    fn implies(&self, x: &Insn, known: u32) -> bool {
        if x.mask == 0 {
            return true;
        }
        if x.offset != self.offset || !self.implies_short_ok(true, x, true, known) {
            return false;
        }
        let both = self.mask & x.mask;
        both == x.mask && self.value & both == x.value
    }

    fn not_implies(&self, x: &Insn, known: u32) -> bool {
        if x.mask == 0 {
            return true;
        }
        if x.offset != self.offset || !self.implies_short_ok(false, x, true, known) {
            return false;
        }
        single_bit(self.mask) && self.mask == x.mask && self.value != x.value
    }

    fn implies_not(&self, x: &Insn, known: u32) -> bool {
        if x.mask == 0 || x.offset != self.offset || !self.implies_short_ok(true, x, false, known) {
            return false;
        }
        let both = self.mask & x.mask;
        both == x.mask && self.value & both != x.value
    }

    fn not_implies_not(&self, x: &Insn, known: u32) -> bool {
        if self.mask == 0 {
            return true;
        }
        if x.offset != self.offset || !self.implies_short_ok(false, x, false, known) {
            return false;
        }
        let both = self.mask & x.mask;
        both == self.mask && self.value == x.value & both
    }

    fn compatible(&self, x: &Insn, consider_short: bool) -> bool {
        if self.mask == 0 || x.mask == 0 {
            return true;
        }
        if x.offset != self.offset
            || (consider_short
                && x.short != self.short
                && self.required_length() < x.required_length())
        {
            return false;
        }
        let both = self.mask & x.mask;
        self.value & both == x.value & both
    }

    fn generalizable_or_pair(&self, x: &Insn) -> bool {
        let diff = self.value ^ x.value;
        if self.offset != 0
            && x.offset == self.offset
            && self.mask != 0
            && x.mask == self.mask
            && (self.short || !x.short)
            && self.yes() == x.yes()
            && single_bit(diff)
        {
            let t = Insn::new(
                u32::from(self.offset),
                self.value & !diff,
                self.mask & !diff,
            );
            t.required_length() == self.required_length()
        } else {
            false
        }
    }

    fn flippable(&self) -> bool {
        self.mask != 0 && single_bit(self.mask)
    }

    fn flip(&mut self) {
        self.value ^= self.mask;
        self.j.swap(0, 1);
        self.short = !self.short;
    }

    /// Click's comparison key for telling equal tests apart: offset,
    /// short flag, mask and value.
    fn key(&self) -> (u16, bool, u32, u32) {
        (self.offset, self.short, self.mask, self.value)
    }
}

fn jump_text(j: i32) -> String {
    if j <= J_SUCCESS {
        let c = ["X", "-", "+"][(j - J_NEVER) as usize];
        format!("[{c}]")
    } else if j <= 0 {
        format!("[{}]", -(j as i64))
    } else {
        format!("step {j}")
    }
}

fn insn_text(i: &Insn) -> String {
    let mut s = format!(
        "{:>3}/{:08x}%{:08x}  yes->{}  no->{}",
        i.offset,
        i.value,
        i.mask,
        jump_text(i.yes()),
        jump_text(i.no())
    );
    if i.short {
        s.push_str("  short->yes");
    }
    s
}

/// How a subtree's children combine.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comb {
    And,
    Or,
    Ternary,
}

/// A program being built or optimized (Click's `Program`).
#[derive(Clone, Debug)]
pub struct Program {
    insn: Vec<Insn>,
    output_everything: i32,
    safe_length: u32,
}

/// Builds one pattern's program while the pattern is parsed (Click's
/// `Program` with its subtree vector).
#[derive(Clone, Debug)]
pub(crate) struct Builder {
    prog: Program,
    tree: Vec<i32>,
    /// Tests are not recorded (the listing was given up: too many tests).
    off: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            prog: Program {
                insn: Vec::new(),
                output_everything: -J_NEVER,
                safe_length: u32::MAX,
            },
            tree: vec![0],
            off: false,
        }
    }
}

impl Builder {
    /// A builder that records nothing, for rules past the listing's bound.
    pub(crate) fn disabled() -> Builder {
        Builder {
            off: true,
            ..Builder::default()
        }
    }

    /// The tests recorded so far.
    pub(crate) fn tests(&self) -> usize {
        self.prog.insn.len()
    }

    pub(crate) fn start(&mut self) {
        self.tree[0] += 1;
    }

    pub(crate) fn add(&mut self, offset: u32, value: u32, mask: u32) {
        if self.off {
            return;
        }
        self.prog.insn.push(Insn::new(offset, value, mask));
        self.tree.push(self.tree[0]);
        self.prog.output_everything = -1;
    }

    fn redirect(&mut self, first: usize, last: usize, success: i32, failure: i32) {
        for i in first..last {
            for k in 0..2 {
                let j = &mut self.prog.insn[i].j[k];
                if *j == J_SUCCESS {
                    *j = success;
                } else if *j == J_FAILURE {
                    *j = failure;
                }
            }
        }
    }

    pub(crate) fn finish(&mut self, comb: Comb) {
        self.finish_to(comb, J_SUCCESS, J_FAILURE);
    }

    fn finish_to(&mut self, comb: Comb, success: i32, failure: i32) {
        let level = self.tree[0];
        let n = self.prog.insn.len();
        let mut ptr = n;
        while ptr > 0 && (self.tree[ptr] < 0 || self.tree[ptr] >= level) {
            ptr -= 1;
        }
        let subtrees: Vec<usize> = (ptr + 1..=n)
            .filter(|&p| self.tree[p] == level)
            .map(|p| p - 1)
            .collect();
        if let Some(&first0) = subtrees.first() {
            self.tree[first0 + 1] = level - 1;
            for e in first0 + 2..=n {
                self.tree[e] = -1;
            }
            let mut t = 0;
            while t + 1 < subtrees.len() {
                let first = subtrees[t];
                let next = subtrees[t + 1];
                match comb {
                    Comb::And => self.redirect(first, next, next as i32, failure),
                    Comb::Or => self.redirect(first, next, success, next as i32),
                    Comb::Ternary => {
                        if t + 2 < subtrees.len() {
                            let next2 = subtrees[t + 2];
                            self.redirect(first, next, next as i32, next2 as i32);
                            self.redirect(next, next2, success, failure);
                            t += 1;
                        } else {
                            self.redirect(first, next, next as i32, failure);
                        }
                    }
                }
                t += 1;
            }
            if t < subtrees.len() {
                self.redirect(subtrees[t], n, success, failure);
            }
        }
        self.tree[0] -= 1;
    }

    /// Swaps success and failure in the last subtree; `flip_short` also
    /// flips where short packets go.
    pub(crate) fn negate(&mut self, flip_short: bool) {
        let level = self.tree[0];
        let n = self.prog.insn.len();
        let mut first = n as isize - 1;
        while first >= 0 && self.tree[first as usize + 1] != level {
            first -= 1;
        }
        if first < 0 {
            return;
        }
        for e in &mut self.prog.insn[first as usize..] {
            for k in 0..2 {
                if e.j[k] == J_FAILURE {
                    e.j[k] = J_SUCCESS;
                } else if e.j[k] == J_SUCCESS {
                    e.j[k] = J_FAILURE;
                }
            }
            if flip_short {
                e.short = !e.short;
            }
        }
    }

    /// Click's `add_comparison_exprs`: `(word >> shift) & mask` equal to
    /// `u`, or, with `gt`, greater than `u` (as a chain of masked tests);
    /// `negate` negates the result (flipping short packets).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn comparison(
        &mut self,
        offset: u32,
        shift: u32,
        mut mask: u32,
        u: u32,
        gt: bool,
        negate: bool,
    ) {
        let mut u = u & mask;
        if !gt {
            self.add(offset, u << shift, mask << shift);
            if negate {
                self.negate(true);
            }
            return;
        }
        let mut record = 0u32;
        let mut count = 0;
        while u < mask {
            let high = u > (mask >> 1);
            let x = if high { !u.wrapping_add(1) & mask } else { u };
            // Click's `33 - ffs_msb(x)`: one plus the top set bit's index.
            let first_different = 32 - x.leading_zeros() + u32::from(x == 0);
            let upper_mask = if x == 0 {
                mask
            } else {
                mask & !(1u32.wrapping_shl(first_different).wrapping_sub(1))
            };
            let upper_u = if high { upper_mask } else { 0 };
            self.start();
            self.add(offset, upper_u << shift, upper_mask << shift);
            if !high {
                self.negate(true);
            }
            record = (record << 1) | u32::from(high);
            count += 1;
            mask &= !upper_mask;
            u &= mask;
        }
        while count > 0 {
            self.finish(if record & 1 != 0 { Comb::And } else { Comb::Or });
            record >>= 1;
            count -= 1;
        }
        if negate {
            self.negate(true);
        }
    }

    /// Ends a pattern: success goes to `target` (an output `-N`, or
    /// `J_NEVER` to drop), failure stays unfinished (the next pattern).
    pub(crate) fn into_program(mut self, target: i32) -> Program {
        self.finish_to(Comb::And, target, J_FAILURE);
        self.prog
    }
}

/// The target of a pattern's action: output `n`, or `None` to drop.
pub(crate) fn action_target(output: Option<usize>) -> i32 {
    match output {
        Some(n) => -(n as i32),
        None => J_NEVER,
    }
}

// ------------------------------------------------------------ optimizing

fn map_offset(offset: u32) -> u32 {
    // Click's IPFilter sorts the protocol word first.
    if offset == OFFSET_NET + 8 {
        OFFSET_NET + 3
    } else {
        offset
    }
}

impl Program {
    fn count_inbranches(&self) -> Vec<i32> {
        let mut inb = vec![-1i32; self.insn.len()];
        for (i, e) in self.insn.iter().enumerate() {
            for k in 0..2 {
                if e.j[k] > 0 {
                    let t = e.j[k] as usize;
                    inb[t] = if inb[t] >= 0 { 0 } else { i as i32 };
                }
            }
        }
        inb
    }

    fn bubble_sort_and_exprs(&mut self) {
        let inbranch = self.count_inbranches();
        let mut i: isize = 0;
        while (i as usize) < self.insn.len() {
            let iu = i as usize;
            for k in 0..2 {
                let e1 = self.insn[iu];
                let j = e1.j[k];
                if j <= 0 || inbranch[j as usize] <= 0 {
                    continue;
                }
                let ju = j as usize;
                let e2 = self.insn[ju];
                if e1.j[1 - k] != e2.j[1 - k] {
                    continue;
                }
                let o1 = map_offset(u32::from(e1.offset));
                let o2 = map_offset(u32::from(e2.offset));
                if o1 > o2
                    || (o1 == o2
                        && (e1.mask > e2.mask || (e1.mask == e2.mask && e1.value > e2.value)))
                {
                    let mut new2 = e1;
                    new2.j[k] = e2.j[k];
                    let mut new1 = e2;
                    new1.j[k] = j;
                    self.insn[ju] = new2;
                    self.insn[iu] = new1;
                    i = if inbranch[iu] > 0 {
                        inbranch[iu] as isize - 1
                    } else {
                        i - 1
                    };
                    break;
                }
            }
            i += 1;
        }
    }

    fn combine_compatible_states(&mut self) {
        let mut i = self.insn.len() as isize - 1;
        while i >= 0 {
            let iu = i as usize;
            let no = self.insn[iu].no();
            if no > 0 {
                let no_in = self.insn[no as usize];
                let mut inn = self.insn[iu];
                if no_in.compatible(&inn, false) && inn.flippable() {
                    inn.flip();
                    self.insn[iu] = inn;
                } else if inn.generalizable_or_pair(&no_in) {
                    let bit = inn.value ^ no_in.value;
                    inn.value &= !bit;
                    inn.mask &= !bit;
                    inn.j[0] = no_in.no();
                    self.insn[iu] = inn;
                    // Look at this state again.
                    continue;
                }
            }
            let yes = self.insn[iu].yes();
            if yes <= 0 {
                i -= 1;
                continue;
            }
            let yu = yes as usize;
            if self.insn[iu].no() == self.insn[yu].yes() && self.insn[yu].flippable() {
                self.insn[yu].flip();
            }
            let yes_in = self.insn[yu];
            let inn = &mut self.insn[iu];
            if inn.no() == yes_in.no() && yes_in.compatible(inn, true) {
                inn.j[1] = yes_in.yes();
                if inn.mask == 0 {
                    inn.offset = yes_in.offset;
                }
                inn.value = (inn.value & inn.mask) | (yes_in.value & yes_in.mask);
                inn.mask |= yes_in.mask;
                continue;
            }
            i -= 1;
        }
    }

    fn remove_unused_states(&mut self) {
        let n = self.insn.len();
        if n == 0 {
            return;
        }
        let mut dest = vec![-1i32; n];
        for i in (0..n).rev() {
            for k in 0..2 {
                let j = self.insn[i].j[k];
                if j > 0 {
                    self.insn[i].j[k] = dest[j as usize];
                }
            }
            let inn = self.insn[i];
            dest[i] = if inn.yes() != inn.no() && inn.mask != 0 {
                i as i32
            } else if inn.yes() <= 0 {
                inn.yes()
            } else {
                dest[inn.yes() as usize]
            };
        }
        self.output_everything = -1;
        if dest[0] > 0 {
            self.insn[0] = self.insn[dest[0] as usize];
        } else if dest[0] < 0 {
            self.output_everything = dest[0].wrapping_neg();
        } else if self.insn[0].yes() == 0 && (self.insn[0].no() == 0 || self.insn[0].mask == 0) {
            self.output_everything = 0;
        }
        let mut dest = vec![-1i32; n];
        if self.output_everything < 0 {
            dest[0] = 0;
        }
        let mut next = 0;
        for i in 0..n {
            if dest[i] >= 0 {
                dest[i] = next;
                next += 1;
                let inn = self.insn[i];
                for k in 0..2 {
                    if inn.j[k] > 0 {
                        dest[inn.j[k] as usize] = 0;
                    }
                }
            }
        }
        for i in 0..n {
            if dest[i] >= 0 {
                let j = dest[i] as usize;
                if j != i {
                    self.insn[j] = self.insn[i];
                }
                for k in 0..2 {
                    let t = self.insn[j].j[k];
                    if t > 0 {
                        self.insn[j].j[k] = dest[t as usize];
                    }
                }
            }
        }
        self.insn.truncate(next as usize);
    }

    fn optimize(&mut self) {
        self.bubble_sort_and_exprs();
        {
            let mut dom = Dominators::new(self);
            for i in 0..dom.p.insn.len() {
                dom.run(i);
            }
        }
        self.combine_compatible_states();
        self.remove_unused_states();
        if self.insn.is_empty() && self.output_everything < 0 {
            self.output_everything = J_NEVER.wrapping_neg();
        } else if self.output_everything >= 0 {
            self.insn.clear();
        }
        self.safe_length = self
            .insn
            .iter()
            .map(Insn::required_length)
            .max()
            .unwrap_or(0);
    }

    /// Unfinished failure jumps (and a program that fails everything) go
    /// to `target`.
    fn set_failure(&mut self, target: i32) {
        if self.output_everything == J_FAILURE.wrapping_neg() {
            self.output_everything = target.wrapping_neg();
        }
        for inn in &mut self.insn {
            for k in 0..2 {
                if inn.j[k] == J_FAILURE {
                    inn.j[k] = target;
                }
            }
        }
    }

    /// Click's `merge_programs`: `next` runs where this program's
    /// patterns all fail.
    fn merge(&mut self, next: &Program) {
        let step_offset = self.insn.len() as i32;
        let mut target = step_offset;
        if self.insn.is_empty() && self.output_everything.wrapping_neg() != J_FAILURE {
            return;
        }
        if next.insn.is_empty() {
            target = next.output_everything.wrapping_neg();
        }
        self.set_failure(target);
        for inn in &next.insn {
            let mut c = *inn;
            for k in 0..2 {
                if c.j[k] > 0 {
                    c.j[k] += step_offset;
                }
            }
            self.insn.push(c);
        }
    }
}

/// Click's dominator optimizer: for every test, up to four sets of
/// branches some path to it must have taken; a branch into a test those
/// sets decide is moved past it.
struct Dominators<'a> {
    p: &'a mut Program,
    known_length: Vec<u32>,
    insn_id: Vec<usize>,
    dom: Vec<i32>,
    dom_start: Vec<usize>,
    domlist_start: Vec<usize>,
    pred_first: Vec<i32>,
    pred_next: Vec<i32>,
    pred_prev: Vec<i32>,
}

const MAX_DOMLIST: usize = 4;

fn brno(state: usize, yes: bool) -> i32 {
    ((state as i32) << 1) + i32::from(yes)
}

fn stateno(br: i32) -> usize {
    (br >> 1) as usize
}

fn br_yes(br: i32) -> bool {
    br & 1 != 0
}

impl<'a> Dominators<'a> {
    fn new(p: &'a mut Program) -> Dominators<'a> {
        let n = p.insn.len();
        let mut known_length = vec![0x7FFF_FFFFu32; n];
        if n > 0 {
            known_length[0] = 0;
        }
        for i in 0..n {
            let inn = p.insn[i];
            let tested = inn.required_length().max(known_length[i]);
            let so = usize::from(inn.short);
            let other = inn.j[1 - so];
            if other > 0 && tested < known_length[other as usize] {
                known_length[other as usize] = tested;
            }
            let same = inn.j[so];
            if same > 0 && known_length[i] < known_length[same as usize] {
                known_length[same as usize] = known_length[i];
            }
        }
        // Equal tests share the id of the first of them.
        let mut first_of = std::collections::HashMap::new();
        let insn_id: Vec<usize> = (0..n)
            .map(|i| *first_of.entry(p.insn[i].key()).or_insert(i))
            .collect();
        let mut d = Dominators {
            p,
            known_length,
            insn_id,
            dom: Vec::new(),
            dom_start: vec![0],
            domlist_start: vec![0],
            pred_first: vec![-1; n],
            pred_next: vec![-1; 2 * n],
            pred_prev: vec![-1; 2 * n],
        };
        for i in 0..n {
            for k in 0..2 {
                let t = d.p.insn[i].j[k];
                if t > 0 {
                    let br = brno(i, k == 1);
                    let t = t as usize;
                    d.pred_next[br as usize] = d.pred_first[t];
                    if d.pred_first[t] >= 0 {
                        d.pred_prev[d.pred_first[t] as usize] = br;
                    }
                    d.pred_first[t] = br;
                }
            }
        }
        d
    }

    fn insn(&self, s: usize) -> &Insn {
        &self.p.insn[s]
    }

    fn br_implies(&self, br: i32, state: usize) -> bool {
        let from = stateno(br);
        let kl = self.known_length[from];
        if br_yes(br) {
            self.insn(from).implies(self.insn(state), kl)
        } else {
            self.insn(from).not_implies(self.insn(state), kl)
        }
    }

    fn br_implies_not(&self, br: i32, state: usize) -> bool {
        let from = stateno(br);
        let kl = self.known_length[from];
        if br_yes(br) {
            self.insn(from).implies_not(self.insn(state), kl)
        } else {
            self.insn(from).not_implies_not(self.insn(state), kl)
        }
    }

    fn set_branch(&mut self, from: usize, yes: bool, to: i32) {
        let br = brno(from, yes);
        let k = usize::from(yes);
        let old = self.p.insn[from].j[k];
        let bu = br as usize;
        if old > 0 {
            if self.pred_prev[bu] >= 0 {
                self.pred_next[self.pred_prev[bu] as usize] = self.pred_next[bu];
            } else {
                self.pred_first[old as usize] = self.pred_next[bu];
            }
            if self.pred_next[bu] >= 0 {
                self.pred_prev[self.pred_next[bu] as usize] = self.pred_prev[bu];
            }
        }
        if to > 0 {
            let mut prev = -1;
            let mut cur = self.pred_first[to as usize];
            while cur >= 0 && cur < br {
                prev = cur;
                cur = self.pred_next[cur as usize];
            }
            self.pred_prev[bu] = prev;
            self.pred_next[bu] = cur;
            if prev >= 0 {
                self.pred_next[prev as usize] = br;
            } else {
                self.pred_first[to as usize] = br;
            }
            if cur >= 0 {
                self.pred_prev[cur as usize] = br;
            }
        }
        self.p.insn[from].j[k] = to;
    }

    fn predecessors(&self, state: usize) -> Vec<i32> {
        let mut v = Vec::new();
        let mut br = self.pred_first[state];
        while br >= 0 {
            v.push(br);
            br = self.pred_next[br as usize];
        }
        v
    }

    fn calculate_dom(&mut self, state: usize) {
        let preds = self.predecessors(state);
        let mut pdom: Vec<usize> = Vec::new();
        let mut pdom_end: Vec<usize> = Vec::new();
        for (i, &pred_br) in preds.iter().enumerate() {
            let s = stateno(pred_br);
            if i > 0 && stateno(preds[i - 1]) == s {
                if let Some(e) = pdom_end.last_mut() {
                    *e = e.saturating_sub(1);
                }
                continue;
            }
            let pred_brid = brno(self.insn_id[s], br_yes(pred_br));
            for j in self.domlist_start[s]..self.domlist_start[s + 1] {
                let pos1 = self.dom_start[j];
                let pos2 = self.dom_start[j + 1];
                if self.dom[pos1..pos2 - 1]
                    .iter()
                    .any(|&d| (d ^ pred_brid) == 1)
                {
                    continue;
                }
                pdom.push(pos1);
                pdom_end.push(pos2);
                self.dom[pos2 - 1] = pred_brid;
            }
        }
        let dom_start_oldsize = self.dom_start.len();
        if pdom.len() > MAX_DOMLIST {
            let mut out = Vec::new();
            intersect_lists(&self.dom, &pdom, &pdom_end, 0, pdom.len(), &mut out);
            self.dom.extend(out);
            self.dom.push(brno(self.insn_id[state], false));
            self.dom_start.push(self.dom.len());
        } else if !pdom.is_empty() {
            let mut mybr = brno(self.insn_id[state], false);
            let mut num_mybr: i32 = 0;
            for p in 0..pdom.len() {
                let mut pred_mybr = -1;
                // A list can be empty: a predecessor whose two branches
                // both come here loses its own entry, which may have been
                // its list's only one (Click then reads before the list
                // and copies nothing).
                if pdom_end[p] > pdom[p] {
                    let endpos = pdom_end[p] - 1;
                    let last_pdom_br = self.dom[endpos];
                    for i in pdom[p]..=endpos {
                        let thisbr = self.dom[i];
                        if i < endpos && (thisbr ^ last_pdom_br) <= 1 {
                            continue;
                        }
                        if (thisbr ^ mybr) <= 1 {
                            pred_mybr = thisbr;
                        }
                        self.dom.push(thisbr);
                    }
                }
                if num_mybr >= 0 && pred_mybr >= 0 && (num_mybr == 0 || mybr == pred_mybr) {
                    mybr = pred_mybr;
                    num_mybr += 1;
                } else {
                    num_mybr = -1;
                }
                self.dom.push(mybr);
                self.dom_start.push(self.dom.len());
            }
            if num_mybr > 0 {
                let new_state = self.p.insn[state].j[(mybr & 1) as usize];
                for &pr in &preds {
                    self.set_branch(stateno(pr), br_yes(pr), new_state);
                }
                pdom.clear();
            }
        }
        if pdom.is_empty() {
            let keep = self.dom_start[dom_start_oldsize - 1];
            self.dom.truncate(keep);
            self.dom_start.truncate(dom_start_oldsize);
            if state > 0 {
                self.set_branch(state, false, J_NEVER);
                self.set_branch(state, true, J_NEVER);
            } else {
                self.dom.push(brno(state, false));
                self.dom_start.push(self.dom.len());
            }
        }
        self.domlist_start.push(self.dom_start.len() - 1);
    }

    fn dom_shift_branch(
        &mut self,
        br: i32,
        mut to: i32,
        dom: usize,
        dom_end: usize,
        mut collector: Option<&mut Vec<i32>>,
    ) -> i32 {
        let br = brno(self.insn_id[stateno(br)], br_yes(br));
        self.dom[dom_end - 1] = br;
        if let Some(c) = collector.as_deref_mut() {
            c.push(to);
        }
        while to > 0 {
            let mut found = None;
            for j in (dom..dom_end).rev() {
                let d = self.dom[j];
                if self.br_implies(d, to as usize) {
                    found = Some(self.insn(to as usize).yes());
                    break;
                } else if self.br_implies_not(d, to as usize) {
                    found = Some(self.insn(to as usize).no());
                    break;
                }
            }
            match found {
                Some(t) => {
                    to = t;
                    if let Some(c) = collector.as_deref_mut() {
                        c.push(to);
                    }
                }
                None => break,
            }
        }
        to
    }

    fn shift_branch(&mut self, state: usize, yes: bool) {
        let nexts = self.p.insn[state].j[usize::from(yes)];
        let br = brno(state, yes);
        let (d0, d1) = (self.domlist_start[state], self.domlist_start[state + 1]);
        let new_nexts = if d0 == d1 || nexts <= 0 {
            nexts
        } else if d0 + 1 == d1 {
            let (a, b) = (self.dom_start[d0], self.dom_start[d0 + 1]);
            self.dom_shift_branch(br, nexts, a, b, None)
        } else {
            let mut vals = Vec::new();
            let mut start = Vec::new();
            let mut end = Vec::new();
            for d in d0..d1 {
                start.push(vals.len());
                let (a, b) = (self.dom_start[d], self.dom_start[d + 1]);
                self.dom_shift_branch(br, nexts, a, b, Some(&mut vals));
                end.push(vals.len());
            }
            last_common_state_in_lists(&vals, &start, &end)
        };
        if new_nexts != nexts {
            self.set_branch(state, yes, new_nexts);
        }
    }

    fn run(&mut self, state: usize) {
        self.calculate_dom(state);
        self.shift_branch(state, true);
        self.shift_branch(state, false);
    }
}

fn intersect_lists(
    input: &[i32],
    start: &[usize],
    end: &[usize],
    pos1: usize,
    pos2: usize,
    out: &mut Vec<i32>,
) {
    if pos1 == pos2 {
        return;
    }
    if pos2 - pos1 == 1 {
        if end[pos1] > start[pos1] {
            out.extend_from_slice(&input[start[pos1]..end[pos1]]);
        }
        return;
    }
    let mut pos: Vec<usize> = start.to_vec();
    let mut x: i32 = -1;
    loop {
        let mut p = pos1;
        let mut k = 0;
        while k < pos2 - pos1 {
            while pos[p] < end[p] && input[pos[p]] < x {
                pos[p] += 1;
            }
            if pos[p] >= end[p] {
                return;
            }
            if input[pos[p]] > x {
                x = input[pos[p]];
                k = 0;
            }
            p += 1;
            if p == pos2 {
                p = pos1;
            }
            k += 1;
        }
        out.push(x);
        x += 1;
    }
}

fn last_common_state_in_lists(input: &[i32], start: &[usize], end: &[usize]) -> i32 {
    let s = input[end[0] - 1];
    if s <= 0 && (1..start.len()).all(|j| input[end[j] - 1] == s) {
        return s;
    }
    let mut inter = Vec::new();
    intersect_lists(input, start, end, 0, start.len(), &mut inter);
    inter.last().copied().unwrap_or(s)
}

// ------------------------------------------------------------ the listing

/// Click's `program` handler text for the patterns' programs (in
/// pattern order, each finished with its action's target): the programs
/// are merged in pairs (a program's unfinished failures jump to the
/// next), each merge optimized, as Click 2.1's IPFilter does; failures
/// left at the end drop.
pub(crate) fn listing(progs: Vec<Program>) -> String {
    compressed_listing(&final_program(progs))
}

/// Which of `noutputs` outputs some packet reaches in Click's final
/// program for the patterns: those it does not are what Click's
/// IPClassifier warns about (`output N matches no packets`).
pub(crate) fn reachable_outputs(progs: Vec<Program>, noutputs: usize) -> Vec<bool> {
    let prog = final_program(progs);
    let mut reached = vec![false; noutputs];
    let mut mark = |target: i32| {
        // Outputs are targets 0, -1, -2, ...; J_NEVER drops.
        if target <= 0 && target != J_NEVER {
            if let Some(r) = reached.get_mut(target.unsigned_abs() as usize) {
                *r = true;
            }
        }
    };
    if prog.insn.is_empty() {
        mark(prog.output_everything.wrapping_neg());
        return reached;
    }
    // Only the steps a packet can get to count.
    let mut seen = vec![false; prog.insn.len()];
    let mut todo = vec![0usize];
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        for &j in &prog.insn[i].j {
            match usize::try_from(j) {
                Ok(next) if j > 0 && next < prog.insn.len() => todo.push(next),
                _ => mark(j),
            }
        }
    }
    reached
}

/// Click's program for the patterns, merged and optimized as Click 2.1's
/// IPFilter does; failures left at the end drop.
fn final_program(mut progs: Vec<Program>) -> Program {
    if progs.is_empty() {
        progs.push(Builder::default().prog);
    }
    let num = progs.len();
    if num == 1 {
        progs[0].optimize();
    } else {
        let mut n = 1;
        while n * 2 <= num {
            let mut i = 0;
            while i < num {
                let b = i + n;
                if b < num {
                    let next = progs[b].clone();
                    progs[i].merge(&next);
                    progs[i].optimize();
                }
                i += n * 2;
            }
            n *= 2;
        }
        if n != num {
            let next = progs[n].clone();
            progs[0].merge(&next);
            progs[0].optimize();
        }
    }
    let mut prog = progs.swap_remove(0);
    prog.set_failure(J_NEVER);
    prog.bubble_sort_and_exprs();
    prog
}

/// Click's compressed program, printed: runs of tests on one word with
/// one `yes` target print as consecutive steps.
fn compressed_listing(prog: &Program) -> String {
    let n = prog.insn.len();
    // Which tests head a compressed test, and the values each holds.
    let mut wanted = vec![0u32; n + 1];
    wanted[0] = 1;
    for i in 0..n {
        if wanted[i] != 0 {
            for k in 0..2 {
                if prog.insn[i].j[k] > 0 {
                    wanted[prog.insn[i].j[k] as usize] += 1;
                }
            }
        }
    }
    struct Group {
        head: Insn,
        no: i32,
        values: Vec<u32>,
    }
    let mut groups: Vec<(usize, Group)> = Vec::new();
    for i in 0..n {
        if wanted[i] == 0 {
            continue;
        }
        let inn = prog.insn[i];
        let mut g = Group {
            head: inn,
            no: inn.no(),
            values: vec![inn.value],
        };
        loop {
            let no = g.no;
            if no <= 0 || wanted[no as usize] != 1 {
                break;
            }
            let x = prog.insn[no as usize];
            if x.yes() != inn.yes() || x.offset != inn.offset || x.mask != inn.mask {
                break;
            }
            g.no = x.no();
            g.values.push(x.value);
            wanted[no as usize] -= 1;
        }
        if g.values.len() >= MIN_BINARY_SEARCH {
            // Click sorts the values as machine words.
            g.values.sort_by_key(|v| v.swap_bytes());
        }
        groups.push((i, g));
    }
    // Step numbers: each value is a step.
    let mut first_step = vec![0i32; n];
    let mut step = 0;
    for (i, g) in &groups {
        first_step[*i] = step;
        step += g.values.len() as i32;
    }
    let map = |j: i32| if j > 0 { first_step[j as usize] } else { j };
    let mut s = String::new();
    for (i, g) in &groups {
        for (k, v) in g.values.iter().enumerate() {
            let mystep = first_step[*i] + k as i32;
            let no = if k + 1 < g.values.len() {
                mystep + 1
            } else {
                map(g.no)
            };
            let inn = Insn {
                offset: g.head.offset,
                short: g.head.short,
                mask: g.head.mask,
                value: v & g.head.mask,
                j: [no, map(g.head.yes())],
            };
            let _ = writeln!(
                s,
                "{}{mystep} {}",
                if mystep < 10 { " " } else { "" },
                insn_text(&inn)
            );
        }
    }
    if groups.is_empty() {
        let _ = writeln!(s, "all->[{}]", prog.output_everything);
    }
    let _ = writeln!(s, "safe length {}", prog.safe_length);
    let _ = writeln!(s, "alignment offset 0");
    s
}
