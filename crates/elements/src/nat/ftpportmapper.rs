//! # FTPPortMapper
//!
//! Rewrites the address of FTP PORT commands and makes the data
//! connection's mapping (active FTP through a NAT).
//!
//! ## Synopsis
//! `FTPPortMapper(CONTROL_REWRITER, DATA_REWRITER, DATA_REWRITER_INPUT)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IP packets of FTP control connections on their way into
//! CONTROL_REWRITER (a TCPRewriter or IPRewriter). A TCP segment whose
//! payload is a `PORT h1,h2,h3,h4,p1,p2` command, on a connection
//! CONTROL_REWRITER has a mapping for, gets a mapping in DATA_REWRITER for
//! the data connection the server will open (from the control connection's
//! destination port minus one to the PORT address), made by
//! DATA_REWRITER_INPUT's input spec. The command is rewritten to name the
//! data mapping's outside address and port, the packet's lengths and
//! checksums are fixed, and CONTROL_REWRITER is told how much the segment
//! grew or shrank, so that it moves later sequence numbers of that
//! direction, and the other direction's acknowledgements and SACK blocks,
//! by the difference.
//!
//! Other packets pass unchanged. Packets that are not IPv4 are dropped and
//! counted in `drops`.
//!
//! ## Handlers
//! - `drops` (read, rclick): packets dropped as not IPv4.
//!
//! ## Example
//! ```click
//! IPRewriterPatterns(to_world 1.0.0.1 1024-65535# - -);
//! rw :: TCPRewriter(pattern to_world 0 1, drop);
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader
//!   -> IPClassifier(tcp dst port 21) -> FTPPortMapper(rw, rw, 0) -> [0]rw;
//! ```

use rclick_core::conf::{parse_usize, Args};
use rclick_core::wire::{Ipv4Header, TcpHeader};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::rewriter::Rewriter;
use super::rewriter_base::{ip_info, jiffies, FlowId, IpInfo, IP_PROTO_TCP};

#[derive(Default)]
pub struct FTPPortMapper {
    control: usize,
    data: usize,
    data_input: usize,
    drops: u64,
}

const HANDLERS: &[Handler<FTPPortMapper>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(FTPPortMapper);

/// Parses `PORT h1,h2,h3,h4,p1,p2`: the address, the port and the length
/// of the command up to the end of the numbers.
fn parse_port_command(payload: &[u8]) -> Option<(u32, u16, usize)> {
    let rest = payload.strip_prefix(b"PORT")?;
    let mut i = 4 + rest.iter().take_while(|&&b| b == b' ').count();
    if i == 4 {
        return None;
    }
    let mut nums = [0u32; 6];
    for (k, n) in nums.iter_mut().enumerate() {
        if k > 0 {
            if payload.get(i) != Some(&b',') {
                return None;
            }
            i += 1;
        }
        let start = i;
        while let Some(d) = payload.get(i).filter(|b| b.is_ascii_digit()) {
            *n = *n * 10 + u32::from(d - b'0');
            if *n > 255 {
                return None;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let addr = (nums[0] << 24) | (nums[1] << 16) | (nums[2] << 8) | nums[3];
    Some((addr, ((nums[4] << 8) | nums[5]) as u16, i))
}

impl FTPPortMapper {
    fn with_rewriter<R>(ctx: &Ctx, idx: usize, f: impl FnOnce(&Rewriter) -> R) -> Option<R> {
        ctx.with_element_mut(idx, |e| e.as_any().downcast_ref::<Rewriter>().map(f))
            .flatten()
    }

    fn map_port(&mut self, mut p: Packet, info: &IpInfo, ctx: &Ctx) -> Packet {
        let (payload_start, payload_end, seq, sport, dport) = {
            let Some(Ok(t)) = p.data().get(info.l4_off..).map(TcpHeader::new_checked) else {
                return p;
            };
            let Ok(ip) = Ipv4Header::new_checked(&p.data()[info.ip_off..]) else {
                return p;
            };
            let start = info.l4_off + t.header_len();
            let end = (info.ip_off + ip.total_len() as usize).min(p.len());
            if end <= start {
                return p;
            }
            (start, end, t.seq(), t.src_port(), t.dst_port())
        };
        let Some((addr, port, cmd_len)) = parse_port_command(&p.data()[payload_start..payload_end])
        else {
            return p;
        };
        let now = jiffies(ctx);
        let flow = FlowId::new(info.saddr, sport, info.daddr, dport);
        let Some(Some(_)) =
            Self::with_rewriter(ctx, self.control, |rw| rw.tcp_entry(&flow, None, now))
        else {
            return p;
        };
        let data_flow = FlowId::new(addr, port, info.daddr, dport.wrapping_sub(1));
        let input = self.data_input;
        let Some(Some((_, _, r))) = Self::with_rewriter(ctx, self.data, |rw| {
            rw.tcp_entry(&data_flow, Some(input), now)
        }) else {
            return p;
        };
        let a = r.saddr.to_be_bytes();
        let text = format!(
            "PORT {},{},{},{},{},{}",
            a[0],
            a[1],
            a[2],
            a[3],
            r.sport >> 8,
            r.sport & 0xff
        );
        let old_len = payload_end - payload_start;
        let cmd_end = payload_start + cmd_len;
        // The new segment: the command replaced, the rest of the payload
        // and anything after the IP packet kept.
        let mut bytes = Vec::with_capacity(p.len() + text.len());
        bytes.extend_from_slice(&p.data()[..payload_start]);
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend_from_slice(&p.data()[cmd_end..]);
        let new_len = old_len + text.len() - cmd_len;
        let diff = new_len as i64 - old_len as i64;
        let mut q = Packet::from_slice(&bytes);
        q.copy_annotations(&p);
        q.set_network_header(info.ip_off, info.l4_off - info.ip_off);
        {
            let data = q.writable();
            if let Ok(mut ip) = Ipv4Header::new_checked(&mut data[info.ip_off..]) {
                let total = (ip.total_len() as i64 + diff).clamp(0, 65535) as u16;
                ip.set_total_len(total);
                ip.fill_checksum();
            }
            let seg_end = (payload_end as i64 + diff) as usize;
            if let Some(Ok(mut t)) = data
                .get_mut(info.l4_off..seg_end)
                .map(TcpHeader::new_checked)
            {
                let (s, d) = (
                    std::net::Ipv4Addr::from(info.saddr),
                    std::net::Ipv4Addr::from(info.daddr),
                );
                t.fill_checksum(s, d);
            }
        }
        if diff != 0 {
            let trigger = seq.wrapping_add(old_len as u32);
            // Looked up again: in a table at its capacity the data mapping
            // may have taken the control connection's place, leaving its
            // slot free or to another flow. Then there is no connection
            // for the delta to go with.
            Self::with_rewriter(ctx, self.control, |rw| {
                if let Some((f, dir, _)) = rw.tcp_entry(&flow, None, now) {
                    rw.update_seqno_delta(f, dir, trigger, diff as i32);
                }
            });
        }
        p = q;
        p
    }
}

impl SimpleAction for FTPPortMapper {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let Some(info) = ip_info(&p) else {
            self.drops += 1;
            return None;
        };
        if info.proto != IP_PROTO_TCP || !info.first_frag {
            return Some(p);
        }
        Some(self.map_port(p, &info, ctx))
    }
}

impl Element for FTPPortMapper {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure_phase(&self) -> i32 {
        // After the rewriters, as Click's CONFIGURE_PHASE_USER.
        rclick_core::element::configure_phase::DEFAULT + 1
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let control: String = args.read_mp("CONTROL_REWRITER");
        let data: String = args.read_mp("DATA_REWRITER");
        let input: usize = args.read_mp_with("DATA_REWRITER_INPUT", parse_usize);
        args.complete()?;
        let find = |name: &str, what: &str| -> Result<usize, String> {
            let i = ctx
                .find_element(name)
                .ok_or_else(|| format!("{what}: no element named '{name}'"))?;
            let ok = ctx
                .with_element(i, |e| e.as_any().is::<Rewriter>())
                .unwrap_or(false);
            if ok {
                Ok(i)
            } else {
                Err(format!("{what}: '{name}' is not a TCP rewriter"))
            }
        };
        let control = find(&control, "CONTROL_REWRITER")?;
        let data = find(&data, "DATA_REWRITER")?;
        let ninputs = ctx
            .with_element(data, |e| {
                e.as_any()
                    .downcast_ref::<Rewriter>()
                    .map_or(0, |r| r.specs.len())
            })
            .unwrap_or(0);
        if ninputs != 0 && input >= ninputs {
            return Err("DATA_REWRITER_INPUT out of range".into());
        }
        self.control = control;
        self.data = data;
        self.data_input = input;
        Ok(())
    }
}
