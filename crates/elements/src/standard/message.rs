//! # Message
//!
//! Prints a message when configured.
//!
//! ## Synopsis
//! `Message(MESSAGE [, TYPE])`
//!
//! ## Ports and processing
//! None.
//!
//! ## Description
//! Prints MESSAGE (a string) while the router is configured, as
//! configuration-level documentation. TYPE is MESSAGE (the default),
//! WARNING (the message is prefixed by `warning: `), or ERROR, in which
//! case the message is reported as a configuration error and the router
//! fails to initialize. The message appears under a
//! `While configuring 'NAME :: Message':` line, as Click prints it.
//!
//! ## Keywords
//! - **MESSAGE** (string): the message. Required.
//! - **TYPE** (keyword): MESSAGE, WARNING or ERROR. Default MESSAGE.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! Message("This configuration is deprecated; use new.click instead.", WARNING);
//! ```

use rclick_core::conf::{parse_keyword, Args};
use rclick_core::{ConfigResult, Element, InitCtx};

#[derive(Default)]
pub struct Message;

rclick_core::element_class!(Message);

impl Element for Message {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let message: String = args.read_mp("MESSAGE");
        let kind = args
            .read_p_with("TYPE", parse_keyword)
            .unwrap_or_else(|| "MESSAGE".to_string());
        args.complete()?;
        // Each line on its own, under the element's context line and in
        // configuration order among the other elements' messages (Click
        // prefixes every line of a warning).
        match kind.as_str() {
            "MESSAGE" => message.lines().for_each(|l| ctx.note(l)),
            "WARNING" => message.lines().for_each(|l| ctx.warning(l)),
            "ERROR" => return Err(message.into()),
            _ => return Err("unrecognized message type".into()),
        }
        Ok(())
    }
}
