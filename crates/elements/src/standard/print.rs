//! # Print
//!
//! Prints packet contents on standard error.
//!
//! ## Synopsis
//! `Print([LABEL, MAXLENGTH, *keywords*])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prints one line per packet, then passes the packet on unchanged. The
//! line is `LABEL: ` (if LABEL is not empty), then `TIMESTAMP: ` (with
//! TIMESTAMP true), then the packet length right-aligned in 4 columns; with
//! HEADROOM, ` (hH tT)`; with PRINTANNO, ` | ` and the annotation bytes in
//! hex; then, unless CONTENTS is NONE, ` | ` and the first MAXLENGTH bytes:
//! in hex, grouped by 4 bytes (`00010203 04050607`), or as ASCII, each
//! group of 8 characters preceded by a space and unprintable bytes shown as
//! `.`.
//!
//! ## Keywords
//! - **LABEL** (string): label printed first. Default empty.
//! - **MAXLENGTH** (integer): bytes of contents to print; negative means
//!   all. Default 24. `LENGTH` and `NBYTES` are deprecated synonyms.
//! - **CONTENTS** (word): `HEX` (default), `ASCII`, `NONE`, or a boolean
//!   (true = HEX).
//! - **TIMESTAMP** (boolean): print the timestamp annotation. Default false.
//! - **PRINTANNO** (boolean): print the annotation area. Default false.
//! - **HEADROOM** (boolean): print headroom and tailroom. Default false.
//! - **ACTIVE** (boolean): print at all. Default true.
//!
//! ## Handlers
//! - `active` (read/write): the ACTIVE setting.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 2, STOP true) -> Print(in, 8) -> Discard;
//! ```
//! prints `in:   69 | 52616e64 6f6d2062` twice.

use rclick_core::conf::{parse_bool, Args};
use rclick_core::element::{hflags, DataValue, SimpleAction};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contents {
    None,
    Hex,
    Ascii,
}

pub struct Print {
    label: String,
    max: i64,
    contents: Contents,
    timestamp: bool,
    print_anno: bool,
    headroom: bool,
    active: bool,
}

impl Default for Print {
    fn default() -> Self {
        Print {
            label: String::new(),
            max: 24,
            contents: Contents::Hex,
            timestamp: false,
            print_anno: false,
            headroom: false,
            active: true,
        }
    }
}

impl Print {
    /// The line Print writes for `p`.
    pub fn format(&self, p: &Packet) -> String {
        use std::fmt::Write as _;
        let mut s = String::with_capacity(64);
        let mut sep = "";
        if !self.label.is_empty() {
            s.push_str(&self.label);
            sep = ": ";
        }
        if self.timestamp {
            let _ = write!(s, "{sep}{}", p.timestamp_anno());
            sep = ": ";
        }
        let _ = write!(s, "{sep}{:4}", p.len());
        if self.headroom {
            let _ = write!(s, " (h{} t{})", p.headroom(), p.tailroom());
        }
        if self.print_anno {
            s.push_str(" | ");
            for b in p.anno() {
                let _ = write!(s, "{b:02x}");
            }
        }
        let mut n = if self.contents == Contents::None {
            0
        } else {
            self.max
        };
        if n < 0 || p.len() < n as usize {
            n = p.len() as i64;
        }
        if n > 0 {
            s.push_str(" | ");
            let data = &p.data()[..n as usize];
            for (i, &b) in data.iter().enumerate() {
                if self.contents == Contents::Hex {
                    if i > 0 && i % 4 == 0 {
                        s.push(' ');
                    }
                    let _ = write!(s, "{b:02x}");
                } else {
                    if i % 8 == 0 {
                        s.push(' ');
                    }
                    s.push(if (32..=126).contains(&b) {
                        b as char
                    } else {
                        '.'
                    });
                }
            }
        }
        s
    }
}

/// The `active` checkbox of the printing elements (Print, IPPrint,
/// ARPPrint, ...): whether they print.
pub const fn active_handler<E>(
    field: fn(&E) -> &dyn DataValue,
    field_mut: fn(&mut E) -> &mut dyn DataValue,
) -> Handler<E> {
    Handler::flagged(
        hflags::CHECKBOX,
        Handler::data_rw("active", field, field_mut),
    )
}

const HANDLERS: &[Handler<Print>] = &[active_handler(|e| &e.active, |e| &mut e.active)];

impl SimpleAction for Print {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        if self.active {
            ctx.chatter(&self.format(&p));
        }
        Some(p)
    }
}

rclick_core::element_class!(Print);

impl Element for Print {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let label = args.read_p::<String>("LABEL").unwrap_or_default();
        let mut max = args.read_p_or("MAXLENGTH", 24i64);
        if let Some(v) = args.read::<i64>("LENGTH") {
            max = v;
        }
        if let Some(v) = args.read::<i64>("NBYTES") {
            max = v;
        }
        let contents = args.read::<String>("CONTENTS");
        let timestamp = args.read_or("TIMESTAMP", false);
        let print_anno = args.read_or("PRINTANNO", false);
        let active = args.read_or("ACTIVE", true);
        let headroom = args.read_or("HEADROOM", false);
        args.complete()?;
        let contents = match contents {
            None => Contents::Hex,
            Some(c) => match parse_bool(&c) {
                Ok(true) => Contents::Hex,
                Ok(false) => Contents::None,
                Err(_) => match c.to_ascii_uppercase().as_str() {
                    "NONE" => Contents::None,
                    "HEX" => Contents::Hex,
                    "ASCII" => Contents::Ascii,
                    _ => {
                        return Err(format!(
                            "bad contents value '{}'; should be 'NONE', 'HEX', or 'ASCII'",
                            c.to_ascii_uppercase()
                        )
                        .into())
                    }
                },
            },
        };
        *self = Print {
            label,
            max,
            contents,
            timestamp,
            print_anno,
            headroom,
            active,
        };
        Ok(())
    }
}
