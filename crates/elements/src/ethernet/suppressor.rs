//! # Suppressor
//!
//! Passes packets unchanged, except on ports that are suppressed.
//!
//! ## Synopsis
//! `Suppressor`
//!
//! ## Ports and processing
//! Any number of agnostic inputs, as many agnostic outputs; input N flows
//! to output N.
//!
//! ## Description
//! Passes packets from input N to output N unchanged, unless port N is
//! suppressed: then packets pushed to input N are dropped, and pulls from
//! output N return nothing. Every port starts active. Ports are suppressed
//! and allowed through the handlers or by another element: EtherSpanTree
//! suppresses the ports of an EtherSwitch that the spanning tree blocks.
//!
//! ## Handlers
//! - `active0` ... `activeN-1` (read/write): whether each port is active
//!   (not suppressed), `true` or `false`.
//! - `reset` (write): makes every port active.
//!
//! ## Example
//! ```click
//! in :: Suppressor; out :: Suppressor; s :: EtherSwitch;
//! FromDevice(eth0) -> [0]in[0] -> [0]s[0] -> [0]out[0] -> Queue -> ToDevice(eth0);
//! FromDevice(eth1) -> [1]in[1] -> [1]s[1] -> [1]out[1] -> Queue -> ToDevice(eth1);
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rclick_core::conf::{parse_bool, Args};
use rclick_core::element::{hflags, no_handler, processing, HandlerSpec};
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

/// The suppressed flags are atomics, shared with the element that controls
/// them (EtherSpanTree takes them at initialization), whichever thread
/// runs it.
pub struct Suppressor {
    suppressed: Arc<[AtomicBool]>,
}

impl Default for Suppressor {
    fn default() -> Self {
        Suppressor {
            suppressed: Arc::new([]),
        }
    }
}

/// A Suppressor's per-port flags (`true`: suppressed), shared.
pub type SuppressFlags = Arc<[AtomicBool]>;

impl Suppressor {
    /// The flags, for an element that controls this Suppressor.
    pub fn flags(&self) -> SuppressFlags {
        self.suppressed.clone()
    }

    /// Whether port `port` is suppressed.
    #[inline]
    pub fn suppressed(&self, port: usize) -> bool {
        self.suppressed
            .get(port)
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Suppresses (`true`) or allows port `port`; ports it lacks are ignored.
    pub fn set(&self, port: usize, suppressed: bool) {
        if let Some(s) = self.suppressed.get(port) {
            s.store(suppressed, Ordering::Relaxed);
        }
    }

    /// Suppresses port `port`.
    pub fn suppress(&self, port: usize) {
        self.set(port, true);
    }

    /// Allows port `port`.
    pub fn allow(&self, port: usize) {
        self.set(port, false);
    }

    /// Allows every port.
    pub fn allow_all(&self) {
        for s in self.suppressed.iter() {
            s.store(false, Ordering::Relaxed);
        }
    }

    fn port_of(&self, name: &str) -> Option<usize> {
        name.strip_prefix("active")
            .filter(|s| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|&i| i < self.suppressed.len())
    }
}

rclick_core::element_class!(Suppressor);

impl Element for Suppressor {
    fn port_count(&self) -> &'static str {
        "-/="
    }

    fn processing(&self) -> &'static str {
        processing::AGNOSTIC
    }

    fn flow_code(&self) -> &'static str {
        "#/#"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        self.suppressed = (0..ctx.noutputs())
            .map(|_| AtomicBool::new(false))
            .collect();
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        if !self.suppressed(port) {
            ctx.emit_batch(port, batch);
        }
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if self.suppressed(port) {
            None
        } else {
            ctx.pull(port, max)
        }
    }

    // Click adds active0..activeN-1, then reset.
    fn handlers(&self) -> Vec<HandlerSpec> {
        let mut v: Vec<HandlerSpec> = (0..self.suppressed.len())
            .map(|i| HandlerSpec::read_write(&format!("active{i}")).with(hflags::CHECKBOX))
            .collect();
        v.push(HandlerSpec::write("reset").with(hflags::BUTTON));
        v
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match self.port_of(name) {
            Some(i) => Ok(if self.suppressed(i) { "false" } else { "true" }.into()),
            None => Err(no_handler(name)),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        if name == "reset" {
            self.allow_all();
            return Ok(());
        }
        match self.port_of(name) {
            Some(i) => {
                let active = parse_bool(value.trim()).map_err(|_| "type mismatch".to_string())?;
                self.set(i, !active);
                Ok(())
            }
            None => Err(no_handler(name)),
        }
    }
}
