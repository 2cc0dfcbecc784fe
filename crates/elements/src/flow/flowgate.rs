//! # FlowGate
//!
//! Binds flows to outputs by the most specific six-tuple filter (a Router
//! Plugins gate).
//!
//! ## Synopsis
//! `FlowGate(SPEC0, SPEC1, ..., [TABLE])`
//!
//! ## Ports and processing
//! One push input; one or more push outputs.
//!
//! ## Description
//! Sends each IPv4 packet to the output of the most specific filter its
//! flow matches, as a Router Plugins gate hands a packet to the plugin
//! instance bound to its flow. The outputs lead to the bound instances;
//! like [Classifier](#classifier), the positional arguments are filters,
//! SPEC*i* for output *i* (an empty argument installs none for that
//! output), and more filters are installed and removed while the router
//! runs with the `add_filter` and `remove_filter` handlers; an output can
//! have several filters.
//!
//! A SPEC is a space-separated list of fields, each optional (a missing
//! field matches anything):
//! `src ADDR[/LEN] dst ADDR[/LEN] proto NAME|NUM sport P[-Q] dport P[-Q] iif N`.
//! `proto` takes `tcp`, `udp`, `icmp`, `igmp`, `ipip`, `dccp`, `gre`,
//! `esp`, `ah`, `sctp` or a number; ports are single or inclusive ranges;
//! `iif` is the incoming interface number, read from the PAINT annotation
//! (set it with [Paint](#paint) after each FromDevice). `-` (or `any`)
//! alone matches every packet: as the least specific filter it catches
//! what nothing else does, like Classifier's `-`.
//!
//! Unlike Classifier, the order of the filters does not decide: the most
//! specific matching filter wins, field by field in the order source
//! prefix, destination prefix, protocol, source port range, destination
//! port range, incoming interface. The first field where two matching
//! filters differ decides: the longer prefix, a given protocol over none,
//! the narrower port range (fewer ports), a given interface over none. So
//! when filters are ambiguous (one more specific in the destination, the
//! other in the source), the one more specific in the earlier field wins,
//! which is the order the Router Plugins DAG's per-level best matches
//! find. Two filters equally specific in every field (overlapping port
//! ranges of the same width) go to the one installed first. Installing a
//! filter identical to an installed one is an error.
//!
//! Packets matching no filter are dropped and counted (`nomatch`).
//! Packets that are not IPv4 (the network header, or the data when no
//! network header is set, does not hold an IPv4 header) or are truncated
//! before their ports are dropped and counted (`bad`).
//!
//! With a [FlowTable](#flowtable) (the nearest one upstream, or named by
//! TABLE), the gate looks the filters up once per flow and keeps the
//! answer in the flow's record; later packets of the flow, at this gate,
//! use it. A flow's record is found from the packet's flow annotation
//! when the table or an earlier gate already marked the packet, so gates
//! after the first do not hash. Installing or removing a filter changes
//! the gate's generation, which invalidates every cached answer at once:
//! each flow's next packet looks the filters up again. Without a
//! FlowTable every packet is looked up. Within a batch, a packet of the
//! same flow (and arriving with the same flow annotation) as the packet
//! before it takes that packet's answer, and a batch of one flow is
//! looked up once and leaves whole; every packet is still checked, and
//! counted as a packet looked up singly would be.
//!
//! The filters are held in a DAG of per-field best matches (see
//! crates/elements/src/flow/bestmatch.rs), rebuilt on every change.
//!
//! Hot swap: filters installed and removed through the handlers carry
//! over to the gate of the same name in the new configuration (on top of
//! its own filters); cached bindings do not (the new router has a new
//! flow table).
//!
//! Threads: a gate belongs to one thread (one reached from two threads
//! is refused at initialization); under `-j N` give each thread its own
//! gate, all naming one FlowTable, which they share under its lock (taken
//! once per batch).
//!
//! ## Keywords
//! - **TABLE** (element name): the FlowTable to use. Default: the nearest
//!   one upstream, if any.
//!
//! ## Handlers
//! - `add_filter` (write): `OUTPUT SPEC` installs a filter for OUTPUT.
//! - `remove_filter` (write): `OUTPUT SPEC` removes that filter; an error
//!   if it is not installed.
//! - `filters` (read/write): the installed filters, one a line, `OUTPUT
//!   SPEC` in canonical form, in the order they were installed. Writing
//!   lines in that form replaces every filter at once (one rebuild; an
//!   error changes nothing).
//! - `lookups` (read): packets looked up in the filters; `cached` (read):
//!   packets sent by their flow's cached answer.
//! - `nomatch`, `bad` (read): packets dropped as above.
//!
//! ## Example
//! ```click
//! ft :: FlowTable;
//! ... -> ft -> g :: FlowGate(src 10.0.0.0/8 proto tcp, dport 53, -);
//! g[0] -> q0 :: Queue; g[1] -> q1 :: Queue; g[2] -> q2 :: Queue;
//! ```
//! Then `write g.add_filter 1 src 10.1.0.0/16 dport 1-1023`.

use rclick_core::conf::Args;
use rclick_core::element::kinds::dispatch_push;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

use super::bestmatch::BestMatch;
use super::flowtable::find_table;
use super::sixtuple::{Key, Spec};
use super::table::{LastLookup, SharedTable};

/// The cached answer "no filter matched".
const NO_MATCH: u32 = u32::MAX;

#[derive(Default)]
pub struct FlowGate {
    outs: Vec<usize>,
    dag: BestMatch,
    generation: u32,
    noutputs: usize,
    table_name: Option<String>,
    table: Option<(SharedTable, usize)>,
    /// The filters of the configuration, for hot swap.
    configured: Vec<(usize, Spec)>,
    lookups: u64,
    cached: u64,
    nomatch: u64,
    bad: u64,
}

/// Parses `OUTPUT SPEC`.
fn parse_output_spec(v: &str, noutputs: usize) -> Result<(usize, Spec), String> {
    let v = v.trim();
    let (out, spec) = v.split_once(char::is_whitespace).unwrap_or((v, ""));
    let out: usize = out
        .parse()
        .map_err(|_| format!("expected 'OUTPUT SPEC', not '{v}'"))?;
    if out >= noutputs {
        return Err(format!("no output {out} (the gate has {noutputs})"));
    }
    if spec.trim().is_empty() {
        return Err("missing filter (use '-' to match every packet)".into());
    }
    Ok((out, Spec::parse(spec)?))
}

impl FlowGate {
    /// The output for `k`, or `None`: a full lookup.
    #[inline]
    pub fn lookup(&self, k: &Key) -> Option<usize> {
        self.dag.lookup(k).map(|i| self.outs[i])
    }

    fn install(&mut self, specs: Vec<Spec>, outs: Vec<usize>) {
        self.dag = BestMatch::new(specs);
        self.outs = outs;
        self.generation = self.generation.wrapping_add(1).max(1);
    }

    /// Installs a filter for `out`.
    pub fn add_filter(&mut self, out: usize, spec: Spec) -> Result<(), String> {
        if let Some(i) = self.dag.filters().iter().position(|s| *s == spec) {
            return Err(format!(
                "filter '{spec}' is already installed for output {}",
                self.outs[i]
            ));
        }
        let mut specs = self.dag.filters().to_vec();
        let mut outs = self.outs.clone();
        specs.push(spec);
        outs.push(out);
        self.install(specs, outs);
        Ok(())
    }

    /// Removes the filter `spec` of `out`.
    pub fn remove_filter(&mut self, out: usize, spec: Spec) -> Result<(), String> {
        let Some(i) =
            (0..self.outs.len()).find(|&i| self.outs[i] == out && self.dag.filters()[i] == spec)
        else {
            return Err(format!("no filter '{spec}' for output {out}"));
        };
        let mut specs = self.dag.filters().to_vec();
        let mut outs = self.outs.clone();
        specs.remove(i);
        outs.remove(i);
        self.install(specs, outs);
        Ok(())
    }

    /// Replaces every filter at once (one rebuild; for benchmarks and
    /// bulk loads): `(output, filter)` pairs, distinct filters.
    pub fn set_filters(&mut self, filters: &[(usize, Spec)]) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for (out, spec) in filters {
            if *out >= self.noutputs {
                return Err(format!("no output {out} (the gate has {})", self.noutputs));
            }
            if !seen.insert(*spec) {
                return Err(format!("filter '{spec}' given twice"));
            }
        }
        self.install(
            filters.iter().map(|f| f.1).collect(),
            filters.iter().map(|f| f.0).collect(),
        );
        Ok(())
    }

    /// Routes `batch`: `Some(out)` when the whole batch leaves by output
    /// `out` (left in `batch` for the caller to send), `None` when the
    /// packets were sent on one by one or dropped (`batch` is then empty).
    #[inline(always)]
    fn route(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> Option<usize> {
        let (mut lookups, mut cached, mut nomatch, mut bad) = (0u64, 0u64, 0u64, 0u64);
        let (dag, outs) = (&self.dag, &self.outs);
        let lookup = |k: &Key| dag.lookup(k).map(|i| outs[i]);
        let Some((table, slot)) = &self.table else {
            dispatch_push(std::mem::take(batch), ctx, |p, _| match Key::of(&p) {
                Ok(k) => {
                    lookups += 1;
                    match lookup(&k) {
                        Some(o) => Some((o, p)),
                        None => {
                            nomatch += 1;
                            None
                        }
                    }
                }
                Err(_) => {
                    bad += 1;
                    None
                }
            });
            self.lookups += lookups;
            self.nomatch += nomatch;
            self.bad += bad;
            return None;
        };
        let slot = *slot;
        let now = ctx.recent().nanos();
        let mut t = table.lock();
        let gen = u64::from(self.generation) << 32;
        if let Some(idx) = t.lookup_one_flow_batch(batch, now) {
            // One flow: one answer for the whole batch.
            let n = batch.len() as u64;
            let s = t.slot(idx, slot);
            let enc = if s & !0xffff_ffff == gen && s as u32 != 0 {
                self.cached += n;
                s as u32
            } else {
                self.lookups += 1;
                self.cached += n - 1;
                let enc = match lookup(&t.record(idx).key) {
                    Some(o) => o as u32 + 1,
                    None => NO_MATCH,
                };
                *t.slot_mut(idx, slot) = gen | u64::from(enc);
                enc
            };
            drop(t);
            if enc == NO_MATCH {
                self.nomatch += n;
                drop(std::mem::take(batch));
                return None;
            }
            return Some(enc as usize - 1);
        }
        let mut last = LastLookup::default();
        let mut last_enc = NO_MATCH;
        dispatch_push(std::mem::take(batch), ctx, |mut p, _| {
            let Ok((idx, repeat)) = t.lookup_in_batch(&mut p, now, &mut last) else {
                bad += 1;
                return None;
            };
            // The slot: this gate's generation, then output + 1,
            // or NO_MATCH; 0 when never set.
            let enc = if repeat {
                // The previous packet's flow: its answer is now
                // cached in the slot, whichever way it was found.
                cached += 1;
                last_enc
            } else {
                let s = t.slot(idx, slot);
                if s & !0xffff_ffff == gen && s as u32 != 0 {
                    cached += 1;
                    s as u32
                } else {
                    lookups += 1;
                    let enc = match lookup(&t.record(idx).key) {
                        Some(o) => o as u32 + 1,
                        None => NO_MATCH,
                    };
                    *t.slot_mut(idx, slot) = gen | u64::from(enc);
                    enc
                }
            };
            last_enc = enc;
            if enc == NO_MATCH {
                nomatch += 1;
                None
            } else {
                Some((enc as usize - 1, p))
            }
        });
        self.lookups += lookups;
        self.cached += cached;
        self.nomatch += nomatch;
        self.bad += bad;
        None
    }

    /// The `filters` listing.
    pub fn listing(&self) -> String {
        let mut s = String::new();
        for (spec, out) in self.dag.filters().iter().zip(&self.outs) {
            s.push_str(&format!("{out} {spec}\n"));
        }
        s
    }
}

const HANDLERS: &[Handler<FlowGate>] = &[
    Handler::data("bad", |e| &e.bad),
    Handler::data("nomatch", |e| &e.nomatch),
    Handler::data("cached", |e| &e.cached),
    Handler::data("lookups", |e| &e.lookups),
    Handler::read_write(
        "filters",
        |e, _| e.listing(),
        |e, v, _| {
            let mut all = Vec::new();
            for line in v.lines().filter(|l| !l.trim().is_empty()) {
                all.push(parse_output_spec(line, e.noutputs)?);
            }
            e.set_filters(&all)
        },
    ),
    Handler::write("remove_filter", |e, v, _| {
        let (out, spec) = parse_output_spec(v, e.noutputs)?;
        e.remove_filter(out, spec)
    }),
    Handler::write("add_filter", |e, v, _| {
        let (out, spec) = parse_output_spec(v, e.noutputs)?;
        e.add_filter(out, spec)
    }),
];

rclick_core::element_class!(FlowGate);

impl Element for FlowGate {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let table: Option<String> = args.read("TABLE");
        let rest = args.take_rest();
        args.complete()?;
        let n = ctx.noutputs();
        if rest.len() > n {
            return Err(format!(
                "{} filters but only {n} outputs (one filter argument per output)",
                rest.len()
            )
            .into());
        }
        let mut specs = Vec::new();
        let mut outs = Vec::new();
        for (i, a) in rest.iter().enumerate() {
            if a.trim().is_empty() {
                continue;
            }
            let spec = Spec::parse(a).map_err(|e| format!("argument {}: {e}", i + 1))?;
            if let Some(j) = specs.iter().position(|s| *s == spec) {
                return Err(
                    format!("argument {}: same filter as for output {}", i + 1, outs[j]).into(),
                );
            }
            specs.push(spec);
            outs.push(i);
        }
        self.noutputs = n;
        self.table_name = table;
        self.configured = outs.iter().copied().zip(specs.iter().copied()).collect();
        self.install(specs, outs);
        Ok(())
    }

    /// Hot swap: the filters added and removed by handlers on the old gate
    /// are added to and removed from this gate's configured ones (added
    /// filters whose output no longer exists, or that this configuration
    /// already has, are left out).
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<FlowGate>() else {
            return false;
        };
        let old_now: Vec<(usize, Spec)> = o
            .outs
            .iter()
            .copied()
            .zip(o.dag.filters().iter().copied())
            .collect();
        let mut now: Vec<(usize, Spec)> = self
            .outs
            .iter()
            .copied()
            .zip(self.dag.filters().iter().copied())
            .collect();
        // Configured filters the old gate had removed stay removed.
        now.retain(|f| !o.configured.contains(f) || old_now.contains(f));
        for f in &old_now {
            if !o.configured.contains(f) && f.0 < self.noutputs && !now.iter().any(|g| g.1 == f.1) {
                now.push(*f);
            }
        }
        self.install(
            now.iter().map(|f| f.1).collect(),
            now.iter().map(|f| f.0).collect(),
        );
        true
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if let Some(t) = find_table(ctx, self.table_name.as_deref())? {
            let slot = t.lock().register_slots(1);
            self.table = Some((t, slot));
        }
        Ok(())
    }

    rclick_core::element_kind!(push_only, own_chain);

    /// A gate chains: a batch that leaves whole by output 0 (the usual
    /// case when output 0 is the default path) goes straight on, without
    /// a handoff through the dispatcher.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        match self.route(batch, ctx) {
            Some(0) => true,
            Some(out) => {
                ctx.emit_batch(out, std::mem::take(batch));
                false
            }
            None => false,
        }
    }
}
