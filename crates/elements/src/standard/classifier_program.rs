//! The decision program behind Classifier: pattern parsing, compilation
//! into a tree of masked 32-bit word comparisons, optimization, evaluation
//! and Click-style unparsing.
//!
//! A pattern is a conjunction of predicates. A positive clause `OFF/VALUE`
//! contributes one predicate per 4-byte word it touches; a negated clause
//! `!OFF/VALUE` is one predicate, the negation of the conjunction of its
//! words. A word test on a packet too short to hold its last masked byte
//! fails (so a negated clause matches such a packet), as in Click.
//!
//! Compilation lays the patterns out as a linear program of word tests
//! (first match wins, each pattern's failure jumps to the next pattern),
//! then redirects every branch past tests whose outcome is already known on
//! that branch: what earlier tests proved about the packet is carried along
//! the edges and intersected where paths join, as Click's optimizer does.
//! Shared prefixes thus collapse (two patterns starting with `12/0806` test
//! it once), and unreachable tests disappear.
//!
//! The matcher at the end of this file ([`Test`], [`run`]) runs every
//! compiled classifier: Classifier's programs, and IPFilter's and
//! IPClassifier's decision programs, whose tests read words of several
//! headers and compare them with ranges (Click's three classifiers also
//! run one program form).

use std::fmt::Write as _;

/// Jump target meaning "drop the packet" (Click's `j_never`).
pub const DROP: i32 = -2147483647;

/// One word test: `(word at OFFSET) & MASK == VALUE`. `yes`/`no` are jump
/// targets: `> 0` a step number, `<= 0` an output (`-j`), or [`DROP`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Insn {
    /// Byte offset of the word (a multiple of 4).
    pub offset: u32,
    /// Mask and value, as big-endian words (byte 0 most significant).
    pub mask: u32,
    pub value: u32,
    pub yes: i32,
    pub no: i32,
}

branch_by_yes_no!(Insn);

impl Insn {
    /// Bytes the packet needs for this test to be decidable on data: up to
    /// the last masked byte. Zero when the mask is empty.
    pub fn required_length(&self) -> u32 {
        required_length(self.offset, self.mask)
    }
}

fn required_length(offset: u32, mask: u32) -> u32 {
    if mask == 0 {
        0
    } else {
        offset + 4 - mask.trailing_zeros() / 8
    }
}

/// A compiled classifier program.
#[derive(Clone, Debug)]
pub struct Program {
    insns: Vec<Insn>,
    eval: Vec<Test>,
    /// When every packet goes to one place (`-` first, or no tests left).
    output_everything: Option<i32>,
    /// Click's safe length: the longest `required_length`.
    safe_length: u32,
}

/// One predicate of a pattern.
#[derive(Clone, Debug)]
enum Pred {
    /// `(offset, mask, value)`.
    Word(Word),
    /// Negated conjunction of words.
    Not(Vec<Word>),
}

/// A word test of a clause: `(offset, mask, value)`.
type Word = (u32, u32, u32);

/// Largest clause offset accepted (Click stores offsets in 16 bits).
const MAX_OFFSET: u32 = 65535;

fn nibble(c: u8) -> (u32, u32) {
    match c {
        b'?' => (0, 0),
        b'0'..=b'9' => ((c - b'0') as u32, 0xF),
        b'a'..=b'f' => ((c - b'a' + 10) as u32, 0xF),
        b'A'..=b'F' => ((c - b'A' + 10) as u32, 0xF),
        _ => (0, 0),
    }
}

/// Splits clause bytes `(offset, value, mask)` into aligned words.
fn clause_words(offset: u32, bytes: &[(u8, u8)]) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    for (i, &(v, m)) in bytes.iter().enumerate() {
        let off = offset + i as u32;
        let base = off & !3;
        let shift = 24 - 8 * (off & 3);
        if words.last().map(|w| w.0) != Some(base) {
            words.push((base, 0, 0));
        }
        if let Some(w) = words.last_mut() {
            w.1 |= (m as u32) << shift;
            w.2 |= ((v & m) as u32) << shift;
        }
    }
    words
}

/// Parses one pattern into predicates. `None` for a pattern that matches
/// everything (`-` or no clauses).
fn parse_pattern(slot: usize, s: &str, errors: &mut Vec<String>) -> Vec<Pred> {
    let s = s.as_bytes();
    let len = s.len();
    let mut preds = Vec::new();
    let mut i = 0;
    if s == b"-" {
        i = 1;
    }
    while i < len {
        while i < len && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= len {
            break;
        }
        let mut negated = false;
        if s[i] == b'!' {
            negated = true;
            i += 1;
            while i < len && s[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        if i >= len || !s[i].is_ascii_digit() {
            errors.push(format!("pattern {slot}: expected a digit"));
            break;
        }
        let mut offset: u64 = 0;
        while i < len && s[i].is_ascii_digit() {
            offset = (offset * 10 + (s[i] - b'0') as u64).min(u64::from(u32::MAX));
            i += 1;
        }
        if i >= len || s[i] != b'/' {
            errors.push(format!("pattern {slot}: expected '/'"));
            break;
        }
        i += 1;
        let is_digit = |c: u8| c.is_ascii_hexdigit() || c == b'?';
        let value_pos = i;
        while i < len && is_digit(s[i]) {
            i += 1;
        }
        let value = &s[value_pos..i];
        let mut mask: Option<&[u8]> = None;
        if i < len && s[i] == b'%' {
            i += 1;
            let mask_pos = i;
            while i < len && is_digit(s[i]) {
                i += 1;
            }
            mask = Some(&s[mask_pos..i]);
        }
        let nerr = errors.len();
        if value.len() < 2 {
            errors.push(format!("pattern {slot}: value has less than 2 hex digits"));
        } else if value.len() & 1 == 1 {
            errors.push(format!(
                "pattern {slot}: value has odd number of hex digits"
            ));
        }
        if let Some(m) = mask {
            if m.len() != value.len() {
                let which = if m.len() > value.len() { "many" } else { "few" };
                errors.push(format!("pattern {slot}: mask has too {which} hex digits"));
            }
        }
        if offset > u64::from(MAX_OFFSET) {
            errors.push(format!("pattern {slot}: offset too large"));
        }
        if errors.len() > nerr {
            continue;
        }
        let bytes: Vec<(u8, u8)> = (0..value.len() / 2)
            .map(|k| {
                let (vh, mh) = nibble(value[2 * k]);
                let (vl, ml) = nibble(value[2 * k + 1]);
                let mut v = (vh << 4 | vl) as u8;
                let mut m = (mh << 4 | ml) as u8;
                if let Some(mk) = mask {
                    let (a, am) = nibble(mk[2 * k]);
                    let (b, bm) = nibble(mk[2 * k + 1]);
                    m &= ((a << 4 | b) & (am << 4 | bm)) as u8;
                }
                v &= m;
                (v, m)
            })
            .collect();
        let words = clause_words(offset as u32, &bytes);
        if negated {
            preds.push(Pred::Not(words));
        } else {
            preds.extend(words.into_iter().map(Pred::Word));
        }
    }
    preds
}

/// Orders a pattern's positive words by offset (as Click sorts "and"
/// chains) and merges compatible words at the same offset. Negated clauses
/// keep their order after the positive words. Reordering is safe: a
/// pattern is a conjunction of independent predicates.
fn normalize(preds: Vec<Pred>) -> Vec<Pred> {
    let mut words: Vec<Word> = Vec::new();
    let mut nots = Vec::new();
    for p in preds {
        match p {
            Pred::Word(w) if w.1 != 0 => words.push(w),
            Pred::Word(_) => {}
            Pred::Not(w) => nots.push(Pred::Not(w)),
        }
    }
    words.sort_unstable();
    let mut merged: Vec<Word> = Vec::new();
    for w in words {
        if let Some(last) = merged.last_mut() {
            let both = last.1 & w.1;
            if last.0 == w.0 && (last.2 & both) == (w.2 & both) {
                last.1 |= w.1;
                last.2 |= w.2;
                continue;
            }
        }
        merged.push(w);
    }
    let mut out: Vec<Pred> = merged.into_iter().map(Pred::Word).collect();
    out.extend(nots);
    out
}

/// Placeholder jump targets while laying out the linear program.
const J_NEXT_PATTERN: i32 = i32::MIN;

/// Lays out the patterns as a linear program (Click's unoptimized form).
fn layout(patterns: &[Vec<Pred>]) -> Vec<Insn> {
    let mut insns: Vec<Insn> = Vec::new();
    let npat = patterns.len();
    for (slot, preds) in patterns.iter().enumerate() {
        let start = insns.len();
        let success = -(slot as i32);
        // Each predicate's "continue" target is the next instruction, or
        // the output after the last predicate; patched below.
        let mut pred_ends: Vec<usize> = Vec::new();
        if preds.is_empty() {
            insns.push(Insn {
                offset: 0,
                mask: 0,
                value: 0,
                yes: success,
                no: J_NEXT_PATTERN,
            });
            continue;
        }
        for p in preds {
            match p {
                &Pred::Word((offset, mask, value)) => {
                    insns.push(Insn {
                        offset,
                        mask,
                        value,
                        yes: 0, // continue
                        no: J_NEXT_PATTERN,
                    });
                    pred_ends.push(insns.len() - 1);
                }
                Pred::Not(words) => {
                    let first = insns.len();
                    let words: &[Word] = if words.is_empty() {
                        &[(0, 0, 0)]
                    } else {
                        words
                    };
                    for (k, &(offset, mask, value)) in words.iter().enumerate() {
                        let last = k + 1 == words.len();
                        insns.push(Insn {
                            offset,
                            mask,
                            value,
                            // All words match: the negation fails.
                            yes: if last {
                                J_NEXT_PATTERN
                            } else {
                                (first + k + 1) as i32
                            },
                            no: 0, // continue
                        });
                    }
                    for idx in first..insns.len() {
                        pred_ends.push(idx);
                    }
                }
            }
        }
        let end = insns.len();
        let cont_after = |idx: usize| -> i32 {
            if idx + 1 < end {
                (idx + 1) as i32
            } else {
                success
            }
        };
        // Patch "continue" targets: the first instruction after the
        // predicate that contains idx.
        let mut idx = start;
        for p in preds {
            let n = match p {
                Pred::Word(_) => 1,
                Pred::Not(w) => w.len().max(1),
            };
            let last = idx + n - 1;
            let cont = cont_after(last);
            for insn in &mut insns[idx..idx + n] {
                match p {
                    Pred::Word(_) => insn.yes = cont,
                    Pred::Not(_) => insn.no = cont,
                }
            }
            idx += n;
        }
    }
    // Patch pattern failures: the next pattern's first instruction.
    let mut starts = Vec::with_capacity(npat + 1);
    let mut k = 0;
    for preds in patterns {
        starts.push(k);
        k += preds
            .iter()
            .map(|p| match p {
                Pred::Word(_) => 1,
                Pred::Not(w) => w.len().max(1),
            })
            .sum::<usize>()
            .max(1);
    }
    starts.push(k);
    for (slot, w) in starts.windows(2).enumerate() {
        let next = if slot + 1 < npat { w[1] as i32 } else { DROP };
        for insn in &mut insns[w[0]..w[1]] {
            if insn.yes == J_NEXT_PATTERN {
                insn.yes = next;
            }
            if insn.no == J_NEXT_PATTERN {
                insn.no = next;
            }
        }
    }
    insns
}

/// What is known about a packet on a program edge.
#[derive(Clone, Debug, Default)]
struct Know {
    /// Known data: per word offset, bits known and their values.
    pos: Vec<(u32, u32, u32)>,
    /// Word tests known to fail (offset, mask, value).
    neg: Vec<(u32, u32, u32)>,
    /// Known minimum packet length.
    len: u32,
}

/// Facts of each kind a path keeps. Forgetting one only leaves a test
/// undecided; without a bound, a pattern of thousands of words made
/// optimizing quadratic (a 100 KB pattern took seconds).
const FACT_LIMIT: usize = 1024;

impl Facts for Know {
    type Step = Insn;

    fn decide(&self, t: &Insn) -> Option<bool> {
        if t.mask == 0 {
            return Some(true);
        }
        if let Some(&(_, pm, pv)) = self.pos.iter().find(|p| p.0 == t.offset) {
            if pm & t.mask == t.mask && pv & t.mask == t.value {
                return Some(true);
            }
            if (pv ^ t.value) & pm & t.mask != 0 {
                return Some(false);
            }
        }
        for &(o, nm, nv) in &self.neg {
            if o != t.offset {
                continue;
            }
            if t.mask & nm == nm && t.value & nm == nv {
                return Some(false);
            }
            if nm == t.mask
                && t.mask.count_ones() == 1
                && nv != t.value
                && self.len >= t.required_length()
            {
                return Some(true);
            }
        }
        None
    }

    fn with(&self, t: &Insn, outcome: bool) -> Know {
        let mut k = self.clone();
        if t.mask == 0 {
            return k;
        }
        if outcome {
            let room = k.pos.len() < FACT_LIMIT;
            match k.pos.iter_mut().find(|p| p.0 == t.offset) {
                Some(p) => {
                    p.1 |= t.mask;
                    p.2 = (p.2 & !t.mask) | t.value;
                }
                None if room => k.pos.push((t.offset, t.mask, t.value)),
                None => {}
            }
            k.len = k.len.max(t.required_length());
        } else if k.neg.len() < FACT_LIMIT && !k.neg.contains(&(t.offset, t.mask, t.value)) {
            k.neg.push((t.offset, t.mask, t.value));
        }
        k
    }

    /// What is known on both of two joining paths.
    fn meet(&self, o: &Know) -> Know {
        let mut pos = Vec::new();
        for &(off, m1, v1) in &self.pos {
            if let Some(&(_, m2, v2)) = o.pos.iter().find(|p| p.0 == off) {
                let m = m1 & m2 & !(v1 ^ v2);
                if m != 0 {
                    pos.push((off, m, v1 & m));
                }
            }
        }
        let neg = self
            .neg
            .iter()
            .filter(|f| o.neg.contains(f))
            .copied()
            .collect();
        Know {
            pos,
            neg,
            len: self.len.min(o.len),
        }
    }
}

/// Where the optimized program starts.
enum Entry {
    Step(usize),
    /// Every packet goes to this jump target.
    All(i32),
}

/// Redirects branches past decided tests; returns the entry.
fn optimize(insns: &mut [Insn]) -> Entry {
    let empty = Know::default();
    // Step 0 is the entry; it may be decided before any test.
    let first = match insns.first() {
        None => return Entry::All(DROP),
        Some(i) => *i,
    };
    let entry = match empty.decide(&first) {
        Some(b) => {
            let t = drift(insns, if b { first.yes } else { first.no }, &empty);
            if t <= 0 {
                return Entry::All(t);
            }
            t as usize
        }
        None if first.yes == first.no => {
            let t = drift(insns, first.yes, &empty);
            if t <= 0 {
                return Entry::All(t);
            }
            t as usize
        }
        None => 0,
    };
    propagate::<Know>(insns, entry);
    Entry::Step(entry)
}

/// Keeps the steps reachable from `entry`, renumbered in order with the
/// entry first; merges identical steps.
fn compact(insns: &[Insn], entry: usize) -> Vec<Insn> {
    let n = insns.len();
    let mut reach = reachable(insns, entry);
    // Merge identical steps into the later copy (keeps jumps forward).
    let mut alias: Vec<usize> = (0..n).collect();
    let mut insns: Vec<Insn> = insns.to_vec();
    // The surviving later step of each distinct test (one each: a later
    // duplicate would have been merged), so merging is linear, not
    // quadratic (a 100 KB pattern took seconds).
    let mut survivors: std::collections::HashMap<Insn, usize> = std::collections::HashMap::new();
    for i in (0..n).rev() {
        if !reach[i] {
            continue;
        }
        let remap = |t: i32, alias: &[usize]| if t > 0 { alias[t as usize] as i32 } else { t };
        insns[i].yes = remap(insns[i].yes, &alias);
        insns[i].no = remap(insns[i].no, &alias);
        if i == entry {
            continue;
        }
        match survivors.entry(insns[i]) {
            std::collections::hash_map::Entry::Occupied(j) => {
                alias[i] = *j.get();
                reach[i] = false;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i);
            }
        }
    }
    // Jumps were remapped from the end backwards, so every jump already
    // points at a surviving step.
    renumber(&insns, &reach)
}

/// The program of an unconfigured Classifier: it drops every packet.
impl Default for Program {
    fn default() -> Self {
        Program::from_insns(Vec::new(), false)
    }
}

impl Program {
    /// Compiles Classifier patterns. Errors are Click's messages
    /// (`pattern N: ...`).
    pub fn compile(patterns: &[String]) -> Result<Program, Vec<String>> {
        let mut errors = Vec::new();
        let parsed: Vec<Vec<Pred>> = patterns
            .iter()
            .enumerate()
            .map(|(slot, s)| normalize(parse_pattern(slot, s, &mut errors)))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Program::from_insns(layout(&parsed), true))
    }

    /// Like [`Program::compile`] but without optimization: the linear
    /// program (for tests and comparison).
    pub fn compile_unoptimized(patterns: &[String]) -> Result<Program, Vec<String>> {
        let mut errors = Vec::new();
        let parsed: Vec<Vec<Pred>> = patterns
            .iter()
            .enumerate()
            .map(|(slot, s)| parse_pattern(slot, s, &mut errors))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Program::from_insns(layout(&parsed), false))
    }

    fn from_insns(mut insns: Vec<Insn>, optimized: bool) -> Program {
        let mut output_everything = None;
        if insns.is_empty() {
            output_everything = Some(DROP);
        } else if optimized {
            match optimize(&mut insns) {
                Entry::All(j) => {
                    output_everything = Some(j);
                    insns.clear();
                }
                Entry::Step(entry) => {
                    insns = compact(&insns, entry);
                    insns = compact(&insns, 0);
                }
            }
        }
        let safe_length = insns.iter().map(|i| i.required_length()).max().unwrap_or(0);
        let eval = insns
            .iter()
            .map(|i| Test {
                base: 0,
                offset: i.offset,
                required: i.required_length(),
                mask: u32::from_ne_bytes(i.mask.to_be_bytes()),
                lo: u32::from_ne_bytes(i.value.to_be_bytes()),
                span: 0,
                j: [i.no, i.yes],
            })
            .collect();
        Program {
            insns,
            eval,
            output_everything,
            safe_length,
        }
    }

    /// The steps of the program.
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }

    /// Outputs some packet can reach.
    pub fn reachable_outputs(&self) -> Vec<u32> {
        let mut outs = Vec::new();
        let mut add = |j: i32| {
            if j <= 0 && j != DROP && !outs.contains(&(-j as u32)) {
                outs.push(-j as u32);
            }
        };
        match self.output_everything {
            Some(j) => add(j),
            None => {
                for i in &self.insns {
                    add(i.yes);
                    add(i.no);
                }
            }
        }
        outs.sort_unstable();
        outs
    }

    /// Classifies packet data: the output number, or `None` to drop.
    #[inline]
    pub fn classify(&self, data: &[u8]) -> Option<usize> {
        let j = self.run(data);
        (j != DROP).then_some((-j) as usize)
    }

    #[inline]
    fn run(&self, data: &[u8]) -> i32 {
        match self.output_everything {
            Some(j) => j,
            None => run(&self.eval, data),
        }
    }

    /// Click's `program` handler text.
    pub fn unparse(&self) -> String {
        fn jump(j: i32) -> String {
            if j == DROP {
                "[X]".into()
            } else if j <= 0 {
                format!("[{}]", -j)
            } else {
                format!("step {j}")
            }
        }
        let mut s = String::new();
        for (i, insn) in self.insns.iter().enumerate() {
            let _ = writeln!(
                s,
                "{}{} {:3}/{:08x}%{:08x}  yes->{}  no->{}",
                if i < 10 { " " } else { "" },
                i,
                insn.offset,
                insn.value,
                insn.mask,
                jump(insn.yes),
                jump(insn.no)
            );
        }
        if self.insns.is_empty() {
            let j = self.output_everything.unwrap_or(DROP);
            let out = if j == DROP {
                -(DROP as i64)
            } else {
                -(j as i64)
            };
            let _ = writeln!(s, "all->[{out}]");
        }
        let _ = writeln!(s, "safe length {}", self.safe_length);
        s.push_str("alignment offset 0\n");
        s
    }
}

// --------------------------------------------------------------- optimizer

/// A step of a program being compiled, by its jump targets `[no, yes]`:
/// `> 0` a later step, `<= 0` a result.
pub trait Branch: Copy {
    fn jumps(&self) -> [i32; 2];
    fn set_jumps(&mut self, j: [i32; 2]);
}

/// Implements [`Branch`] for a step type with `yes` and `no` fields.
macro_rules! branch_by_yes_no {
    ($step:ty) => {
        impl $crate::standard::classifier_program::Branch for $step {
            fn jumps(&self) -> [i32; 2] {
                [self.no, self.yes]
            }
            fn set_jumps(&mut self, [no, yes]: [i32; 2]) {
                self.no = no;
                self.yes = yes;
            }
        }
    };
}
pub(crate) use branch_by_yes_no;

/// What an optimizer knows about a packet on a program edge. Classifier's
/// optimizer knows bits of words, IPFilter's value ranges of fields; both
/// walk the program with [`propagate`], as Click's optimizer does.
pub trait Facts: Clone + Default {
    type Step: Branch;
    /// How many decided steps one jump may skip.
    const DRIFT_LIMIT: usize = usize::MAX;
    /// The outcome of `s`, when these facts decide it.
    fn decide(&self, s: &Self::Step) -> Option<bool>;
    /// These facts and the outcome of `s`.
    fn with(&self, s: &Self::Step, outcome: bool) -> Self;
    /// What two joining paths both know.
    fn meet(&self, o: &Self) -> Self;
}

/// Follows `t` past the steps `k` decides and those that jump to one place
/// either way.
pub fn drift<F: Facts>(steps: &[F::Step], mut t: i32, k: &F) -> i32 {
    let mut n = 0;
    while t > 0 && n < F::DRIFT_LIMIT {
        let s = &steps[t as usize];
        let [no, yes] = s.jumps();
        t = match k.decide(s) {
            Some(true) => yes,
            Some(false) => no,
            None if yes == no => yes,
            None => break,
        };
        n += 1;
    }
    t
}

/// Redirects every branch from `entry` on past the steps that what its
/// path proves decides: facts flow forward along the jumps and meet where
/// paths join.
pub fn propagate<F: Facts>(steps: &mut [F::Step], entry: usize) {
    let n = steps.len();
    let mut incoming: Vec<Option<F>> = vec![None; n];
    incoming[entry] = Some(F::default());
    for i in entry..n {
        let Some(k) = incoming[i].take() else {
            continue;
        };
        let s = steps[i];
        let mut targets = s.jumps();
        for (b, t) in targets.iter_mut().enumerate() {
            let kb = k.with(&s, b == 1);
            *t = drift(steps, *t, &kb);
            if *t > 0 {
                let ti = *t as usize;
                incoming[ti] = Some(match incoming[ti].take() {
                    Some(prev) => prev.meet(&kb),
                    None => kb,
                });
            }
        }
        steps[i].set_jumps(targets);
    }
}

/// The steps a walk from `entry` reaches.
pub fn reachable<S: Branch>(steps: &[S], entry: usize) -> Vec<bool> {
    let mut reach = vec![false; steps.len()];
    if let Some(r) = reach.get_mut(entry) {
        *r = true;
    }
    for i in entry..steps.len() {
        if reach[i] {
            for t in steps[i].jumps() {
                if t > 0 {
                    reach[t as usize] = true;
                }
            }
        }
    }
    reach
}

/// The steps `keep` marks, in order, with their jumps renumbered.
pub fn renumber<S: Branch>(steps: &[S], keep: &[bool]) -> Vec<S> {
    let mut newidx = vec![0i32; steps.len()];
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        if keep[i] {
            newidx[i] = out.len() as i32;
            out.push(*s);
        }
    }
    for s in &mut out {
        let j = s
            .jumps()
            .map(|t| if t > 0 { newidx[t as usize] } else { t });
        s.set_jumps(j);
    }
    out
}

// ----------------------------------------------------------------- matcher

/// One test of a compiled program, as the matcher runs it: the word at
/// `offset` of header `base`, ANDed with `mask`, lies in `lo..=lo + span`.
/// Classifier's tests read the packet data (base 0) and are equalities
/// (span 0); see [`Headers::RANGES`] for the byte order of words.
#[derive(Clone, Copy, Debug)]
pub struct Test {
    pub base: u8,
    pub offset: u32,
    /// Bytes the header must hold for the test to read its word (up to the
    /// last masked byte); with fewer the test fails.
    pub required: u32,
    pub mask: u32,
    pub lo: u32,
    pub span: u32,
    /// Targets `[no, yes]`: `> 0` a step, `<= 0` the program's result.
    pub j: [i32; 2],
}

/// Where a program's tests read: the header a test's `base` names.
pub trait Headers<'a>: Copy {
    /// Whether tests may be ranges. Range tests read words big-endian;
    /// programs of equalities only (Classifier's) store `mask` and `lo` in
    /// native byte order, so that their words are compared unswapped.
    const RANGES: bool;

    fn header(self, base: u8) -> &'a [u8];

    /// A word as the program's tests store theirs.
    #[inline]
    fn word(b: [u8; 4]) -> u32 {
        if Self::RANGES {
            u32::from_be_bytes(b)
        } else {
            u32::from_ne_bytes(b)
        }
    }
}

/// Packet data, the one header of Classifier's equality tests.
impl<'a> Headers<'a> for &'a [u8] {
    const RANGES: bool = false;

    #[inline]
    fn header(self, _base: u8) -> &'a [u8] {
        self
    }
}

/// Several headers (IPFilter's IP, transport and Ethernet headers).
impl<'a, const N: usize> Headers<'a> for [&'a [u8]; N] {
    const RANGES: bool = true;

    #[inline]
    fn header(self, base: u8) -> &'a [u8] {
        self[base as usize % N]
    }
}

/// Runs `prog` from its first step; returns the first target that is not
/// a step, or [`DROP`] if a step jumps past the end.
#[inline]
pub fn run<'a, H: Headers<'a>>(prog: &[Test], data: H) -> i32 {
    let mut pc = 0usize;
    loop {
        let Some(t) = prog.get(pc) else {
            return DROP;
        };
        let d = data.header(t.base);
        let o = t.offset as usize;
        let w = match d.get(o..o + 4) {
            Some(b) => Some(H::word([b[0], b[1], b[2], b[3]])),
            None => read_partial(d, o, t.required as usize).map(H::word),
        };
        let ok = match w {
            Some(w) if H::RANGES => (w & t.mask).wrapping_sub(t.lo) <= t.span,
            Some(w) => w & t.mask == t.lo,
            None => false,
        };
        let j = t.j[ok as usize];
        if j <= 0 {
            return j;
        }
        pc = j as usize;
    }
}

/// The bytes of the word at `o` of a header that ends within it,
/// zero-padded, when the header holds `required` bytes; `None` otherwise.
/// Out of line: inlined, its copy made every program's loop save
/// registers for a case short packets alone reach.
#[cold]
#[inline(never)]
pub fn read_partial(data: &[u8], o: usize, required: usize) -> Option<[u8; 4]> {
    if data.len() < required {
        return None;
    }
    let tail = data.get(o..).unwrap_or(&[]);
    let avail = tail.len().min(4);
    let mut b = [0u8; 4];
    b[..avail].copy_from_slice(&tail[..avail]);
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(p: &[&str]) -> Program {
        Program::compile(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn everything() {
        assert_eq!(
            prog(&["-"]).unparse(),
            "all->[0]\nsafe length 0\nalignment offset 0\n"
        );
        assert_eq!(prog(&["-", "12/0800"]).classify(&[]), Some(0));
        assert_eq!(prog(&["0/01 !0/01"]).classify(&[1]), None);
    }
}
