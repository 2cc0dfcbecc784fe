//! # QueueYankTest
//!
//! Checks a queue's take-from-the-middle operations.
//!
//! ## Synopsis
//! `QueueYankTest(QUEUE)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! A regression-test element, as in Click: right after the router starts,
//! it fills QUEUE (a Queue, NotifierQueue, SimpleQueue or FullNoteQueue,
//! empty and with room for 5 packets) with five one-byte packets `a` to `e`
//! several times and checks taking them back: from the head in order, the
//! first packet matching a test (`yank1`), and every matching packet
//! (`yank`, tail first), leaving the queue empty. It prints
//! `NAME :: QueueYankTest: All tests pass!`, or the first check that
//! failed.
//!
//! ## Keywords
//! - **QUEUE** (element name): the queue to test. Mandatory.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! Idle -> q :: Queue(6) -> Idle;
//! QueueYankTest(q);
//! ```

use rclick_core::conf::{parse_word, Args};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, TimerId};

use super::queue::Queue;

#[derive(Default)]
pub struct QueueYankTest {
    queue: usize,
    timer: Option<TimerId>,
}

macro_rules! check {
    ($e:expr) => {
        if !$e {
            return Err(format!(
                "{}:{}: test `{}' failed",
                file!(),
                line!(),
                stringify!($e)
            ));
        }
    };
}

/// Whether `p` starts with one of `set`'s bytes.
fn starts_with_any(p: &Packet, set: &[u8]) -> bool {
    p.data().first().is_some_and(|c| set.contains(c))
}

fn firsts(v: &[Packet]) -> Vec<u8> {
    v.iter().filter_map(|p| p.data().first().copied()).collect()
}

/// Click's checks, in its order.
fn run_checks(q: &mut Queue, ctx: &Ctx) -> Result<(), String> {
    let fill = |q: &mut Queue| -> Result<(), String> {
        for c in b"abcde" {
            if q.enq(Packet::from_slice(&[*c]), ctx).is_err() {
                return Err("the queue has no room for 5 packets".into());
            }
        }
        Ok(())
    };
    let deq = |q: &mut Queue, n: usize| -> Vec<u8> {
        (0..n)
            .filter_map(|_| q.deq(ctx).and_then(|p| p.data().first().copied()))
            .collect()
    };
    check!(q.is_empty());

    fill(q)?;
    check!(q.len() == 5);
    check!(deq(q, 5) == b"abcde");

    fill(q)?;
    check!(
        q.yank1(|p| starts_with_any(p, b"c"), ctx)
            .map(|p| p.data()[..1].to_vec())
            == Some(b"c".to_vec())
    );
    check!(q.len() == 4);
    check!(deq(q, 4) == b"abde");

    fill(q)?;
    check!(q.yank1(|p| starts_with_any(p, b"f"), ctx).is_none());
    check!(deq(q, 5) == b"abcde");

    fill(q)?;
    check!(deq(q, 4) == b"abcd");
    check!(q.yank1(|p| starts_with_any(p, b"hgkje"), ctx).is_some());
    check!(q.is_empty());

    let mut v = Vec::new();
    fill(q)?;
    check!(q.yank(|p| starts_with_any(p, b"ade"), &mut v, ctx) == 3);
    check!(q.len() == 2);
    check!(firsts(&v) == b"eda");
    check!(deq(q, 2) == b"bc");

    v.clear();
    fill(q)?;
    check!(q.yank(|p| starts_with_any(p, b"fhq"), &mut v, ctx) == 0);
    check!(deq(q, 5) == b"abcde");

    v.clear();
    fill(q)?;
    check!(q.yank(|p| starts_with_any(p, b"edcba"), &mut v, ctx) == 5);
    check!(q.is_empty());
    check!(firsts(&v) == b"edcba");
    Ok(())
}

rclick_core::element_class!(QueueYankTest);

impl Element for QueueYankTest {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let name: String = args.read_mp_with("QUEUE", parse_word);
        args.complete()?;
        let Some(i) = ctx.find_element(&name) else {
            return Err(format!("QUEUE: no element named '{name}'").into());
        };
        let is_queue = ctx
            .with_element(i, |e| e.as_any().is::<Queue>())
            .unwrap_or(false);
        if !is_queue {
            return Err("QUEUE argument must be a Queue element".into());
        }
        self.queue = i;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_timer();
        ctx.schedule_timer_at(t, ctx.now());
        self.timer = Some(t);
        Ok(())
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        let result = ctx
            .with_element_mut(self.queue, |e| {
                e.as_any_mut()
                    .downcast_mut::<Queue>()
                    .map(|q| run_checks(q, ctx))
            })
            .flatten()
            .unwrap_or_else(|| Err("the queue is busy".into()));
        let me = format!("{} :: QueueYankTest", ctx.element_name());
        match result {
            Ok(()) => ctx.chatter(&format!("{me}: All tests pass!")),
            Err(e) => ctx.chatter(&format!("{me}: {e}")),
        }
    }
}
