//! # PullSwitch
//!
//! Forwards pulls to one settable input, with notification.
//!
//! ## Synopsis
//! `PullSwitch([INPUT])`
//!
//! ## Ports and processing
//! Any number of pull inputs, one pull output.
//!
//! ## Description
//! Answers each pull with a packet pulled from input INPUT; a negative
//! INPUT (or one not below the number of inputs) answers nothing. The
//! `switch` handler changes INPUT while the router runs.
//!
//! PullSwitch is an empty notifier, so a puller downstream (Unqueue,
//! Discard, ToDevice) sleeps while the selected input has nothing to give:
//! its signal goes down when a pull on the selected input finds nothing and
//! everything upstream of that input is empty, or when INPUT is set
//! negative; it rises when a packet is pulled, when INPUT is set to an
//! input whose upstream may have packets, and when a queue upstream of any
//! input wakes. (Click wakes the downstream puller directly from the
//! upstream queues; rclick does it through a task of the PullSwitch, so the
//! PullSwitch also has the `scheduled` and `tickets` handlers.)
//!
//! ## Keywords
//! - **INPUT** (integer): the input to pull from. Default 0.
//!
//! ## Handlers
//! - `switch` (read/write): the current INPUT (-1 for none). Writing it
//!   also sets `config`.
//!
//! ## Example
//! ```click
//! q1 :: Queue; q2 :: Queue;
//! q1 -> [0]s :: PullSwitch(0) -> Unqueue -> Discard; q2 -> [1]s;
//! ```

use rclick_core::conf::{parse_i32, Args};
use rclick_core::element::processing;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, SignalId, TaskId,
};

use super::simplepullswitch::select_input;

#[derive(Default)]
pub struct PullSwitch {
    input: i32,
    /// This switch's empty-notifier signal.
    signal: Option<SignalId>,
    /// What is upstream of each input.
    upstream: Vec<NotifierSignal>,
    /// Woken by any queue upstream: raises `signal`.
    task: Option<TaskId>,
}

impl PullSwitch {
    fn set_input(&mut self, v: i32, ctx: &mut Ctx) {
        self.input = select_input(v, ctx.ninputs());
        let Some(s) = self.signal else { return };
        match usize::try_from(self.input) {
            Err(_) => ctx.sleep_signal(s),
            Ok(i) => {
                if self.upstream.get(i).is_some_and(|u| ctx.signal_active(u)) {
                    ctx.wake_signal(s);
                }
            }
        }
    }
}

const HANDLERS: &[Handler<PullSwitch>] = &[Handler::read_write(
    "switch",
    |e, _| e.input.to_string(),
    |e, value, ctx| {
        let v =
            parse_i32(value.trim()).map_err(|_| "PullSwitch input must be integer".to_string())?;
        e.set_input(v, ctx);
        ctx.set_config(&e.input.to_string());
        Ok(())
    },
)];

rclick_core::element_class!(PullSwitch);

impl Element for PullSwitch {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "-/1"
    }

    fn processing(&self) -> &'static str {
        processing::PULL
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let input = args.read_p_or("INPUT", 0i32);
        args.complete()?;
        self.input = select_input(input, ctx.ninputs());
        // Created here, not in initialize, so pullers downstream that
        // initialize first find it.
        match self.signal {
            None => self.signal = Some(ctx.new_signal(self.input >= 0)),
            Some(s) if self.task.is_some() => {
                // Live reconfiguration.
                if self.input < 0 {
                    ctx.set_signal(s, false);
                }
            }
            Some(_) => {}
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(false);
        self.upstream = (0..ctx.ninputs())
            .map(|i| ctx.upstream_empty_signal(i, Some(t)))
            .collect();
        self.task = Some(t);
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        // A queue upstream woke.
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
        false
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let input = usize::try_from(self.input).ok()?;
        let got = ctx.pull(input, max);
        if let Some(s) = self.signal {
            if got.is_some() {
                ctx.wake_signal(s);
            } else if !self
                .upstream
                .get(input)
                .is_some_and(|u| ctx.signal_active(u))
            {
                ctx.sleep_signal(s);
            }
        }
        got
    }
}
