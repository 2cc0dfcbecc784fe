//! # EtherSpanTree
//!
//! IEEE 802.1D spanning tree for an EtherSwitch.
//!
//! ## Synopsis
//! `EtherSpanTree(ADDR, INPUT_SUPPRESSOR, OUTPUT_SUPPRESSOR, SWITCH [, KEYWORDS])`
//!
//! ## Ports and processing
//! N push inputs and N push outputs, one pair per switch port: input N
//! takes the 802.1D frames (BPDUs) received on port N, output N sends
//! BPDUs out of port N.
//!
//! ## Description
//! Runs the 802.1D spanning tree protocol among the bridges of a network
//! and applies the result to an EtherSwitch by suppressing its ports:
//! INPUT_SUPPRESSOR and OUTPUT_SUPPRESSOR are Suppressor elements placed
//! before and after SWITCH, all with one port per switch port (the Click
//! paper's Figure 16, conf/switch-stp.click).
//!
//! The bridge ID is PRIORITY (16 bits) followed by ADDR. Every hello time
//! the bridge sends a configuration BPDU on each port where it is the
//! designated bridge, advertising the best root it knows: its own ID, or
//! the best root heard on any port with the path cost (the received cost
//! plus 1). The port where that best root was heard is the root port;
//! ports where a neighbour advertises something better than this bridge
//! could are blocked; the others are designated ports. A port being
//! brought into the tree goes from blocking to listening (suppressed both
//! ways), after FORWARD_DELAY to learning (input allowed, so the switch
//! learns addresses, output suppressed), after another FORWARD_DELAY to
//! forwarding. Information heard on a port expires MAX_AGE after it was
//! sent by the root, and the tree is recomputed. Non-root bridges use the
//! timers the root advertises.
//!
//! Topology changes follow 802.1D: a port entering forwarding, or leaving
//! learning or forwarding for blocking, makes a non-root bridge send
//! topology change notification BPDUs on its root port every hello time
//! until its designated bridge acknowledges one (TCA flag), and a root
//! bridge set the topology change flag in its BPDUs for MAX_AGE plus
//! FORWARD_DELAY. A TCN received on a designated port is acknowledged and
//! passed on towards the root. While the flag is set the switch's address
//! TIMEOUT is lowered to FORWARD_DELAY; addresses learned on a port that is
//! blocked are forgotten.
//!
//! ### Differences from Click
//! Click's element is the same algorithm but is not 802.1D on the wire,
//! which keeps it from working with other bridges; rclick fixes that:
//! - Click copies ADDR into the bridge ID in host byte order, so on x86
//!   the address is reversed in every BPDU; rclick sends it in network
//!   order. (The same for addresses that read the same both ways.)
//! - Click parses a TCN BPDU as a configuration BPDU (its zero fields
//!   then look like the best root of all), never sends a TCN (its test
//!   for the root port never holds) and never acknowledges one or sets
//!   the topology change flag itself. rclick implements them as above.
//! - Click decides whether to send a configuration BPDU on a port by
//!   comparing the neighbour's information with its best message as
//!   received (with the upstream bridge's ID and port) rather than with
//!   what it would send (its own ID and that port), while it decides the
//!   port's role with the latter: when its upstream bridge's ID is higher
//!   than the neighbour's, it forwards as designated bridge yet stays
//!   silent, so the neighbour also forwards and the link closes a loop.
//!   rclick uses its own ID and port for both.
//! - Click accepts a configuration BPDU whose message age has reached its
//!   max age (and uses it until its next hello); rclick ignores it.
//! - Click reads every BPDU as 60 bytes whatever its length. rclick drops
//!   and counts (`bad`) frames too short for their BPDU type, without the
//!   802.2 LLC header `42 42 03` or protocol ID 0, or of unknown type.
//! - Click never gives its own BPDUs' port ID or timers for ports that have
//!   heard nothing a value (its `msgs` handler shows stale memory there);
//!   rclick shows 0.
//!
//! ## Keywords
//! - **ADDR** (Ethernet address): this bridge's address. Mandatory.
//! - **INPUT_SUPPRESSOR**, **OUTPUT_SUPPRESSOR** (Suppressor elements):
//!   mandatory.
//! - **SWITCH** (EtherSwitch element): mandatory.
//! - **PRIORITY** (16-bit integer, rclick addition): the bridge priority,
//!   lower wins the root election. Default 0xDEAD, Click's fixed value
//!   (which makes the bridge unlikely to be the root).
//! - **HELLO_TIME**, **MAX_AGE**, **FORWARD_DELAY** (whole seconds, rclick
//!   additions): the timers this bridge advertises when it is the root.
//!   Defaults 2, 20 and 15, as in Click.
//!
//! ## Handlers
//! - `msgs` (read): Click's dump of the best message heard on each port,
//!   one line each, then this bridge's best: ` BRIDGE:PORT: tc  COST ->
//!   ROOT  m/h/d: MAXAGE/HELLO/FWDDELAY` (hex; `TC` when the topology
//!   change flag is set).
//! - `bridge` (read, rclick addition): this bridge's state, one
//!   `name value` per line: `bridge_id`, `priority`, `root_id`, `root_cost`,
//!   `root_port` (-1 when this is the root), `max_age`, `hello_time`,
//!   `forward_delay` (seconds, as in use), `topology_change` (true/false).
//! - `port_states` (read, rclick addition): one line per port: the port
//!   number, its state (`blocking`, `listening`, `learning`,
//!   `forwarding`) and role (`root`, `designated`, `blocked`).
//! - `bad` (read, rclick addition): malformed BPDUs dropped.
//!
//! ## Example
//! ```click
//! s :: EtherSwitch; in :: Suppressor; out :: Suppressor;
//! st :: EtherSpanTree(00:1f:29:4d:f8:31, in, out, s);
//! FromDevice(eth0) -> c0 :: Classifier(14/4242, -);
//! FromDevice(eth1) -> c1 :: Classifier(14/4242, -);
//! q0 :: Queue -> ToDevice(eth0); q1 :: Queue -> ToDevice(eth1);
//! c0[0] -> [0]st[0] -> q0; c1[0] -> [1]st[1] -> q1;
//! c0[1] -> [0]in[0] -> [0]s[0] -> [0]out[0] -> q0;
//! c1[1] -> [1]in[1] -> [1]s[1] -> [1]out[1] -> q1;
//! ```

use std::fmt::Write as _;

use rclick_core::conf::{parse_u16, parse_u32, parse_word, Args};
use rclick_core::element::processing;
use rclick_core::wire::ether::{EtherAddr, EtherFrame};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, TimerId, Timestamp,
};

use super::etherswitch::EtherSwitch;
use super::suppressor::{SuppressFlags, Suppressor};
use crate::ip::address::parse_ether_arg;

/// The bridge group address BPDUs are sent to.
const ALL_BRIDGES: EtherAddr = EtherAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x00]);
/// Click sends every BPDU as a 60-byte frame.
const BPDU_FRAME_LEN: usize = 60;
/// Bytes of a configuration BPDU frame that carry information.
const CONFIG_LEN: usize = 52;
/// Bytes of a TCN BPDU frame that carry information.
const TCN_LEN: usize = 21;
const TYPE_CONFIG: u8 = 0x00;
const TYPE_TCN: u8 = 0x80;
const FLAG_TC: u8 = 0x01;
const FLAG_TCA: u8 = 0x80;

/// A view of an 802.1D BPDU frame: Ethernet (802.3 length) header, the
/// LLC header `42 42 03`, then the BPDU. Checked once at construction for
/// the length its type needs.
struct Bpdu<'a>(&'a [u8]);

impl<'a> Bpdu<'a> {
    fn new_checked(b: &'a [u8]) -> Option<Bpdu<'a>> {
        if b.len() < TCN_LEN || b[14] != 0x42 || b[15] != 0x42 || b[16] != 0x03 {
            return None;
        }
        if b[17] != 0 || b[18] != 0 {
            return None;
        }
        let need = match b[20] {
            TYPE_CONFIG => CONFIG_LEN,
            TYPE_TCN => TCN_LEN,
            _ => return None,
        };
        (b.len() >= need).then_some(Bpdu(b))
    }
    fn kind(&self) -> u8 {
        self.0[20]
    }
    fn u16_at(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.0[i], self.0[i + 1]])
    }
    fn u64_at(&self, i: usize) -> u64 {
        let mut o = [0u8; 8];
        o.copy_from_slice(&self.0[i..i + 8]);
        u64::from_be_bytes(o)
    }
    fn flags(&self) -> u8 {
        self.0[21]
    }
    fn root(&self) -> u64 {
        self.u64_at(22)
    }
    fn cost(&self) -> u32 {
        u32::from_be_bytes([self.0[30], self.0[31], self.0[32], self.0[33]])
    }
    fn bridge(&self) -> u64 {
        self.u64_at(34)
    }
    fn port(&self) -> u16 {
        self.u16_at(42)
    }
    fn message_age(&self) -> u16 {
        self.u16_at(44)
    }
    fn max_age(&self) -> u16 {
        self.u16_at(46)
    }
    fn hello_time(&self) -> u16 {
        self.u16_at(48)
    }
    fn forward_delay(&self) -> u16 {
        self.u16_at(50)
    }
}

/// Spanning tree information: a received configuration BPDU, or this
/// bridge's best (Click's BridgeMessage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Msg {
    root: u64,
    cost: u32,
    bridge: u64,
    port: u16,
    tc: bool,
    /// When the root sent it; `None` never expires.
    stamp: Option<Timestamp>,
    max_age: u32,
    hello: u32,
    fwd: u32,
}

impl Msg {
    /// The worst possible message (nothing heard).
    fn worst() -> Msg {
        Msg {
            root: u64::MAX,
            cost: u32::MAX,
            bridge: u64::MAX,
            port: 0,
            tc: false,
            stamp: None,
            max_age: 0,
            hello: 0,
            fwd: 0,
        }
    }

    /// Positive when `self` is better than `(root, cost, bridge, port)`,
    /// negative when worse; the magnitude says which field decided
    /// (Click's BridgeMessage::compare).
    fn compare_fields(&self, bridge: u64, port: u16, o: &Msg) -> i32 {
        fn cmp<T: Ord>(a: T, b: T, w: i32) -> Option<i32> {
            match a.cmp(&b) {
                std::cmp::Ordering::Less => Some(w),
                std::cmp::Ordering::Greater => Some(-w),
                std::cmp::Ordering::Equal => None,
            }
        }
        cmp(self.root, o.root, 4)
            .or_else(|| cmp(self.cost, o.cost, 3))
            .or_else(|| cmp(bridge, o.bridge, 2))
            .or_else(|| cmp(port, o.port, 1))
            .unwrap_or(0)
    }

    fn compare(&self, o: &Msg) -> i32 {
        self.compare_fields(self.bridge, self.port, o)
    }

    fn from_bpdu(b: &Bpdu, now: Timestamp) -> Msg {
        let lateness_usec = i64::from(b.message_age()) * 1_000_000 / 256;
        Msg {
            root: b.root(),
            cost: b.cost(),
            bridge: b.bridge(),
            port: b.port(),
            tc: b.flags() & FLAG_TC != 0,
            stamp: Some(now - Timestamp::from_sec_nsec(0, lateness_usec * 1000)),
            max_age: u32::from(b.max_age() / 256),
            hello: u32::from(b.hello_time() / 256),
            fwd: u32::from(b.forward_delay() / 256),
        }
    }

    /// Message age in 1/256 s, as Click computes it.
    fn age(&self, now: Timestamp) -> u16 {
        match self.stamp {
            None => 0,
            Some(s) => {
                let t = now - s;
                let usec = t.subsec_nanos() / 1000;
                (t.sec() * 256 + usec * 256 / 1_000_000) as u16
            }
        }
    }

    /// Click's `msgs` line.
    fn line(&self) -> String {
        format!(
            " {:>16x}:{:04x}: {:>2}  {:x} -> {:>16x}  m/h/d: {:x}/{:x}/{:x}",
            self.bridge,
            self.port,
            if self.tc { "TC" } else { "tc" },
            self.cost,
            self.root,
            self.max_age,
            self.hello,
            self.fwd
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum PortState {
    Block = 0,
    Listen = 1,
    Learn = 2,
    Forward = 3,
}

impl PortState {
    fn name(self) -> &'static str {
        match self {
            PortState::Block => "blocking",
            PortState::Listen => "listening",
            PortState::Learn => "learning",
            PortState::Forward => "forwarding",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Port {
    state: PortState,
    since: Timestamp,
    needs_tca: bool,
    msg: Msg,
}

pub struct EtherSpanTree {
    addr: EtherAddr,
    priority: u16,
    bridge_id: u64,
    input_sup: usize,
    output_sup: usize,
    /// The two Suppressors' flags, taken at initialization.
    flags: Option<(SuppressFlags, SuppressFlags)>,
    switch: usize,
    hello: u32,
    max_age: u32,
    fwd: u32,
    ports: Vec<Port>,
    best: Msg,
    root_port: Option<usize>,
    /// Send TCNs on the root port until one is acknowledged.
    send_tcn: bool,
    /// As root: the topology change flag is set until then.
    tc_until: Option<Timestamp>,
    /// The switch's TIMEOUT while its aging is shortened.
    saved_timeout: Option<u32>,
    timer: Option<TimerId>,
    bad: u64,
}

impl Default for EtherSpanTree {
    fn default() -> Self {
        EtherSpanTree {
            addr: EtherAddr::default(),
            priority: 0xdead,
            bridge_id: 0,
            input_sup: 0,
            output_sup: 0,
            flags: None,
            switch: 0,
            hello: 2,
            max_age: 20,
            fwd: 15,
            ports: Vec::new(),
            best: Msg::worst(),
            root_port: None,
            send_tcn: false,
            tc_until: None,
            saved_timeout: None,
            timer: None,
            bad: 0,
        }
    }
}

/// Checks that `name` names an element of class `T`.
fn element_of<T: 'static>(
    ctx: &InitCtx,
    kw: &str,
    name: &str,
    class: &str,
) -> Result<usize, String> {
    let Some(i) = ctx.find_element(name) else {
        return Err(format!("{kw}: does not name an element"));
    };
    if ctx.with_element(i, |e| e.as_any().is::<T>()) == Some(true) {
        Ok(i)
    } else {
        Err(format!("{kw}: element type mismatch, expected {class}"))
    }
}

fn secs(n: u32) -> Timestamp {
    Timestamp::from_sec_nsec(i64::from(n), 0)
}

impl EtherSpanTree {
    /// This bridge's own message: it is the root.
    fn own(&self) -> Msg {
        Msg {
            root: self.bridge_id,
            cost: 0,
            bridge: self.bridge_id,
            port: 0,
            tc: false,
            stamp: None,
            max_age: self.max_age,
            hello: self.hello,
            fwd: self.fwd,
        }
    }

    fn is_root(&self) -> bool {
        self.root_port.is_none()
    }

    fn set_suppressors(&self, i: usize, input: bool, output: bool) {
        if let Some((inf, outf)) = &self.flags {
            for (f, v) in [(inf, input), (outf, output)] {
                if let Some(x) = f.get(i) {
                    x.store(v, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
    }

    fn apply_state(&self, i: usize) {
        let (input, output) = match self.ports[i].state {
            PortState::Block | PortState::Listen => (true, true),
            PortState::Learn => (false, true),
            PortState::Forward => (false, false),
        };
        self.set_suppressors(i, input, output);
    }

    /// Click's set_state: towards FORWARD one step at a time, or to BLOCK.
    fn set_state(&mut self, ctx: &mut Ctx, i: usize, target: PortState) {
        let old = self.ports[i].state;
        if old == target {
            return;
        }
        let new = if target == PortState::Forward {
            match old {
                PortState::Block => PortState::Listen,
                PortState::Listen => PortState::Learn,
                _ => PortState::Forward,
            }
        } else {
            PortState::Block
        };
        ctx.chatter(&format!(
            "Changing port {i} from {} to {}",
            old as u8, new as u8
        ));
        self.ports[i].state = new;
        self.ports[i].since = ctx.now();
        self.apply_state(i);
        let detected =
            new == PortState::Forward || (new == PortState::Block && old >= PortState::Learn);
        if new == PortState::Block {
            ctx.with_element_mut(self.switch, |e| {
                if let Some(s) = e.as_any_mut().downcast_mut::<EtherSwitch>() {
                    s.forget_port(i);
                }
            });
        }
        if detected {
            self.topology_change_detected(ctx.now());
        }
    }

    fn topology_change_detected(&mut self, now: Timestamp) {
        if self.is_root() {
            self.tc_until = Some(now + secs(self.best.max_age + self.best.fwd));
        } else {
            self.send_tcn = true;
        }
    }

    /// Whether the topology change flag is in effect.
    fn tc_active(&self, now: Timestamp) -> bool {
        if self.is_root() {
            self.tc_until.is_some_and(|t| now < t)
        } else {
            self.best.tc
        }
    }

    /// Click's find_tree: the best message, the root port, and which ports
    /// are blocked.
    fn find_tree(&mut self, ctx: &mut Ctx) {
        let mut best = self.own();
        let mut root_port = None;
        for (i, p) in self.ports.iter().enumerate() {
            let mut m = p.msg;
            // Saturating: a path of the greatest cost must not become the
            // cheapest.
            m.cost = m.cost.saturating_add(1);
            if best.compare(&m) < 0 {
                best = m;
                root_port = Some(i);
            }
        }
        let was_root = self.is_root();
        self.best = best;
        self.root_port = root_port;
        if was_root && !self.is_root() {
            self.tc_until = None;
        }
        for i in 0..self.ports.len() {
            if Some(i) == root_port {
                if self.ports[i].state == PortState::Block {
                    self.set_state(ctx, i, PortState::Forward);
                }
                continue;
            }
            let cmp = self
                .best
                .compare_fields(self.bridge_id, i as u16, &self.ports[i].msg);
            if cmp < 0 {
                self.set_state(ctx, i, PortState::Block);
            } else if self.ports[i].state == PortState::Block {
                self.set_state(ctx, i, PortState::Forward);
            }
        }
        self.update_aging(ctx);
    }

    /// Shortens the switch's aging to FORWARD_DELAY while a topology change
    /// is in effect, and restores it afterwards.
    fn update_aging(&mut self, ctx: &mut Ctx) {
        let active = self.tc_active(ctx.now());
        let fwd = self.best.fwd;
        let saved = self.saved_timeout;
        let r = ctx.with_element_mut(self.switch, |e| {
            let s = e.as_any_mut().downcast_mut::<EtherSwitch>()?;
            match (active, saved) {
                (true, None) => Some(Some(s.set_timeout(fwd))),
                (true, Some(_)) => None,
                (false, Some(t)) => {
                    s.set_timeout(t);
                    Some(None)
                }
                (false, None) => None,
            }
        });
        if let Some(Some(new_saved)) = r {
            self.saved_timeout = new_saved;
        }
    }

    /// Click's periodic: advance listening and learning ports, expire old
    /// information, recompute the tree.
    fn periodic(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        let cutoff = now - secs(self.best.fwd);
        for i in 0..self.ports.len() {
            let p = &self.ports[i];
            if matches!(p.state, PortState::Listen | PortState::Learn) && p.since < cutoff {
                self.set_state(ctx, i, PortState::Forward);
            }
        }
        let cutoff = now - secs(self.best.max_age);
        for i in 0..self.ports.len() {
            if self.ports[i].msg.stamp.is_some_and(|s| s <= cutoff) {
                self.ports[i].msg = Msg::worst();
                ctx.chatter(&format!("Expiring message on port {i}"));
            }
        }
        self.find_tree(ctx);
    }

    fn bpdu_header(&self, len_field: u16) -> Packet {
        let mut p = Packet::zeroed(BPDU_FRAME_LEN);
        let d = p.writable();
        if let Ok(mut f) = EtherFrame::new_checked(&mut d[..]) {
            f.set_dst(ALL_BRIDGES);
            f.set_src(self.addr);
            f.set_ethertype(len_field);
        }
        d[14] = 0x42;
        d[15] = 0x42;
        d[16] = 0x03;
        p
    }

    /// The BPDU for output `i`, if any (Click's generate_packet, with
    /// TCNs on the root port).
    fn generate(&mut self, i: usize, now: Timestamp) -> Option<Packet> {
        if Some(i) == self.root_port {
            if !self.send_tcn {
                return None;
            }
            let mut p = self.bpdu_header(7);
            p.writable()[20] = TYPE_TCN;
            return Some(p);
        }
        // Designated on this port: what we would send (our best root and
        // cost, with this bridge's ID and port) beats what we heard there.
        // Click compares with the ID and port of the bridge our best came
        // from instead, which can disagree with find_tree and leave both
        // ends of a link forwarding.
        if self
            .best
            .compare_fields(self.bridge_id, i as u16, &self.ports[i].msg)
            <= 0
        {
            return None;
        }
        let mut p = self.bpdu_header(38);
        let tc = self.tc_active(now);
        let tca = std::mem::take(&mut self.ports[i].needs_tca);
        let b = &self.best;
        let d = p.writable();
        d[20] = TYPE_CONFIG;
        d[21] = if tc { FLAG_TC } else { 0 } | if tca { FLAG_TCA } else { 0 };
        d[22..30].copy_from_slice(&b.root.to_be_bytes());
        d[30..34].copy_from_slice(&b.cost.to_be_bytes());
        d[34..42].copy_from_slice(&self.bridge_id.to_be_bytes());
        d[42..44].copy_from_slice(&(i as u16).to_be_bytes());
        d[44..46].copy_from_slice(&b.age(now).to_be_bytes());
        d[46..48].copy_from_slice(&((256 * b.max_age) as u16).to_be_bytes());
        d[48..50].copy_from_slice(&((256 * b.hello) as u16).to_be_bytes());
        d[50..52].copy_from_slice(&((256 * b.fwd) as u16).to_be_bytes());
        Some(p)
    }

    fn receive(&mut self, port: usize, p: &Packet, ctx: &mut Ctx) {
        let Some(b) = Bpdu::new_checked(p.data()) else {
            self.bad += 1;
            return;
        };
        let now = ctx.now();
        if b.kind() == TYPE_TCN {
            // Only the designated bridge of that LAN answers.
            if Some(port) != self.root_port && self.ports[port].state != PortState::Block {
                self.ports[port].needs_tca = true;
                self.topology_change_detected(now);
            }
            return;
        }
        // Information whose message age has reached its max age has expired
        // already (802.1D; Linux bridges drop it too). Click takes it and
        // expires it at its next hello, flapping the tree meanwhile.
        if b.message_age() >= b.max_age() {
            return;
        }
        let m = Msg::from_bpdu(&b, now);
        // Accept better or equal information (equal refreshes its age).
        if self.ports[port].msg.compare(&m) <= 0 {
            self.ports[port].msg = m;
            if b.flags() & FLAG_TCA != 0 && Some(port) == self.root_port {
                self.send_tcn = false;
            }
        }
        self.find_tree(ctx);
    }

    fn msgs(&self) -> String {
        let mut s = String::new();
        for p in &self.ports {
            s.push_str(&p.msg.line());
            s.push('\n');
        }
        s.push_str(&self.best.line());
        s.push('\n');
        s
    }

    fn bridge_text(&self, ctx: &Ctx) -> String {
        let mut s = String::new();
        let rp = self.root_port.map_or(-1, |p| p as i64);
        let _ = writeln!(s, "bridge_id {:016x}", self.bridge_id);
        let _ = writeln!(s, "priority {}", self.priority);
        let _ = writeln!(s, "root_id {:016x}", self.best.root);
        let _ = writeln!(s, "root_cost {}", self.best.cost);
        let _ = writeln!(s, "root_port {rp}");
        let _ = writeln!(s, "max_age {}", self.best.max_age);
        let _ = writeln!(s, "hello_time {}", self.best.hello);
        let _ = writeln!(s, "forward_delay {}", self.best.fwd);
        let _ = writeln!(s, "topology_change {}", self.tc_active(ctx.now()));
        s
    }

    fn port_states(&self) -> String {
        let mut s = String::new();
        for (i, p) in self.ports.iter().enumerate() {
            let role = if Some(i) == self.root_port {
                "root"
            } else if p.state == PortState::Block {
                "blocked"
            } else {
                "designated"
            };
            let _ = writeln!(s, "{i} {} {role}", p.state.name());
        }
        s
    }
}

// Click's `msgs`; rclick's own first, so they are listed after it.
const HANDLERS: &[Handler<EtherSpanTree>] = &[
    Handler::data("bad", |e| &e.bad),
    Handler::read("port_states", |e, _| e.port_states()),
    Handler::read("bridge", |e, ctx| e.bridge_text(ctx)),
    Handler::read("msgs", |e, _| e.msgs()),
];

rclick_core::element_class!(EtherSpanTree);

impl Element for EtherSpanTree {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "-/="
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let addr = args.read_mp_with("ADDR", |s| parse_ether_arg(s, ictx));
        let insup: String = args.read_mp_with("INPUT_SUPPRESSOR", parse_word);
        let outsup: String = args.read_mp_with("OUTPUT_SUPPRESSOR", parse_word);
        let switch: String = args.read_mp_with("SWITCH", parse_word);
        let priority = args.read_or_with("PRIORITY", parse_u16, 0xdead);
        let hello = args.read_or_with("HELLO_TIME", parse_u32, 2);
        let max_age = args.read_or_with("MAX_AGE", parse_u32, 20);
        let fwd = args.read_or_with("FORWARD_DELAY", parse_u32, 15);
        args.complete()?;
        let mut errors = Vec::new();
        let mut find = |kw: &str, name: &str, is_switch: bool| {
            let r = if is_switch {
                element_of::<EtherSwitch>(ictx, kw, name, "EtherSwitch")
            } else {
                element_of::<Suppressor>(ictx, kw, name, "Suppressor")
            };
            r.map_err(|e| errors.push(e)).unwrap_or(0)
        };
        let input_sup = find("INPUT_SUPPRESSOR", &insup, false);
        let output_sup = find("OUTPUT_SUPPRESSOR", &outsup, false);
        let switch = find("SWITCH", &switch, true);
        if hello == 0 || hello > 255 || max_age > 255 || fwd > 255 {
            errors.push("timers must be at most 255 seconds, HELLO_TIME at least 1".into());
        }
        if !errors.is_empty() {
            return Err(errors.into());
        }
        let mut mac = [0u8; 8];
        mac[2..].copy_from_slice(&addr.octets());
        *self = EtherSpanTree {
            addr,
            priority,
            bridge_id: (u64::from(priority) << 48) | u64::from_be_bytes(mac),
            input_sup,
            output_sup,
            switch,
            hello,
            max_age,
            fwd,
            ..EtherSpanTree::default()
        };
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let now = ctx.now();
        let n = ctx.noutputs();
        self.ports = vec![
            Port {
                state: PortState::Listen,
                since: now,
                needs_tca: false,
                msg: Msg::worst(),
            };
            n
        ];
        let flags = |idx: usize| {
            ctx.with_element(idx, |e| {
                e.as_any().downcast_ref::<Suppressor>().map(|s| s.flags())
            })
            .flatten()
        };
        self.flags = flags(self.input_sup).zip(flags(self.output_sup));
        // Every port starts listening (Click: BLOCK, then set_state to
        // FORWARD's first step), suppressed both ways.
        for i in 0..n {
            ctx.chatter(&format!("Changing port {i} from 0 to 1"));
            self.apply_state(i);
        }
        self.best = self.own();
        let t = ctx.new_timer();
        ctx.schedule_timer_at(t, now + secs(self.best.hello));
        self.timer = Some(t);
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        if port >= self.ports.len() {
            return;
        }
        for p in batch {
            self.receive(port, &p, ctx);
        }
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        self.periodic(ctx);
        let now = ctx.now();
        for i in 0..self.ports.len() {
            if let Some(p) = self.generate(i, now) {
                ctx.emit(i, p);
            }
        }
        let hello = self.best.hello.max(1);
        ctx.schedule_timer_at(timer, now + secs(hello));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_prefers_lower_fields() {
        let mut a = Msg::worst();
        a.root = 1;
        a.cost = 5;
        let mut b = a;
        b.cost = 6;
        assert_eq!(a.compare(&b), 3);
        assert_eq!(b.compare(&a), -3);
        assert_eq!(a.compare(&a), 0);
        assert_eq!(a.compare_fields(0, 0, &b), 3);
        b.cost = 5;
        b.bridge = 7;
        assert_eq!(a.compare_fields(6, 0, &b), 2);
    }

    #[test]
    fn bpdu_checks() {
        let mut f = vec![0u8; 60];
        f[14] = 0x42;
        f[15] = 0x42;
        f[16] = 0x03;
        assert!(Bpdu::new_checked(&f).is_some());
        assert!(Bpdu::new_checked(&f[..51]).is_none());
        f[20] = TYPE_TCN;
        assert!(Bpdu::new_checked(&f[..21]).is_some());
        f[20] = 0x02;
        assert!(Bpdu::new_checked(&f).is_none());
        f[20] = 0;
        f[16] = 0x04;
        assert!(Bpdu::new_checked(&f).is_none());
        assert!(Bpdu::new_checked(&[]).is_none());
    }
}
