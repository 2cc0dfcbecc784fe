//! Write-handler calls named in a configuration, as Click's HandlerCall
//! checks them (not an element class): InfiniteSource's and FromDump's
//! `END_CALL HANDLER [VALUE]`, Counter's `COUNT_CALL N HANDLER [VALUE]`.
//!
//! Click refuses a router whose call names an element that does not exist
//! or a handler that cannot be written, rather than failing when the call
//! fires; rclick does the same, with Click's messages, at the same stage
//! (see each function). A call to the calling element's own handler
//! cannot run while that element runs (it is borrowed); elements defer it
//! with `Ctx::call_write_later`, which runs it as soon as the element
//! returns.

use rclick_core::ctx::ElementView;
use rclick_core::{ConfigResult, Element, Errors, InitCtx};

/// `HANDLER [VALUE]`: the first word, unquoted, names the handler; the
/// rest of the text is the value.
pub fn parse(s: &str) -> Result<(String, String), String> {
    let s = s.trim();
    let Some(word) = rclick_core::conf::split_words(s).into_iter().next() else {
        return Err("expected 'HANDLER [VALUE]'".to_string());
    };
    let value = s.find(word.as_str()).map_or("", |i| &s[i + word.len()..]);
    Ok((
        rclick_core::conf::unquote_string(&word),
        value.trim().to_string(),
    ))
}

/// The element part of `ELEMENT.HANDLER`, `None` for a global handler
/// (no dot, or an empty element part: `.stop`). Click's HandlerCall gives
/// `0.` no special meaning: `0.stop` names an element `0`, which does not
/// exist, and the call is refused. The element part ends at the first dot
/// (as Click's: element names have no dots).
pub fn element_of(path: &str) -> Option<&str> {
    path.split_once('.')
        .map(|(e, _)| e)
        .filter(|e| !e.is_empty())
}

/// Whether `path` names a handler of the element `ctx` is for.
pub fn is_own(path: &str, ctx: &ElementView) -> bool {
    element_of(path).is_some_and(|e| ctx.find_element(e) == Some(ctx.element_index()))
}

/// The configure-time check of InfiniteSource's and FromDump's END_CALL
/// (Click parses the call while configuring): the element must exist.
pub fn check_element_at_configure(keyword: &str, path: &str, ctx: &InitCtx) -> ConfigResult {
    match element_of(path) {
        Some(e) if ctx.find_element(e).is_none() => Err(Errors(vec![
            format!("{keyword}: no element named '{e}'"),
            format!("{keyword}: parse error"),
        ])),
        _ => Ok(()),
    }
}

/// The initialize-time check (Click's `HandlerCall::initialize_write`):
/// the element must exist and have a write handler of that name. `own`
/// is the calling element, whose handlers are asked directly (it is
/// borrowed while it initializes).
pub fn check_write_at_initialize(path: &str, own: &dyn Element, ctx: &InitCtx) -> ConfigResult {
    check_write(path, own, ctx).map_err(Into::into)
}

/// The check itself, also made when a running element is given a new call
/// (Counter's `count_call` write handler, as Click's `reset_write`).
pub fn check_write(path: &str, own: &dyn Element, ctx: &ElementView) -> Result<(), String> {
    if let Some(e) = element_of(path) {
        if ctx.find_element(e).is_none() {
            return Err(format!("no element named '{e}'"));
        }
    }
    let writable = if is_own(path, ctx) {
        let name = path.split_once('.').map_or(path, |(_, h)| h);
        own.handlers()
            .iter()
            .any(|s| s.name == name && s.is_write())
    } else {
        ctx.check_write_handler(path).is_ok()
    };
    if writable {
        Ok(())
    } else {
        Err(format!("no '{path}' write handler"))
    }
}
