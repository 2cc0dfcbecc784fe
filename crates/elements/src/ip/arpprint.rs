//! # ARPPrint
//!
//! Prints ARP packets in a tcpdump-like format.
//!
//! ## Synopsis
//! `ARPPrint([LABEL, *keywords* TIMESTAMP, ETHER, ACTIVE, OUTFILE])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output. Processing `a/a`.
//!
//! ## Description
//! Prints a line for each packet and passes it on unchanged. The ARP
//! header is found at the network header when it is set; otherwise, when
//! the packet starts with an Ethernet header of type 0x0806 it is found
//! after that header, else at the start of the data (Click prints only
//! packets whose network header is set). Lines look like
//!
//! `LABEL: TIMESTAMP: arp who-has 10.0.0.2 tell 10.0.0.1`
//! `LABEL: TIMESTAMP: arp reply 10.0.0.2 is-at 00-01-02-03-04-05`
//!
//! with `(ETH)` after a who-has target when the request names a target
//! hardware address, `rarp` and `invarp` forms for operations 3, 4, 8 and
//! 9, `arp-#N` for others, `truncated-arp (LEN)` for short packets, and a
//! `arp-#OP for proto #P (PLEN) hardware #H (HLEN)` line for non-IPv4
//! ARP. With ETHER, `SRC > DST: ` (Ethernet addresses) precedes the ARP
//! text when an Ethernet header precedes the ARP header.
//!
//! ## Keywords
//! - **LABEL** (string): prefix of each line. Default none.
//! - **TIMESTAMP** (boolean): print the timestamp annotation. Default true.
//! - **ETHER** (boolean): print Ethernet addresses. Default false.
//! - **ACTIVE** (boolean): print at all. Default true.
//! - **OUTFILE** (file name): append lines to this file instead of the
//!   chatter channel.
//!
//! ## Handlers
//! - `active` (read/write): whether to print.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> c :: Classifier(12/0806, -);
//! c[0] -> ARPPrint(in, ETHER true) -> Discard;
//! ```

use std::fs::File;
use std::io::Write;

use rclick_core::conf::{parse_bool, parse_string, Args};
use rclick_core::element::Observe;
use rclick_core::wire::arp::{
    ArpPacket, ARPHRD_ETHER, ARPOP_INVREPLY, ARPOP_INVREQUEST, ARPOP_REPLY, ARPOP_REQUEST,
    ARPOP_REVREPLY, ARPOP_REVREQUEST, ARP_LEN,
};
use rclick_core::wire::ether::{EtherFrame, ETHERTYPE_ARP, ETHERTYPE_IP, HEADER_LEN};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

const ETHERTYPE_TRAIL: u16 = 0x1000;
/// The fixed ARP header (hardware, protocol, lengths, operation).
const ARP_FIXED: usize = 8;

pub struct ARPPrint {
    label: String,
    timestamp: bool,
    ether: bool,
    active: bool,
    outfile: Option<String>,
    out: Option<File>,
}

impl Default for ARPPrint {
    fn default() -> Self {
        ARPPrint {
            label: String::new(),
            timestamp: true,
            ether: false,
            active: true,
            outfile: None,
            out: None,
        }
    }
}

/// The ARP text for `arp` (bytes from the ARP header on).
pub fn arp_text(arp: &[u8]) -> String {
    if arp.len() < ARP_FIXED {
        return format!("truncated-arp ({})", arp.len());
    }
    // The fixed fields are there; the addresses may not be.
    let fixed = ArpPacket::new_unchecked(arp);
    let (hrd, pro, op) = (fixed.hardware(), fixed.protocol(), fixed.op());
    let (hln, pln) = (fixed.hardware_len(), fixed.protocol_len());
    if (pro != ETHERTYPE_IP && pro != ETHERTYPE_TRAIL) || pln != 4 || hln == 0 {
        return format!("arp-#{op} for proto #{pro} ({pln}) hardware #{hrd} ({hln})");
    }
    let Ok(a) = ArpPacket::new_checked(arp) else {
        return format!("truncated-arp ({})", arp.len());
    };
    let mut s = String::new();
    if pro == ETHERTYPE_TRAIL {
        s.push_str("trailer-");
    }
    match op {
        ARPOP_REQUEST => {
            s.push_str(&format!("arp who-has {}", a.tpa()));
            // Compare the first hln bytes of the target hardware address.
            let n = (hln as usize).min(6);
            if a.tha().0[..n].iter().any(|&b| b != 0) {
                s.push_str(&format!(" ({})", a.tha()));
            }
            s.push_str(&format!(" tell {}", a.spa()));
        }
        ARPOP_REPLY => s.push_str(&format!("arp reply {} is-at {}", a.spa(), a.sha())),
        ARPOP_REVREQUEST => s.push_str(&format!("rarp who-is {} tell {}", a.tha(), a.sha())),
        ARPOP_REVREPLY => s.push_str(&format!("rarp reply {} at {}", a.tha(), a.tpa())),
        ARPOP_INVREQUEST => s.push_str(&format!("invarp who-is {} tell {}", a.tha(), a.sha())),
        ARPOP_INVREPLY => s.push_str(&format!("invarp reply {} at {}", a.tha(), a.tpa())),
        _ => s.push_str(&format!("arp-#{op}")),
    }
    if hrd != ARPHRD_ETHER {
        s.push_str(&format!("hardware #{hrd}"));
    }
    s
}

impl ARPPrint {
    fn line(&self, p: &Packet) -> String {
        let d = p.data();
        let (arp_off, eth_off) = match p.network_offset() {
            Some(o) if o >= 0 && (o as usize) <= d.len() => {
                let o = o as usize;
                (o, (o >= HEADER_LEN).then_some(0))
            }
            _ => match EtherFrame::new_checked(d) {
                Ok(e) if e.ethertype() == ETHERTYPE_ARP => (HEADER_LEN, Some(0)),
                _ => (0, None),
            },
        };
        let mut s = String::new();
        if !self.label.is_empty() {
            s.push_str(&self.label);
            s.push_str(": ");
        }
        if self.timestamp {
            s.push_str(&format!("{}: ", p.timestamp_anno()));
        }
        if self.ether {
            if let Some(eo) = eth_off {
                if let Ok(e) = EtherFrame::new_checked(&d[eo..]) {
                    s.push_str(&format!("{} > {}: ", e.src(), e.dst()));
                }
            }
        }
        let arp = &d[arp_off..];
        if arp.len() < ARP_LEN && arp.len() >= ARP_FIXED {
            // Click checks the whole Ethernet/IPv4 ARP length.
            s.push_str(&format!("truncated-arp ({})", arp.len()));
        } else {
            s.push_str(&arp_text(arp));
        }
        s
    }
}

impl Observe for ARPPrint {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    fn observe(&mut self, p: &Packet, ctx: &mut Ctx) {
        if !self.active {
            return;
        }
        let line = self.line(p);
        match self.out.as_mut() {
            Some(f) => {
                let _ = writeln!(f, "{line}");
            }
            None => ctx.chatter(&line),
        }
    }
}

const HANDLERS: &[Handler<ARPPrint>] =
    &[Handler::data_rw("active", |e| &e.active, |e| &mut e.active)];

rclick_core::element_class!(ARPPrint);

impl Element for ARPPrint {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let label = args.read_p_or_with("LABEL", parse_string, String::new());
        let ts = args.read_or_with("TIMESTAMP", parse_bool, true);
        let ether = args.read_or_with("ETHER", parse_bool, false);
        let active = args.read_or_with("ACTIVE", parse_bool, true);
        let outfile = args.read_with("OUTFILE", parse_string);
        args.complete()?;
        self.label = label;
        self.timestamp = ts;
        self.ether = ether;
        self.active = active;
        self.outfile = outfile;
        Ok(())
    }

    fn initialize(&mut self, _ctx: &mut InitCtx) -> ConfigResult {
        if let Some(name) = &self.outfile {
            let f = File::create(name).map_err(|e| format!("{name}: {e}"))?;
            self.out = Some(f);
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        if let Some(f) = self.out.as_mut() {
            let _ = f.flush();
        }
        self.out = None;
    }

    rclick_core::handlers!(HANDLERS);
    rclick_core::element_kind!(observe);
}
