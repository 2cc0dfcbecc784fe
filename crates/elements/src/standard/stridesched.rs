//! # StrideSched
//!
//! Pulls from its inputs by stride scheduling.
//!
//! ## Synopsis
//! `StrideSched(TICKETS0, ..., TICKETSN-1)`
//!
//! ## Ports and processing
//! One or more pull inputs, one pull output.
//!
//! ## Description
//! Packet-based stride scheduling as in Click: input i holds TICKETSi
//! tickets and a stride of 65536 / TICKETSi; each pull tries inputs in
//! order of their pass (lowest first; ties in input order), advancing the
//! pass of every input it tries by its stride, until one produces a packet.
//! With every input backlogged, input i gets a share of the output
//! proportional to its tickets. An input with 0 tickets is never pulled.
//! Inputs whose upstream notifier says they are empty are stridden without
//! being pulled. A pull for several packets takes them one at a time.
//!
//! ## Keywords
//! - **TICKETSi** (integer, 0 .. 32768): one argument per input.
//!   Larger values are reduced to 32768 with a warning.
//!
//! ## Handlers
//! - `tickets0` ... `ticketsN-1` (read/write): tickets of each input.
//! - `config` (read/write): reads the current tickets (`T0, T1, ...`);
//!   writing it reconfigures live, keeping each input's place in the
//!   schedule. As in Click, the valid arguments of a failed write still
//!   take effect.
//!
//! ## Example
//! ```click
//! a :: Queue -> [0] s :: StrideSched(3, 1); b :: Queue -> [1] s; s -> Unqueue -> Discard;
//! ```

use super::roundrobinsched::{input_signals, pull_one_by_one};
use rclick_core::conf::{parse_i32, split_args};
use rclick_core::element::{no_handler, HandlerSpec};
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, NotifierSignal, Packet};

const STRIDE1: u32 = 1 << 16;
/// Click's StrideSched::MAX_TICKETS.
pub const MAX_TICKETS: i32 = 1 << 15;

#[derive(Clone, Debug, Default)]
struct Client {
    pass: u32,
    stride: u32,
    tickets: i32,
}

impl Client {
    fn set_tickets(&mut self, t: i32) {
        self.tickets = t;
        self.stride = if t > 0 { STRIDE1 / t as u32 } else { 0 };
    }
}

/// Click's `PASS_GT`: pass `a` is after `b`, modulo wrap-around.
fn pass_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Default)]
pub struct StrideSched {
    clients: Vec<Client>,
    /// Clients with tickets, in pass order.
    list: Vec<usize>,
    scratch: Vec<usize>,
    signals: Vec<NotifierSignal>,
}

impl StrideSched {
    /// Inserts client `c` before the first listed client whose pass is not
    /// earlier than its own.
    fn insert(&mut self, c: usize) {
        let pass = self.clients[c].pass;
        let pos = self
            .list
            .iter()
            .position(|&x| !pass_gt(pass, self.clients[x].pass))
            .unwrap_or(self.list.len());
        self.list.insert(pos, c);
    }

    fn pull_one(&mut self, ctx: &mut Ctx) -> Option<Packet> {
        let mut got: Option<Packet> = None;
        let mut k = 0;
        while k < self.list.len() && got.is_none() {
            let c = self.list[k];
            if self.signals.get(c).is_none_or(|s| ctx.signal_active(s)) {
                got = ctx.pull(c, 1).and_then(|mut b| b.pop());
            }
            let cl = &mut self.clients[c];
            cl.pass = cl.pass.wrapping_add(cl.stride);
            k += 1;
        }
        let mut stridden = std::mem::take(&mut self.scratch);
        stridden.clear();
        stridden.extend(self.list.drain(..k));
        for &c in &stridden {
            self.insert(c);
        }
        self.scratch = stridden;
        got
    }

    fn set_tickets(&mut self, port: usize, mut tickets: i32, ctx: &Ctx) -> Result<(), String> {
        if port >= self.clients.len() {
            return Err(format!("port {port} out of range"));
        }
        if tickets < 0 {
            return Err("number of tickets must be >= 0".into());
        }
        if tickets > MAX_TICKETS {
            ctx.chatter(&format!(
                "{}: warning: port {port}'s tickets reduced to {MAX_TICKETS}",
                ctx.element_name()
            ));
            tickets = MAX_TICKETS;
        }
        let old = self.clients[port].tickets;
        self.clients[port].set_tickets(tickets);
        if tickets == 0 && old != 0 {
            self.list.retain(|&x| x != port);
        } else if tickets != 0 && old == 0 {
            let first = self.list.first().map(|&x| self.clients[x].pass);
            let stride = self.clients[port].stride;
            self.clients[port].pass = first.map_or(0, |p| p.wrapping_add(stride));
            self.insert(port);
        }
        Ok(())
    }
}

rclick_core::element_class!(StrideSched);

impl Element for StrideSched {
    fn port_count(&self) -> &'static str {
        "1-/1"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let args = split_args(conf);
        let n = ctx.ninputs();
        if args.len() != n {
            return Err(format!("need {n} arguments, one per input port").into());
        }
        let mut errors = Vec::new();
        // A live reconfiguration (writing `config`) keeps each input's pass
        // and, as in Click, applies the valid arguments even when others
        // fail.
        let first = self.clients.len() != n;
        let mut clients = if first {
            vec![Client::default(); n]
        } else {
            std::mem::take(&mut self.clients)
        };
        for (i, a) in args.iter().enumerate() {
            match parse_i32(a.trim()) {
                Err(_) => errors.push(format!(
                    "argument {i} should be number of tickets (integer)"
                )),
                Ok(v) if v < 0 => {
                    errors.push(format!("argument {i} (number of tickets) must be >= 0"))
                }
                Ok(mut v) => {
                    if v > MAX_TICKETS {
                        ctx.warning(format_args!("input {i}'s tickets reduced to {MAX_TICKETS}"));
                        v = MAX_TICKETS;
                    }
                    clients[i].set_tickets(v);
                    if first {
                        clients[i].pass = clients[i].stride;
                    }
                }
            }
        }
        if first && !errors.is_empty() {
            return Err(errors.into());
        }
        self.clients = clients;
        self.list.clear();
        // Inserted in reverse so ties run in input order.
        for i in (0..n).rev() {
            if self.clients[i].tickets > 0 {
                self.insert(i);
            }
        }
        self.scratch = Vec::with_capacity(n);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into())
        }
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.signals = input_signals(ctx);
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        pull_one_by_one(self, max, ctx, Self::pull_one)
    }

    // The handlers are one per input (`tickets0`, `tickets1`, ...), so they
    // are listed here rather than in a table.
    // `config` reads the current tickets (not calm, as in Click).
    fn handlers(&self) -> Vec<HandlerSpec> {
        let mut v: Vec<HandlerSpec> = (0..self.clients.len())
            .map(|i| HandlerSpec::read_write(&format!("tickets{i}")))
            .collect();
        v.push(HandlerSpec::read("config"));
        v
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        if name == "config" {
            let t: Vec<String> = self.clients.iter().map(|c| c.tickets.to_string()).collect();
            return Ok(t.join(", "));
        }
        name.strip_prefix("tickets")
            .and_then(|s| s.parse::<usize>().ok())
            .and_then(|i| self.clients.get(i))
            .map(|c| c.tickets.to_string())
            .ok_or_else(|| no_handler(name))
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let Some(port) = name
            .strip_prefix("tickets")
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|&i| i < self.clients.len())
        else {
            return Err(no_handler(name));
        };
        let t = parse_i32(value.trim()).map_err(|_| "tickets value must be integer".to_string())?;
        self.set_tickets(port, t, ctx)
    }
}
