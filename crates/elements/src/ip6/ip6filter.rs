//! # IP6Filter
//!
//! Filters IPv6 packets by their contents.
//!
//! ## Synopsis
//! `IP6Filter(ACTION_1 PATTERN_1, ..., ACTION_N PATTERN_N)`
//!
//! ## Ports and processing
//! One push input; any number of push outputs (`1/-`).
//!
//! ## Description
//! rclick's (Click 2.1 has none; the IPv6 elements report's name). The
//! IPv6 twin of IPFilter: each packet, an IPv6 packet with its network
//! header set, goes through the rules in order; the first whose PATTERN
//! matches decides: ACTION `allow` sends it to output 0, `deny` or `drop`
//! drops it, a number N sends it to output N. Packets no rule matches are
//! dropped.
//!
//! Patterns are IP6Classifier's (see there): `src net 2001:db8::/32`,
//! `tcp dst port 80`, `icmp6 type echo-request`, `ip6 nxt 0`, `hlim < 2`,
//! `dscp 46`, `ip6 flow 0x12345`, combined with `and`, `or`, `not` and
//! parentheses. Transport tests look past the extension headers.
//! Patterns compile to IPFilter's decision programs and bit-vector
//! segments; matching allocates nothing.
//!
//! ## Keywords
//! None: every argument is a rule.
//!
//! ## Handlers
//! - `program` (read): the compiled program (IPClassifier's form; IP
//!   header words at 256 + offset, where bytes 40 and 41 are the
//!   upper-layer protocol and the flags, transport words at 512 +
//!   offset).
//!
//! ## Example
//! ```click
//! f :: IP6Filter(allow src net 2001:db8::/32 && tcp dst port 22,
//!                allow icmp6, deny all);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Classify;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::ip6filter_compile::{ip6_headers, parse_classifier6, parse_filter6, SYN_LEN};
use crate::ip::ipfilter_compile::{CompileOptions, Compiled};
use crate::standard::classifier::one_pattern_per_output;

/// IP6Filter, and IP6Classifier (pattern N to output N).
#[derive(Default)]
pub struct IP6Filter {
    prog: Compiled,
    per_output: bool,
}

impl IP6Filter {
    /// An IP6Classifier.
    pub fn classifier() -> Self {
        IP6Filter {
            prog: Compiled::default(),
            per_output: true,
        }
    }

    /// The compiled rules.
    pub fn compiled(&self) -> &Compiled {
        &self.prog
    }
}

const HANDLERS: &[Handler<IP6Filter>] = &[Handler::read("program", |e, _| e.prog.unparse())];

impl Classify for IP6Filter {
    #[inline]
    fn classify(&mut self, p: &Packet, _ctx: &mut Ctx) -> Option<usize> {
        let mut buf = [0u8; SYN_LEN];
        let (ip, tp) = ip6_headers(p, &mut buf);
        self.prog.classify(ip, tp)
    }
}

rclick_core::element_class!(IP6Filter);

impl Element for IP6Filter {
    rclick_core::element_kind!(classify);
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let rules = if self.per_output {
            let pats = one_pattern_per_output(conf, ctx)?;
            parse_classifier6(&pats, Some(ctx))?
        } else {
            let mut args = Args::new(conf);
            let rules = args.take_rest();
            args.complete()?;
            parse_filter6(&rules, ctx.noutputs(), Some(ctx))?
        };
        self.prog = Compiled::new(&rules, CompileOptions::default());
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }
}
