//! # HFSCSched
//!
//! Pulls from its inputs by Hierarchical Fair Service Curve scheduling.
//!
//! ## Synopsis
//! `HFSCSched(CLASS SPEC, CLASS SPEC, ...)`
//!
//! ## Ports and processing
//! One or more pull inputs, one pull output.
//!
//! ## Description
//! Implements Stoica, Zhang and Ng's H-FSC (the algorithm of ALTQ's and
//! Linux's `hfsc`), with real-time, link-sharing and upper-limit service
//! curves, over a class hierarchy written in the configuration. Each CLASS
//! argument declares one class:
//!
//! `CLASS NAME [PARENT PNAME] [INPUT N] [RT CURVE] [LS CURVE] [SC CURVE] [UL CURVE]`
//!
//! A class with INPUT N is a leaf fed by input N (every input has exactly
//! one leaf); the others are interior classes that leaves (or other
//! interior classes) name as PARENT. A class without PARENT hangs from the
//! root, which is the link. A CURVE is a rate (`2Mbps`), or `M1 D M2` as in
//! `tc-hfsc`: rate M1 for the first D of a backlogged period, then M2
//! (`10Mbps 20ms 2Mbps` gives a burst, `0 10ms 5Mbps` a delay), or
//! tc-hfsc's other form `umax BYTES dmax TIME rate RATE` (a packet of
//! BYTES, in tc's units: `1500`, `1500b`, `2kb`, leaves within TIME,
//! long-term RATE: converted as tc converts it,
//! concave `BYTES/TIME TIME RATE` when BYTES/TIME exceeds RATE, else
//! convex `0 TIME-BYTES/RATE RATE`). SC sets RT and LS to the same curve,
//! as tc's `sc` does (on an interior class, LS only). A curve
//! that is zero throughout (`RT 0`) is refused: Linux takes it as no curve
//! at all, and as a curve it would let one packet through and then hold
//! the class for ever. An LS curve (or SC) whose long-term rate M2 is
//! zero (`10Mbps 10ms 0`) is refused too, where Linux takes it: once its
//! first segment is served the class's virtual time would be infinite,
//! the classes joining beside it would start there as well, and ties at
//! infinity would hand the link to the class whose curve says it should
//! get nothing more. (RT and UL curves may end at zero: a burst, then
//! nothing.)
//!
//! - **RT** (leaves): the real-time curve. Whenever a leaf's head packet is
//!   eligible (its real-time service so far is behind its eligible curve),
//!   the eligible packet with the earliest deadline (when the curve would
//!   have served it) goes first. Over any backlogged period the leaf gets
//!   at least its RT curve, within one packet, provided the RT curves
//!   together fit in the link.
//! - **LS**: the link-sharing curve. Service beyond the real-time
//!   guarantees is shared among the backlogged children of each class in
//!   proportion to their LS curves (by virtual time, smallest first).
//! - **UL**: the upper limit. A class is not served by link-sharing faster
//!   than its UL curve allows (a leaf may still get its RT service). As in
//!   tc, UL needs LS (or SC) on the same class: it limits nothing else.
//!
//! What is and is not Linux's `sch_hfsc`: the criteria (real time by
//! eligible time and earliest deadline, with eligible curves as Linux
//! derives them: the deadline curve for a concave RT curve, its long-term
//! slope for a convex one; link sharing by smallest virtual time down the
//! tree; upper limits by fit time, for link sharing only), the runtime
//! curves updated by Linux's `rtsc_min` on each backlog period, the RT
//! service counting toward link sharing, and the virtual times of
//! classes that become active are Linux's (its `init_vf` and `update_vf`,
//! the H-FSC paper's rule): a class joining active siblings starts midway
//! between the largest of their virtual times and the one link sharing
//! last chose among them (the largest, if none was chosen yet in this
//! backlog period of the parent) and, within one backlog period of its
//! parent, never goes back; the first class of a new period starts where
//! the last period's classes left off; a class passed over for its upper
//! limit has its virtual time brought up to the last one chosen beside it
//! (`vtadj`). As in Linux, the root keeps no backlog periods, so a class
//! under the root always takes the new virtual time. Not Linux's: equal
//! virtual times (or deadlines) go to the class declared first, where
//! Linux's trees break such ties by their own order; a class becomes
//! active when HFSCSched pulls its first packet, at its next dequeue, not
//! when the packet is queued as in Linux, so classes that became
//! backlogged between two dequeues start (and take their virtual times)
//! in input order, and their real-time curves are anchored at that
//! dequeue's time; there is no default
//! class, no per-class queue limit (the Queues upstream are the limits) and no
//! statistics beyond `stats`; arithmetic is in floating point (bytes per
//! nanosecond) instead of Linux's scaled integers; and the selection is a
//! linear scan of the classes per packet instead of Linux's red-black
//! trees (cost grows with the number of classes: see docs/benchmarks.md).
//!
//! Each leaf holds its head packet (pulled from its input) so its length
//! is known for the deadline. HFSCSched is an empty notifier: its signal is
//! down while no input has packets, and while every head packet waits for
//! an upper limit (a timer raises it when the first may go); a task relays
//! the queues' notifiers upstream, as DRRSched's does. An input whose
//! queue has packets but that gives none (an element between without a
//! notifier holds them back) keeps the signal up, as in DRRSched. Times are the
//! router's clock; rates are kept as bytes per nanosecond. Click has no
//! H-FSC element: this one is rclick's.
//!
//! ## Handlers
//! - `stats` (read): per class, the bytes served in total and by the
//!   real-time criterion, and its virtual time.
//!
//! ## Example
//! ```click
//! s :: HFSCSched(CLASS site LS 60Mbps,
//!                CLASS voice PARENT site INPUT 0 RT 5Mbps 10ms 1Mbps LS 5Mbps,
//!                CLASS web PARENT site INPUT 1 LS 55Mbps UL 50Mbps,
//!                CLASS bulk INPUT 2 LS 40Mbps);
//! Idle -> Queue -> [0] s; Idle -> Queue -> [1] s; Idle -> Queue -> [2] s;
//! s -> LinkUnqueue(0, 100Mbps) -> Discard;
//! ```

use rclick_core::conf::{parse_bandwidth, parse_timestamp};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, Packet, SignalId, TaskId,
    TimerId,
};

/// A two-piece service curve: slope `m1` (bytes/ns) for `d` ns, then
/// `m2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curve {
    pub m1: f64,
    pub d: f64,
    pub m2: f64,
}

impl Curve {
    /// Bytes the curve gives in `t` ns from its start.
    pub fn at(&self, t: f64) -> f64 {
        if t <= 0.0 {
            0.0
        } else if t <= self.d {
            self.m1 * t
        } else {
            self.m1 * self.d + self.m2 * (t - self.d)
        }
    }
}

/// A service curve anchored at a point (ALTQ's runtime curve): `y` bytes
/// at time `x`, then slope `sm1` for `dx` ns (`dy` bytes), then `sm2`.
#[derive(Clone, Copy, Debug, Default)]
struct Runtime {
    x: f64,
    y: f64,
    sm1: f64,
    dx: f64,
    dy: f64,
    sm2: f64,
}

impl Runtime {
    fn anchored(c: &Curve, x: f64, y: f64) -> Runtime {
        Runtime {
            x,
            y,
            sm1: c.m1,
            dx: c.d,
            dy: c.m1 * c.d,
            sm2: c.m2,
        }
    }

    fn x2y(&self, x: f64) -> f64 {
        if x <= self.x {
            self.y
        } else if x <= self.x + self.dx {
            self.y + (x - self.x) * self.sm1
        } else {
            self.y + self.dy + (x - self.x - self.dx) * self.sm2
        }
    }

    fn y2x(&self, y: f64) -> f64 {
        if y < self.y {
            self.x
        } else if y <= self.y + self.dy {
            if self.sm1 <= 0.0 {
                if self.dy > 0.0 || y > self.y {
                    self.x + self.dx
                } else {
                    self.x
                }
            } else {
                self.x + (y - self.y) / self.sm1
            }
        } else if self.sm2 <= 0.0 {
            f64::INFINITY
        } else {
            self.x + self.dx + (y - self.y - self.dy) / self.sm2
        }
    }

    /// Makes this curve the minimum of itself and `c` anchored at
    /// `(x, y)` (ALTQ's `rtsc_min`).
    fn min_with(&mut self, c: &Curve, x: f64, y: f64) {
        if c.m1 <= c.m2 {
            // Convex: the new curve is below from its anchor on, or never.
            if self.x2y(x) < y {
                return;
            }
            *self = Runtime::anchored(c, x, y);
            return;
        }
        let y1 = self.x2y(x);
        if y1 <= y {
            return;
        }
        let y2 = self.x2y(x + c.d);
        if y2 >= y + c.m1 * c.d {
            *self = Runtime::anchored(c, x, y);
            return;
        }
        // The curves cross during the new curve's first segment.
        let mut dx = (y1 - y) / (c.m1 - c.m2);
        if self.x + self.dx > x {
            dx += self.x + self.dx - x;
        }
        *self = Runtime {
            x,
            y,
            sm1: c.m1,
            dx,
            dy: c.m1 * dx,
            sm2: c.m2,
        };
    }
}

#[derive(Default)]
struct Class {
    name: String,
    parent: Option<usize>,
    input: Option<usize>,
    rt: Option<Curve>,
    ls: Option<Curve>,
    ul: Option<Curve>,
    /// RT came from SC (which an interior class takes as LS only).
    rt_from_sc: bool,
    // Leaf state.
    head: Option<Packet>,
    signal: NotifierSignal,
    cumul: f64,
    deadline: Runtime,
    eligible: Runtime,
    e: f64,
    d: f64,
    rt_started: bool,
    // Link-sharing state.
    total: f64,
    vt: f64,
    virt: Runtime,
    virt_started: bool,
    ulimit: Runtime,
    ul_started: bool,
    fit: f64,
    /// Active children for link sharing (a leaf counts itself while it is
    /// backlogged): the class is active while this is not zero.
    nactive: usize,
    /// The largest virtual time a child had when it went idle (where the
    /// next backlog period of the children starts).
    cvtoff: f64,
    /// The largest virtual time among the children chosen by link sharing
    /// in the children's current backlog period (0 when none yet).
    cvtmin: f64,
    /// What was added to this class's virtual time to keep it from falling
    /// behind its parent's `cvtmin` (reset when the class becomes active).
    vtadj: f64,
    /// Backlog periods of this class so far.
    vtperiod: u64,
    /// The parent's backlog period when this class last became active.
    parentperiod: u64,
}

#[derive(Default)]
pub struct HFSCSched {
    classes: Vec<Class>,
    /// The root (the link): only its children's `cvtmin` and `cvtoff` are
    /// kept (as in Linux, the root has no backlog periods of its own).
    root: Class,
    /// The leaf of each input.
    leaf_of: Vec<usize>,
    signal: Option<SignalId>,
    task: Option<TaskId>,
    timer: Option<TimerId>,
    /// The last `fill_heads` pulled nothing from an input whose signal
    /// said it might have packets (an element upstream without a notifier
    /// held them back): pullers must keep polling, no queue will wake us.
    starved: bool,
}

const KEYWORDS: [&str; 6] = ["PARENT", "INPUT", "RT", "LS", "UL", "SC"];

/// Bytes per second to bytes per nanosecond.
fn per_ns(bps: u64) -> f64 {
    bps as f64 / 1e9
}

/// A curve from its words: `RATE`, `M1 D M2`, or `umax U dmax D rate R`
/// (tc-hfsc's second form). Returns it and the words used.
fn parse_curve(words: &[&str]) -> Result<(Curve, usize), String> {
    let rate = |w: &str| parse_bandwidth(w).map_err(|_| format!("bad rate '{w}'"));
    if words.first() == Some(&"umax") {
        return parse_umax_curve(words).map(|c| (c, 6));
    }
    if words.len() >= 3 && !KEYWORDS.contains(&words[1]) {
        if let Ok(d) = parse_timestamp(words[1]) {
            let m1 = per_ns(rate(words[0])?);
            let m2 = per_ns(rate(words[2])?);
            return Ok((
                Curve {
                    m1,
                    d: d.as_nanos() as f64,
                    m2,
                },
                3,
            ));
        }
    }
    let w = words.first().ok_or("missing service curve")?;
    let m = per_ns(rate(w)?);
    Ok((
        Curve {
            m1: m,
            d: 0.0,
            m2: m,
        },
        1,
    ))
}

/// `umax U dmax D rate R`: a packet of U bytes must leave within D, and
/// the long-term rate is R. As tc does: if U/D is faster than R, the curve
/// is concave (slope U/D for D, then R); otherwise convex (nothing for
/// D - U/R, then R).
fn parse_umax_curve(words: &[&str]) -> Result<Curve, String> {
    let (Some(&"umax"), Some(u), Some(&"dmax"), Some(d), Some(&"rate"), Some(r)) = (
        words.first(),
        words.get(1),
        words.get(2),
        words.get(3),
        words.get(4),
        words.get(5),
    ) else {
        return Err("expected 'umax BYTES dmax TIME rate RATE'".into());
    };
    let umax = parse_tc_size(u).ok_or_else(|| format!("bad umax '{u}'"))?;
    let dmax = parse_timestamp(d)
        .map_err(|_| format!("bad dmax '{d}'"))?
        .as_nanos() as f64;
    let m2 = per_ns(parse_bandwidth(r).map_err(|_| format!("bad rate '{r}'"))?);
    if umax <= 0.0 || dmax <= 0.0 || m2 <= 0.0 {
        return Err("umax, dmax and rate must be positive".into());
    }
    Ok(if umax / dmax > m2 {
        Curve {
            m1: umax / dmax,
            d: dmax,
            m2,
        }
    } else {
        Curve {
            m1: 0.0,
            d: (dmax - umax / m2).max(0.0),
            m2,
        }
    })
}

/// A size in bytes as tc(8) writes one: a number, bare or with `b`
/// (bytes), `k`/`kb`, `m`/`mb`, `g`/`gb` (powers of 1024 bytes) or
/// `kbit`/`mbit`/`gbit` (powers of 1024 bits), any case; `B` as well.
fn parse_tc_size(w: &str) -> Option<f64> {
    let split = w
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(w.len());
    let (num, unit) = w.split_at(split);
    let v: f64 = num.parse().ok()?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1024.0,
        "m" | "mb" => 1024.0 * 1024.0,
        "g" | "gb" => 1024.0 * 1024.0 * 1024.0,
        "kbit" => 1024.0 / 8.0,
        "mbit" => 1024.0 * 1024.0 / 8.0,
        "gbit" => 1024.0 * 1024.0 * 1024.0 / 8.0,
        _ => return None,
    };
    Some(v * scale).filter(|v| v.is_finite())
}

fn parse_class(spec: &str) -> Result<(Class, Option<String>), String> {
    let words: Vec<&str> = spec.split_ascii_whitespace().collect();
    let name = words.first().ok_or("CLASS needs a name")?;
    let mut c = Class {
        name: name.to_string(),
        ..Class::default()
    };
    let mut parent = None;
    let mut i = 1;
    while i < words.len() {
        let kw = words[i];
        i += 1;
        match kw {
            "PARENT" => {
                parent = Some(words.get(i).ok_or("PARENT needs a class")?.to_string());
                i += 1;
            }
            "INPUT" => {
                let n = words.get(i).ok_or("INPUT needs a port")?;
                c.input = Some(n.parse().map_err(|_| format!("bad INPUT '{n}'"))?);
                i += 1;
            }
            "RT" | "LS" | "UL" | "SC" => {
                let (curve, used) = parse_curve(&words[i..])?;
                i += used;
                if curve.m1 == 0.0 && curve.m2 == 0.0 {
                    return Err(format!("CLASS {name}: {kw} curve is zero"));
                }
                // Link sharing needs a long-term rate: with M2 0 the
                // class's virtual time becomes infinite once its first
                // segment is served, and so would its siblings'.
                if matches!(kw, "LS" | "SC") && curve.m2 == 0.0 {
                    return Err(format!(
                        "CLASS {name}: {kw} curve needs a long-term rate (M2 > 0) for link sharing"
                    ));
                }
                match kw {
                    "RT" => {
                        c.rt = Some(curve);
                        c.rt_from_sc = false;
                    }
                    "LS" => c.ls = Some(curve),
                    "SC" => {
                        c.rt = Some(curve);
                        c.ls = Some(curve);
                        c.rt_from_sc = true;
                    }
                    _ => c.ul = Some(curve),
                }
            }
            w => return Err(format!("CLASS {name}: unexpected '{w}'")),
        }
    }
    Ok((c, parent))
}

impl HFSCSched {
    fn set_active(&mut self, leaf: usize, now: f64) {
        let len = self.classes[leaf].head.as_ref().map_or(0, |p| p.len()) as f64;
        // Real time: the deadline and eligible curves from here.
        let c = &mut self.classes[leaf];
        if let Some(rt) = c.rt {
            if c.rt_started {
                c.deadline.min_with(&rt, now, c.cumul);
            } else {
                c.deadline = Runtime::anchored(&rt, now, c.cumul);
                c.rt_started = true;
            }
            c.eligible = c.deadline;
            if rt.m1 <= rt.m2 {
                // Convex or linear: eligible at the long-term rate from the
                // start, so a class may be served ahead of its deadlines;
                // concave: eligible along the deadline curve itself.
                c.eligible.dx = 0.0;
                c.eligible.dy = 0.0;
            }
            c.e = c.eligible.y2x(c.cumul);
            c.d = c.deadline.y2x(c.cumul + len);
        }
        self.init_vf(leaf, now);
    }

    /// The class that is `p`'s parent state: a class, or the root.
    fn parent_mut(&mut self, p: Option<usize>) -> &mut Class {
        match p {
            Some(i) => &mut self.classes[i],
            None => &mut self.root,
        }
    }

    fn parent_ref(&self, p: Option<usize>) -> &Class {
        match p {
            Some(i) => &self.classes[i],
            None => &self.root,
        }
    }

    /// A leaf with a link-sharing curve became backlogged: it and the
    /// ancestors that become active with it get their virtual times (the
    /// H-FSC paper's rule, as Linux's `init_vf` applies it). A class
    /// joining active siblings starts midway between the largest virtual
    /// time among them and the parent's `cvtmin` (the virtual time link
    /// sharing last chose among them), or at the largest when nothing was
    /// chosen yet in the parent's period; within the same backlog period
    /// of its parent it never goes back. The first child of a new period
    /// starts where the last period's children left off (`cvtoff`).
    fn init_vf(&mut self, leaf: usize, now: f64) {
        if self.classes[leaf].ls.is_none() {
            return;
        }
        let mut go_active = true;
        let mut k = leaf;
        loop {
            if go_active {
                let c = &mut self.classes[k];
                go_active = c.nactive == 0;
                c.nactive += 1;
            }
            let parent = self.classes[k].parent;
            if go_active {
                let mut vmax = None::<f64>;
                for (j, s) in self.classes.iter().enumerate() {
                    if j != k && s.parent == parent && s.nactive > 0 {
                        vmax = Some(vmax.map_or(s.vt, |m| m.max(s.vt)));
                    }
                }
                // The root has no backlog periods: its children always
                // count as starting a new one (as in Linux).
                let (pcvtmin, pcvtoff, pperiod, pnactive) = {
                    let ps = self.parent_ref(parent);
                    let nactive = if parent.is_some() { ps.nactive } else { 0 };
                    (ps.cvtmin, ps.cvtoff, ps.vtperiod, nactive)
                };
                match vmax {
                    Some(max) => {
                        let vt = if pcvtmin != 0.0 {
                            (pcvtmin + max) / 2.0
                        } else {
                            max
                        };
                        let c = &mut self.classes[k];
                        if pperiod != c.parentperiod || vt > c.vt {
                            c.vt = vt;
                        }
                    }
                    None => {
                        self.classes[k].vt = pcvtoff;
                        self.parent_mut(parent).cvtmin = 0.0;
                    }
                }
                let c = &mut self.classes[k];
                if let Some(ls) = c.ls {
                    if c.virt_started {
                        c.virt.min_with(&ls, c.vt, c.total);
                    } else {
                        c.virt = Runtime::anchored(&ls, c.vt, c.total);
                        c.virt_started = true;
                    }
                }
                c.vtadj = 0.0;
                c.vtperiod += 1;
                c.parentperiod = pperiod + u64::from(pnactive == 0);
                if let Some(ul) = c.ul {
                    if c.ul_started {
                        c.ulimit.min_with(&ul, now, c.total);
                    } else {
                        c.ulimit = Runtime::anchored(&ul, now, c.total);
                        c.ul_started = true;
                    }
                    c.fit = c.ulimit.y2x(c.total);
                } else {
                    c.fit = f64::NEG_INFINITY;
                }
            }
            match parent {
                Some(p) => k = p,
                None => break,
            }
        }
    }

    /// `len` bytes of `leaf` were sent: every ancestor's service grows,
    /// and the active ones' virtual times follow their curves (Linux's
    /// `update_vf`). A virtual time that fell behind the parent's
    /// `cvtmin` (the class was passed over for its upper limit) is brought
    /// up to it. `idle`: the leaf has no packet left, so it, and each
    /// ancestor whose last active child it was, goes passive, leaving its
    /// virtual time as its parent's `cvtoff`.
    fn update_vf(&mut self, leaf: usize, len: f64, idle: bool) {
        let mut go_passive = idle && self.classes[leaf].ls.is_some();
        let mut k = Some(leaf);
        while let Some(i) = k {
            let parent = self.classes[i].parent;
            k = parent;
            let c = &mut self.classes[i];
            c.total += len;
            if c.ls.is_none() || c.nactive == 0 {
                continue;
            }
            if go_passive {
                c.nactive -= 1;
                go_passive = c.nactive == 0;
            }
            c.vt = c.virt.y2x(c.total) + c.vtadj;
            let vt = c.vt;
            let pcvtmin = self.parent_ref(parent).cvtmin;
            if vt < pcvtmin {
                let c = &mut self.classes[i];
                c.vtadj += pcvtmin - vt;
                c.vt = pcvtmin;
            }
            if go_passive {
                let vt = self.classes[i].vt;
                let ps = self.parent_mut(parent);
                ps.cvtoff = ps.cvtoff.max(vt);
                continue;
            }
            let c = &mut self.classes[i];
            if c.ul.is_some() {
                c.fit = c.ulimit.y2x(c.total);
            }
        }
    }

    /// Pulls a head packet for each leaf that has none.
    fn fill_heads(&mut self, now: f64, ctx: &mut Ctx) -> bool {
        let mut any = false;
        self.starved = false;
        for port in 0..self.leaf_of.len() {
            let leaf = self.leaf_of[port];
            if self.classes[leaf].head.is_none() && ctx.signal_active(&self.classes[leaf].signal) {
                if let Some(p) = ctx.pull(port, 1).and_then(|mut b| b.pop()) {
                    self.classes[leaf].head = Some(p);
                    self.set_active(leaf, now);
                } else {
                    self.starved = true;
                }
            }
            any |= self.classes[leaf].head.is_some();
        }
        any
    }

    /// Whether class `i` can be served by link sharing now: active, within
    /// its upper limit, and a leaf with a packet or a parent of such a
    /// class. Notes in `wait` the earliest time an upper limit lifts.
    fn ls_ok(&self, i: usize, now: f64, wait: &mut f64) -> bool {
        let c = &self.classes[i];
        if c.nactive == 0 || c.ls.is_none() {
            return false;
        }
        if c.fit > now {
            *wait = wait.min(c.fit);
            return false;
        }
        if c.input.is_some() {
            return c.head.is_some();
        }
        let mut ok = false;
        for (j, s) in self.classes.iter().enumerate() {
            if s.parent == Some(i) && self.ls_ok(j, now, wait) {
                ok = true;
            }
        }
        ok
    }

    /// The class to serve now: a real-time choice (eligible, earliest
    /// deadline) or a link-sharing one (smallest virtual time down the
    /// tree, within upper limits). `Err(t)`: nothing until time `t`.
    fn choose(&self, now: f64) -> Result<(usize, bool), f64> {
        let mut best: Option<usize> = None;
        let mut wait = f64::INFINITY;
        for (i, c) in self.classes.iter().enumerate() {
            if c.head.is_none() || c.rt.is_none() {
                continue;
            }
            if c.e <= now {
                if best.is_none_or(|b| c.d < self.classes[b].d) {
                    best = Some(i);
                }
            } else {
                wait = wait.min(c.e);
            }
        }
        if let Some(b) = best {
            return Ok((b, true));
        }
        let mut parent = None;
        loop {
            let mut pick: Option<usize> = None;
            for (i, c) in self.classes.iter().enumerate() {
                if c.parent == parent
                    && self.ls_ok(i, now, &mut wait)
                    && pick.is_none_or(|p| c.vt < self.classes[p].vt)
                {
                    pick = Some(i);
                }
            }
            let Some(p) = pick else { return Err(wait) };
            if self.classes[p].input.is_some() {
                return Ok((p, false));
            }
            parent = Some(p);
        }
    }

    fn pull_one(&mut self, ctx: &mut Ctx) -> Result<Packet, f64> {
        let now = ctx.now().nanos() as f64;
        if !self.fill_heads(now, ctx) {
            return Err(f64::INFINITY);
        }
        let (leaf, realtime) = self.choose(now)?;
        let p = self.classes[leaf].head.take().ok_or(f64::INFINITY)?;
        let len = p.len() as f64;
        if realtime {
            self.classes[leaf].cumul += len;
        } else {
            // Link sharing chose this path: each parent's cvtmin follows
            // the virtual time it chose (Linux's vttree_get_minvt).
            let mut k = leaf;
            loop {
                let (vt, parent) = (self.classes[k].vt, self.classes[k].parent);
                let ps = self.parent_mut(parent);
                ps.cvtmin = ps.cvtmin.max(vt);
                match parent {
                    Some(q) => k = q,
                    None => break,
                }
            }
        }
        // The leaf's next packet, if its input has one.
        let port = self.classes[leaf].input.unwrap_or(0);
        let next = if ctx.signal_active(&self.classes[leaf].signal) {
            ctx.pull(port, 1).and_then(|mut b| b.pop())
        } else {
            None
        };
        self.update_vf(leaf, len, next.is_none());
        if let Some(q) = next {
            let c = &mut self.classes[leaf];
            let len = q.len() as f64;
            c.head = Some(q);
            if c.rt.is_some() {
                c.e = c.eligible.y2x(c.cumul);
                c.d = c.deadline.y2x(c.cumul + len);
            }
        }
        Ok(p)
    }

    fn stats(&self, _ctx: &Ctx) -> String {
        self.classes
            .iter()
            .map(|c| {
                format!(
                    "{}: {} bytes, {} real-time, vt {:.0}\n",
                    c.name, c.total, c.cumul, c.vt
                )
            })
            .collect()
    }
}

const HANDLERS: &[Handler<HFSCSched>] = &[Handler::read("stats", HFSCSched::stats)];

rclick_core::element_class!(HFSCSched);

impl Element for HFSCSched {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1-/1"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = rclick_core::conf::Args::new(conf);
        let specs: Vec<String> = args.read_all_with("CLASS", |s| Ok(s.to_string()));
        args.complete()?;
        let mut classes = Vec::new();
        let mut parents = Vec::new();
        for s in &specs {
            let (c, p) = parse_class(s)?;
            if classes.iter().any(|x: &Class| x.name == c.name) {
                return Err(format!("class '{}' declared twice", c.name).into());
            }
            classes.push(c);
            parents.push(p);
        }
        for (i, p) in parents.iter().enumerate() {
            if let Some(p) = p {
                let Some(j) = classes.iter().position(|x| &x.name == p) else {
                    return Err(format!("no class named '{p}'").into());
                };
                if classes[j].input.is_some() {
                    return Err(format!("class '{p}' has an input: it cannot be a parent").into());
                }
                classes[i].parent = Some(j);
            }
        }
        // No cycles: every chain of parents reaches the root.
        for i in 0..classes.len() {
            let mut k = classes[i].parent;
            let mut steps = 0;
            while let Some(j) = k {
                steps += 1;
                if steps > classes.len() {
                    return Err(format!("class '{}' is its own ancestor", classes[i].name).into());
                }
                k = classes[j].parent;
            }
        }
        // SC on an interior class is its LS curve (real time is for leaves).
        for c in classes.iter_mut() {
            if c.input.is_none() && c.rt_from_sc {
                c.rt = None;
            }
        }
        let n = ctx.ninputs();
        let mut leaf_of = vec![usize::MAX; n];
        for (i, c) in classes.iter().enumerate() {
            match c.input {
                Some(port) if port >= n => {
                    return Err(format!("class '{}': no input {port}", c.name).into())
                }
                Some(port) if leaf_of[port] != usize::MAX => {
                    return Err(format!("input {port} has two classes").into())
                }
                Some(port) => {
                    leaf_of[port] = i;
                    if c.rt.is_none() && c.ls.is_none() {
                        return Err(format!("class '{}' needs RT or LS", c.name).into());
                    }
                    // As tc: an upper limit bounds link sharing only, so
                    // without LS it would limit nothing.
                    if c.ul.is_some() && c.ls.is_none() {
                        return Err(format!("class '{}': UL needs LS (or SC)", c.name).into());
                    }
                }
                None => {
                    if c.ls.is_none() {
                        return Err(format!("interior class '{}' needs LS", c.name).into());
                    }
                    if c.rt.is_some() {
                        return Err(format!("interior class '{}': RT is for leaves", c.name).into());
                    }
                }
            }
        }
        if let Some(port) = leaf_of.iter().position(|&l| l == usize::MAX) {
            return Err(format!("input {port} has no class").into());
        }
        self.classes = classes;
        self.leaf_of = leaf_of;
        if self.signal.is_none() {
            self.signal = Some(ctx.new_signal(true));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(false);
        for port in 0..self.leaf_of.len() {
            let leaf = self.leaf_of[port];
            self.classes[leaf].signal = ctx.upstream_empty_signal(port, Some(t));
        }
        self.task = Some(t);
        self.timer = Some(ctx.new_timer());
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let max = max.clamp(1, rclick_core::batch::BATCH_CAPACITY);
        let mut out = Batch::new();
        let mut wait = f64::INFINITY;
        while out.len() < max {
            match self.pull_one(ctx) {
                Ok(p) => out.push(p),
                Err(t) => {
                    wait = t;
                    break;
                }
            }
        }
        if out.is_empty() {
            if let Some(s) = self.signal {
                if self.starved {
                    // As DRRSched: an input said it may have packets but
                    // gave none; no queue will wake us when it does.
                    ctx.wake_signal(s);
                } else {
                    ctx.sleep_signal(s);
                }
            }
            // Packets wait for an upper limit: wake when the first may go.
            if wait.is_finite() {
                if let Some(t) = self.timer {
                    ctx.schedule_timer_at(t, rclick_core::Timestamp(wait.ceil() as i64));
                }
            }
            return None;
        }
        Some(out)
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
        false
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(text: &str) -> Result<Curve, String> {
        let words: Vec<&str> = text.split_ascii_whitespace().collect();
        let (c, used) = parse_curve(&words)?;
        assert_eq!(used, words.len(), "{text}");
        Ok(c)
    }

    /// tc-hfsc's `umax/dmax/rate` form with umax in tc's size units
    /// (`1500b` was refused), converted as tc converts it: concave when
    /// umax/dmax beats the rate (slope umax/dmax for dmax), else convex (a
    /// delay of dmax - umax/rate).
    #[test]
    fn umax_curves_take_tc_sizes_and_convert_as_tc() {
        let concave = curve("umax 1500 dmax 1ms rate 10Mbps").unwrap();
        for text in [
            "umax 1500b dmax 1ms rate 10Mbps",
            "umax 1500B dmax 1ms rate 10Mbps",
        ] {
            assert_eq!(curve(text).unwrap(), concave, "{text}");
        }
        // 1500 bytes a millisecond, for a millisecond, then 10 Mbit/s.
        assert!((concave.m1 - 1.5e-3).abs() < 1e-12, "{concave:?}");
        assert_eq!(concave.d, 1e6);
        assert!((concave.m2 - 1.25e-3).abs() < 1e-12, "{concave:?}");
        // 2kb = 2048 bytes within 10 ms at 10 Mbit/s: convex, nothing for
        // 10 ms - 2048 B / 1.25 MB/s = 8.3616 ms.
        let convex = curve("umax 2kb dmax 10ms rate 10Mbps").unwrap();
        assert_eq!(convex.m1, 0.0);
        assert!((convex.d - 8.3616e6).abs() < 1.0, "{convex:?}");
        assert_eq!(curve("umax 2KB dmax 10ms rate 10Mbps").unwrap(), convex);
        assert_eq!(curve("umax 16kbit dmax 10ms rate 10Mbps").unwrap(), convex);
        for bad in [
            "umax 1500BBB dmax 1ms rate 10Mbps",
            "umax 1500x dmax 1ms rate 10Mbps",
            "umax b dmax 1ms rate 10Mbps",
            "umax 0b dmax 1ms rate 10Mbps",
        ] {
            assert!(curve(bad).is_err(), "{bad}: accepted");
        }
    }
}
