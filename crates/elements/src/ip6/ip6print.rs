//! # IP6Print
//!
//! Prints IPv6 packets' headers.
//!
//! ## Synopsis
//! `IP6Print([LABEL, keywords CONTENTS, NBYTES])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! For each packet, prints one line (through the router's chatter, as
//! Click's `click_chatter`) from the IPv6 header at the network header:
//! `LABEL: SRC -> DST plen PLEN, next NXT, hlim HLIM` (without `LABEL: `
//! when LABEL is empty), with addresses as Click writes them
//! (`::0.0.0.1`-style for IPv4-compatible ones). With CONTENTS, the first
//! NBYTES bytes of the packet data follow in hex on indented lines of 24
//! bytes, grouped by 4. Packets pass unchanged.
//!
//! A packet without an IPv6 header at its network header (Click reads
//! whatever lies there, or crashes when the annotation is unset) prints
//! `LABEL: no IPv6 header`.
//!
//! ## Keywords
//! - **LABEL** (string): printed first. Default empty.
//! - **CONTENTS** (bool): print the data too. Default false.
//! - **NBYTES** (unsigned): bytes of data printed. Default 1500.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> Strip(14) -> MarkIP6Header -> IP6Print(v6, NBYTES 512, CONTENTS true) -> ...;
//! ```

use std::fmt::Write as _;

use rclick_core::conf::{parse_string, Args};
use rclick_core::element::Observe;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet};

use super::common::{fmt_ip6, ip6_hdr};

pub struct IP6Print {
    label: String,
    contents: bool,
    nbytes: usize,
}

impl Default for IP6Print {
    fn default() -> Self {
        IP6Print {
            label: String::new(),
            contents: false,
            nbytes: 1500,
        }
    }
}

impl IP6Print {
    /// The text printed for `p`.
    pub fn line(&self, p: &Packet) -> String {
        let mut s = String::new();
        if !self.label.is_empty() {
            s.push_str(&self.label);
            s.push_str(": ");
        }
        match ip6_hdr(p) {
            Some(h) => {
                let _ = writeln!(
                    s,
                    "{} -> {} plen {}, next {}, hlim {}",
                    fmt_ip6(h.src()),
                    fmt_ip6(h.dst()),
                    h.payload_len(),
                    h.next_header(),
                    h.hop_limit()
                );
            }
            None => s.push_str("no IPv6 header\n"),
        }
        if self.contents {
            s.push_str("  ");
            for (i, b) in p.data().iter().take(self.nbytes).enumerate() {
                let _ = write!(s, "{b:02x}");
                if i % 24 == 23 {
                    s.push_str("\n  ");
                } else if i % 4 == 3 {
                    s.push(' ');
                }
            }
        }
        s
    }
}

impl Observe for IP6Print {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    fn observe(&mut self, p: &Packet, ctx: &mut Ctx) {
        let s = self.line(p);
        // Click's chatter ends the message with one newline.
        ctx.chatter(s.strip_suffix('\n').unwrap_or(&s));
    }
}

rclick_core::element_class!(IP6Print);

impl Element for IP6Print {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let label = args.read_p_with("LABEL", parse_string);
        let contents = args.read_or("CONTENTS", false);
        let nbytes: u32 = args.read_or("NBYTES", 1500);
        args.complete()?;
        self.label = label.unwrap_or_default();
        self.contents = contents;
        self.nbytes = nbytes as usize;
        Ok(())
    }

    rclick_core::element_kind!(observe);
}
