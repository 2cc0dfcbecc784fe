//! What the router's servers, ControlSocket and HTTPServer, share: a
//! non-blocking listener the router polls, clients kept by descriptor
//! between calls, a timer that binds later (after a hot swap, or to retry),
//! and their own handlers listed beside the router's.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::RawFd;

use rclick_core::ctx::ElementView;
use rclick_core::{Ctx, HandlerSpec, InitCtx, Interest, TimerId};

/// How often a hot-swapped server that could not bind its address tries
/// again (the router keeps running without it meanwhile).
pub const REBIND_INTERVAL_SECS: f64 = 5.0;

/// A server's identity from `initialize` on.
pub struct Started {
    /// `NAME :: CLASS`, the prefix of its messages.
    pub decl: String,
    pub index: usize,
    /// Binds late: after a hot swap, or to retry.
    pub timer: TimerId,
    /// A hot-swap successor: the predecessor's listener comes through
    /// `take_state`, and the timer, due now, binds one if none came, so the
    /// caller does not bind.
    pub successor: bool,
}

/// Names the server for messages and makes its timer.
pub fn start(ctx: &mut InitCtx, class: &str) -> Started {
    let timer = ctx.new_timer();
    let successor = ctx.is_hotswap_successor();
    if successor {
        ctx.schedule_timer_at(timer, ctx.now());
    }
    Started {
        decl: format!("{} :: {class}", ctx.element_name()),
        index: ctx.element_index(),
        timer,
        successor,
    }
}

/// A listener was bound: the router watches it, and a verbose server says
/// where it listens.
pub fn watch_listener(
    ctx: &ElementView,
    fd: RawFd,
    verbose: bool,
    decl: &str,
    where_: impl FnOnce() -> String,
) {
    ctx.add_select(fd, Interest::READ);
    if verbose {
        ctx.chatter(&format!("{decl}: {}", where_()));
    }
}

/// One accept's outcome: the connection, or `None` to stop accepting
/// until the listener is readable again (nothing waiting, or an error,
/// which is reported with `reason`).
pub fn accepted<S>(
    r: io::Result<S>,
    ctx: &Ctx,
    decl: &str,
    reason: impl Fn(&io::Error) -> String,
) -> Option<S> {
    match r {
        Ok(s) => Some(s),
        Err(e) => {
            if !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) {
                ctx.chatter(&format!("{decl}: accept: {}", reason(&e)));
            }
            None
        }
    }
}

/// After a hot swap: the router watches the inherited listener and
/// connections again.
pub fn rewatch<C>(
    ctx: &InitCtx,
    listener: Option<RawFd>,
    conns: &BTreeMap<RawFd, C>,
    interest: impl Fn(&C) -> Interest,
) {
    if let Some(fd) = listener {
        ctx.add_select(fd, Interest::READ);
    }
    for (&fd, c) in conns {
        ctx.add_select(fd, interest(c));
    }
}

/// The connection on `fd` while it is worked on, out of `conns`; a
/// descriptor that is no longer a connection is no longer watched.
pub fn take_conn<C>(conns: &mut BTreeMap<RawFd, C>, fd: RawFd, ctx: &mut Ctx) -> Option<C> {
    let c = conns.remove(&fd);
    if c.is_none() {
        ctx.remove_select(fd);
    }
    c
}

/// The `clients` handler: connections waiting, plus the one being served
/// (out of `conns` while its commands run).
pub fn clients<C>(conns: &BTreeMap<RawFd, C>, busy: bool) -> String {
    (conns.len() + usize::from(busy)).to_string()
}

/// The handlers of `elem` as the router lists them; for the server itself
/// (`own_index`) its `own` handlers too, which the router cannot see while
/// the server runs.
pub fn handler_specs(
    ctx: &Ctx,
    elem: Option<usize>,
    own_index: usize,
    own: Vec<HandlerSpec>,
) -> Vec<HandlerSpec> {
    let mut specs = ctx.handler_specs(elem);
    if elem == Some(own_index) {
        for h in own {
            if !specs.iter().any(|s| s.name == h.name) {
                specs.push(h);
            }
        }
    }
    specs
}

/// Writes without raising SIGPIPE when the peer is gone.
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: the caller's descriptor is open, and `buf` is a valid slice
    // of the given length.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
