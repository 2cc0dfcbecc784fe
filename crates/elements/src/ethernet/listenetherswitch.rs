//! # ListenEtherSwitch
//!
//! Learning, forwarding Ethernet switch with a listen port.
//!
//! ## Synopsis
//! `ListenEtherSwitch([TIMEOUT])`
//!
//! ## Ports and processing
//! N push inputs and N+1 push outputs: output N is the listen port.
//!
//! ## Description
//! EtherSwitch with one more output, which sees a copy of every frame the
//! switch receives: flooded frames are flooded to it too, a frame
//! forwarded to one port is copied to it first, and a frame whose
//! destination lies behind its own port (which EtherSwitch drops) goes to
//! it alone. Learning, aging and TIMEOUT are EtherSwitch's.
//!
//! ## Keywords
//! - **TIMEOUT** (seconds): as in EtherSwitch. Default 300.
//!
//! ## Handlers
//! - `table` (read), `timeout` (read/write): as in EtherSwitch.
//! - `drops` (read, rclick addition): frames dropped as too short.
//!
//! ## Example
//! ```click
//! s :: ListenEtherSwitch;
//! FromDevice(eth0) -> [0]s[0] -> Queue -> ToDevice(eth0);
//! FromDevice(eth1) -> [1]s[1] -> Queue -> ToDevice(eth1);
//! s[2] -> ToDump(switch.pcap);
//! ```

use rclick_core::element::processing;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

use super::etherswitch::{flood, Learner, Route};

#[derive(Default)]
pub struct ListenEtherSwitch {
    learner: Learner,
}

// Click's order; rclick's `drops` first, so it is listed after Click's.
const HANDLERS: &[Handler<ListenEtherSwitch>] = &[
    Handler::data("drops", |e| &e.learner.drops),
    Handler::read("table", |e, _| e.learner.table_text()),
    Handler::read_write(
        "timeout",
        |e, _| e.learner.timeout.to_string(),
        |e, v, _| e.learner.write_timeout(v),
    ),
];

rclick_core::element_class!(ListenEtherSwitch);

impl Element for ListenEtherSwitch {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "-/=+"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn flow_code(&self) -> &'static str {
        "#/[^#]"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.learner.configure(conf)
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        let listen = ctx.noutputs().saturating_sub(1);
        for p in batch {
            match self.learner.route(port, &p) {
                Some(Route::Flood) => flood(ctx, port, p),
                Some(Route::Port(out)) => {
                    ctx.emit(listen, p.clone());
                    ctx.emit(out, p);
                }
                Some(Route::Back) => ctx.emit(listen, p),
                None => {}
            }
        }
    }
}
