//! # IPFilter
//!
//! Filters IP packets by contents, with tcpdump-like patterns.
//!
//! ## Synopsis
//! `IPFilter(ACTION1 PATTERN1, ..., ACTIONN PATTERNN)`
//!
//! ## Ports and processing
//! One push input; any number of push outputs.
//!
//! ## Description
//! Each argument is an ACTION followed by a PATTERN in IPClassifier's
//! syntax (see IPClassifier). Packets are tested against the patterns in
//! order; the first pattern that matches decides the packet's fate by its
//! ACTION: `allow` sends it to output 0; a number N sends it to output N;
//! `drop` (or `deny`) drops it. Packets that match no pattern are dropped.
//! An ACTION with no pattern matches every packet.
//!
//! Input packets must have their IP header annotation set; CheckIPHeader
//! and MarkIPHeader do this.
//!
//! Patterns may test Ethernet addresses: `ether src ETH`, `ether dst ETH`,
//! `ether host ETH` (or `[SRCORDST] ether host ETH`), where ETH is an
//! Ethernet address or an AddressInfo name. They read the 14 bytes before
//! the IP header, such as the header Strip(14) left in the headroom; a
//! packet without them fails the test (see IPClassifier).
//!
//! `deny` used to mean output 1 when the element had two or more outputs;
//! now it means `drop`, and a warning is printed if the element has more
//! than one output, as in Click.
//!
//! Long runs of rules that are conjunctions of per-field ranges (ACL-style
//! rules: addresses, prefixes, port ranges, protocols) are matched with
//! per-field bit vectors, so 10,000-rule filters stay fast; other rules
//! compile to a decision program as in IPClassifier. Memory grows in
//! proportion to the rules: the bit vectors are compressed where that
//! pays, and a run whose vectors would exceed a budget (1 MiB plus 512
//! bytes per rule) is split into runs searched in order. 100,000 rules
//! `allow src host X and dst port P` compile in about half a second into
//! 30 MiB.
//!
//! ## Keywords
//! None: every argument is an action and a pattern.
//!
//! On a packet too short for a field, a test of the field fails, and so
//! does a negated relation (`port != 80`, `port < 1024`); a `not` in the
//! pattern turns the failure into a match (`not port 80` matches a packet
//! cut before its ports), as in Click.
//!
//! ## Handlers
//! - `program` (read): Click's program for the rules, as Click 2.1 lists
//!   it (see IPClassifier). Not past 5,000 tests in Click's program
//!   (about 1,000 rules of `src host X and dst port P`; Click's
//!   optimizer, which the listing follows, takes time and memory
//!   quadratic in the tests: 1.4 GB for 9,999 such rules); it then says
//!   so in one line.
//!
//! ## Example
//! ```click
//! f :: IPFilter(drop src net 10.0.0.0/8,
//!               drop ether src 00:00:5e:00:53:01,
//!               allow dst tcp port www && syn,
//!               allow icmp type echo,
//!               1 dst tcp port > 1023,
//!               drop all);
//! f[0] -> ok :: Discard; f[1] -> high :: Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Classify;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::ipfilter_compile::{
    click_listing, click_reachable_outputs, parse_classifier, parse_filter, ClickProgram,
    CompileOptions, Compiled, CtxNames, CLICK_LISTING_MAX_TESTS,
};
use crate::standard::classifier::one_pattern_per_output;

/// IPFilter, and IPClassifier, which is IPFilter with pattern N sending to
/// output N (in Click, IPClassifier is an IPFilter subclass that only
/// parses its arguments differently).
#[derive(Default)]
pub struct IPFilter {
    prog: Compiled,
    /// Click's program for each rule, for the `program` handler; not kept
    /// past [`CLICK_LISTING_MAX_TESTS`] tests.
    click: Vec<ClickProgram>,
    /// The rule count when the programs were not kept (else 0).
    unlisted_rules: usize,
    /// IPClassifier: one pattern per output, without actions.
    per_output: bool,
}

impl IPFilter {
    /// An IPClassifier.
    pub fn classifier() -> Self {
        IPFilter {
            prog: Compiled::default(),
            click: Vec::new(),
            unlisted_rules: 0,
            per_output: true,
        }
    }

    /// The compiled filter (one that drops everything before
    /// configuration).
    pub fn compiled(&self) -> Option<&Compiled> {
        Some(&self.prog)
    }
}

const HANDLERS: &[Handler<IPFilter>] = &[Handler::read("program", |e, _| match e.unlisted_rules {
    0 => click_listing(&e.click),
    n => format!(
        "no listing for these {n} rules (Click's program for them has more than \
         {CLICK_LISTING_MAX_TESTS} tests; Click's optimizer takes time and memory quadratic \
         in the tests)\n"
    ),
})];

impl Classify for IPFilter {
    #[inline]
    fn classify(&mut self, p: &Packet, _ctx: &mut Ctx) -> Option<usize> {
        self.prog.classify_packet(p)
    }
}

rclick_core::element_class!(IPFilter);

impl Element for IPFilter {
    rclick_core::element_kind!(classify);
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let parsed = if self.per_output {
            parse_classifier(&one_pattern_per_output(conf, ctx)?, &CtxNames(ctx))?
        } else {
            let mut args = Args::new(conf);
            let rules = args.take_rest();
            args.complete()?;
            parse_filter(&rules, ctx.noutputs(), &CtxNames(ctx))?
        };
        for (pattern, w) in &parsed.warnings {
            ctx.warning_in(format_args!("pattern {pattern}"), w);
        }
        // Click's IPClassifier (not IPFilter) warns of outputs its program
        // never reaches. Past the listing's bound there is no Click
        // program to ask, and no warning.
        if self.per_output && !parsed.click_unlisted {
            let reached = click_reachable_outputs(&parsed.click, ctx.noutputs());
            for (output, _) in reached.iter().enumerate().filter(|(_, r)| !**r) {
                ctx.warning(format_args!("output {output} matches no packets"));
            }
        }
        self.prog = Compiled::new(&parsed.rules, CompileOptions::default());
        (self.click, self.unlisted_rules) = if parsed.click_unlisted {
            (Vec::new(), parsed.rules.len())
        } else {
            (parsed.click, 0)
        };
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }
}
