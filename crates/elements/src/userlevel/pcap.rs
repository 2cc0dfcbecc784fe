//! Reading and writing packet trace files: pcap (both byte orders,
//! microsecond and nanosecond timestamps, the "modified" Linux variant) and
//! pcapng (read only). Used by FromDump and ToDump.
//!
//! The reader keeps one record buffer and reuses it, so reading allocates
//! nothing per packet. It never panics on bad input: a malformed or
//! truncated file yields an error message and reading stops.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};

use rclick_core::Timestamp;

/// Link types (pcap file values).
pub mod dlt {
    pub const NULL: u32 = 0;
    pub const ETHER: u32 = 1;
    pub const PPP: u32 = 9;
    pub const FDDI: u32 = 10;
    /// Raw IP as some hosts write it.
    pub const HOST_RAW: u32 = 12;
    pub const HOST_RAW_OPENBSD: u32 = 14;
    pub const PPP_HDLC: u32 = 50;
    pub const ATM_RFC1483: u32 = 100;
    /// Raw IP (canonical).
    pub const RAW: u32 = 101;
    pub const C_HDLC: u32 = 104;
    pub const IEEE802_11: u32 = 105;
    pub const LINUX_SLL: u32 = 113;
    pub const PRISM: u32 = 119;
    pub const AIRONET: u32 = 120;
    pub const SUNATM: u32 = 123;
    pub const IEEE802_11_RADIO: u32 = 127;
    pub const IPV4: u32 = 228;
}

/// Maps host-specific link types to canonical ones (raw IP variants to
/// [`dlt::RAW`]).
pub fn canonical_linktype(lt: u32) -> u32 {
    match lt {
        dlt::HOST_RAW | dlt::HOST_RAW_OPENBSD | dlt::IPV4 => dlt::RAW,
        x => x,
    }
}

/// Click's encapsulation names.
pub fn unparse_linktype(lt: u32) -> &'static str {
    match canonical_linktype(lt) {
        dlt::NULL => "NULL",
        dlt::ETHER => "ETHER",
        dlt::PPP => "PPP",
        dlt::FDDI => "FDDI",
        dlt::PPP_HDLC => "PPP_HDLC",
        dlt::ATM_RFC1483 => "ATM",
        dlt::RAW => "IP",
        dlt::C_HDLC => "HDLC",
        dlt::IEEE802_11 => "802_11",
        dlt::LINUX_SLL => "SLL",
        dlt::PRISM => "PRISM",
        dlt::AIRONET => "AIRONET",
        dlt::SUNATM => "SUNATM",
        dlt::IEEE802_11_RADIO => "802_11_RADIO",
        _ => "??",
    }
}

/// Parses an encapsulation name (`ETHER`, `IP`, ...).
pub fn parse_linktype(s: &str) -> Option<u32> {
    Some(match s {
        "NULL" => dlt::NULL,
        "ETHER" => dlt::ETHER,
        "PPP" => dlt::PPP,
        "FDDI" => dlt::FDDI,
        "PPP_HDLC" => dlt::PPP_HDLC,
        "ATM" | "RFC1483" | "ATM-RFC1483" => dlt::ATM_RFC1483,
        "IP" => dlt::RAW,
        "HDLC" => dlt::C_HDLC,
        "802_11" => dlt::IEEE802_11,
        "SLL" => dlt::LINUX_SLL,
        "PRISM" => dlt::PRISM,
        "AIRONET" => dlt::AIRONET,
        "SUNATM" => dlt::SUNATM,
        "802_11_RADIO" => dlt::IEEE802_11_RADIO,
        _ => return None,
    })
}

const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
const PCAP_MAGIC_NANO: u32 = 0xa1b2_3c4d;
const PCAP_MAGIC_MODIFIED: u32 = 0xa1b2_cd34;
const PCAPNG_SHB: u32 = 0x0a0d_0d0a;
const PCAPNG_BOM: u32 = 0x1a2b_3c4d;
const PCAP_HEADER_LEN: u64 = 24;

/// Largest captured length accepted for one packet.
pub const MAX_CAPLEN: u32 = 262_144;
/// Largest pcapng block accepted.
const MAX_BLOCK: u32 = 16 << 20;

/// One packet read from a trace. `data` is valid until the next read.
#[derive(Debug)]
pub struct Record<'a> {
    pub ts: Timestamp,
    /// Length on the wire.
    pub len: u32,
    /// Captured bytes (at most `len`).
    pub data: &'a [u8],
    /// Link type of the interface it was captured on.
    pub linktype: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Pcap,
    PcapNg,
}

#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: u32,
    /// Timestamp resolution: `Dec(n)` = 10^-n s, `Bin(n)` = 2^-n s.
    tsresol: Resol,
    /// Seconds added to every timestamp.
    tsoffset: i64,
}

#[derive(Clone, Copy, Debug)]
enum Resol {
    Dec(u32),
    Bin(u32),
}

impl Resol {
    fn to_timestamp(self, units: u64) -> Timestamp {
        let ns: i128 = match self {
            Resol::Dec(n) if n <= 9 => units as i128 * 10i128.pow(9 - n),
            Resol::Dec(n) => units as i128 / 10i128.pow((n - 9).min(30)),
            Resol::Bin(n) => ((units as u128 * 1_000_000_000u128) >> n.min(127)) as i128,
        };
        Timestamp(ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
    }
}

/// A trace file reader.
pub struct DumpReader {
    src: BufReader<Box<dyn Read + Send>>,
    buf: Vec<u8>,
    format: Format,
    swapped: bool,
    nano: bool,
    /// Extra bytes after each pcap record header (modified pcap).
    extra_header: usize,
    minor_version: u16,
    linktype: u32,
    interfaces: Vec<Interface>,
    /// Bytes consumed so far.
    pos: u64,
    /// File position of the last record returned.
    record_pos: u64,
    /// Where the last record's data lies in `buf`.
    last: std::ops::Range<usize>,
    /// A pcapng block read ahead (while looking for the first interface).
    pending_block: Option<u32>,
}

/// What reading a chunk gave: all of it, nothing (clean end), or part.
enum Fill {
    Full,
    Eof,
    Partial,
}

impl DumpReader {
    /// Opens `path` (`-` for standard input) and reads the file header.
    pub fn open(path: &str) -> Result<DumpReader, String> {
        let src: Box<dyn Read + Send> = if path == "-" {
            Box::new(io::stdin())
        } else {
            Box::new(File::open(path).map_err(|e| format!("{path}: {}", strerror(&e)))?)
        };
        DumpReader::new(src).map_err(|e| format!("{path}: {e}"))
    }

    /// Reads the file header from `src`.
    pub fn new(src: Box<dyn Read + Send>) -> Result<DumpReader, String> {
        let mut r = DumpReader {
            src: BufReader::with_capacity(1 << 16, src),
            buf: Vec::with_capacity(4096),
            format: Format::Pcap,
            swapped: false,
            nano: false,
            extra_header: 0,
            minor_version: 4,
            linktype: dlt::ETHER,
            interfaces: Vec::new(),
            pos: 0,
            record_pos: 0,
            last: 0..0,
            pending_block: None,
        };
        let mut hdr = [0u8; 24];
        match r.fill(&mut hdr[..4]) {
            Fill::Full => {}
            Fill::Eof => return Err("empty file".into()),
            Fill::Partial => return Err("not a tcpdump file (too short)".into()),
        }
        let magic_le = u32::from_le_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
        if magic_le == PCAPNG_SHB {
            r.format = Format::PcapNg;
            r.read_shb_rest([hdr[0], hdr[1], hdr[2], hdr[3]])?;
            // Learn the link type from the first interface block.
            if let Some(b) = r.read_block()? {
                if b == 1 {
                    r.interface_block()?;
                } else {
                    r.pending_block = Some(b);
                }
            }
            return Ok(r);
        }
        if !matches!(r.fill(&mut hdr[4..]), Fill::Full) {
            return Err("not a tcpdump file (too short)".into());
        }
        let (magic, swapped) = {
            let m = u32::from_ne_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
            match m {
                PCAP_MAGIC | PCAP_MAGIC_NANO | PCAP_MAGIC_MODIFIED => (m, false),
                _ => (m.swap_bytes(), true),
            }
        };
        if !matches!(magic, PCAP_MAGIC | PCAP_MAGIC_NANO | PCAP_MAGIC_MODIFIED) {
            if hdr[0] == 0x1f && hdr[1] == 0x8b {
                return Err("not a tcpdump file (compressed files are not supported)".into());
            }
            return Err("not a tcpdump file (bad magic number)".into());
        }
        r.swapped = swapped;
        r.nano = magic == PCAP_MAGIC_NANO;
        r.extra_header = if magic == PCAP_MAGIC_MODIFIED { 8 } else { 0 };
        let major = r.u16(&hdr[4..6]);
        if major != 2 {
            return Err(format!("unknown major version {major}"));
        }
        r.minor_version = r.u16(&hdr[6..8]);
        r.linktype = canonical_linktype(r.u32(&hdr[20..24]));
        Ok(r)
    }

    fn u16(&self, b: &[u8]) -> u16 {
        let v = u16::from_ne_bytes([b[0], b[1]]);
        if self.swapped {
            v.swap_bytes()
        } else {
            v
        }
    }

    fn u32(&self, b: &[u8]) -> u32 {
        let v = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        if self.swapped {
            v.swap_bytes()
        } else {
            v
        }
    }

    /// Reads exactly `out.len()` bytes if possible.
    fn fill(&mut self, out: &mut [u8]) -> Fill {
        let mut got = 0;
        while got < out.len() {
            match self.src.read(&mut out[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.pos += got as u64;
        if got == out.len() {
            Fill::Full
        } else if got == 0 {
            Fill::Eof
        } else {
            Fill::Partial
        }
    }

    /// Reads `n` bytes into the record buffer.
    fn fill_buf(&mut self, n: usize) -> Fill {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.resize(n, 0);
        let r = self.fill(&mut buf);
        self.buf = buf;
        r
    }

    /// Discards `n` bytes; false if the file ended first.
    fn skip(&mut self, n: u64) -> bool {
        match io::copy(&mut (&mut self.src).take(n), &mut io::sink()) {
            Ok(k) => {
                self.pos += k;
                k == n
            }
            Err(_) => false,
        }
    }

    /// The link type of the file (of its first interface for pcapng).
    pub fn linktype(&self) -> u32 {
        self.linktype
    }

    /// Bytes read so far.
    pub fn file_pos(&self) -> u64 {
        self.pos
    }

    /// File position where the last returned record started.
    pub fn record_pos(&self) -> u64 {
        self.record_pos
    }

    /// The data of the last record returned by [`DumpReader::next_record`].
    pub fn last_data(&self) -> &[u8] {
        self.buf.get(self.last.clone()).unwrap_or(&[])
    }

    /// Whether this is a pcapng file.
    pub fn is_pcapng(&self) -> bool {
        self.format == Format::PcapNg
    }

    /// Skips forward to file position `pos` (only forward; records must
    /// start there for the result to make sense, as in Click).
    pub fn skip_to(&mut self, pos: u64) -> Result<(), String> {
        if pos < self.pos {
            return Err(format!(
                "cannot seek backwards to {pos} (position {})",
                self.pos
            ));
        }
        if self.skip(pos - self.pos) {
            Ok(())
        } else {
            Err("seek past end of file".into())
        }
    }

    /// The next packet: `Ok(None)` at a clean end of file, `Err` for a
    /// malformed or truncated file (reading should stop).
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, String> {
        match self.format {
            Format::Pcap => self.next_pcap(),
            Format::PcapNg => self.next_pcapng(),
        }
    }

    /// Reads the `N`-byte header of the next record or block, which starts
    /// there: `None` at a clean end of file, an error naming `what` when
    /// the file ends inside it.
    fn read_header<const N: usize>(&mut self, what: &str) -> Result<Option<[u8; N]>, String> {
        self.record_pos = self.pos;
        let mut h = [0u8; N];
        match self.fill(&mut h) {
            Fill::Full => Ok(Some(h)),
            Fill::Eof => Ok(None),
            Fill::Partial => Err(format!("short {what}")),
        }
    }

    fn next_pcap(&mut self) -> Result<Option<Record<'_>>, String> {
        let Some(h) = self.read_header::<16>("packet header")? else {
            return Ok(None);
        };
        let sec = self.u32(&h[0..4]);
        let frac = self.u32(&h[4..8]);
        let (mut caplen, mut len) = (self.u32(&h[8..12]), self.u32(&h[12..16]));
        // Files at or before version 2.3 may have the fields swapped.
        if self.minor_version < 3 || (self.minor_version == 3 && caplen > len) {
            std::mem::swap(&mut caplen, &mut len);
        }
        if caplen > MAX_CAPLEN {
            return Err("bad packet header; giving up".into());
        }
        // tcptrace writes caplen one too large: read it, keep len bytes.
        let skiplen = caplen.saturating_sub(len);
        if self.extra_header > 0 && !self.skip(self.extra_header as u64) {
            return Err("short packet header".into());
        }
        match self.fill_buf(caplen as usize) {
            Fill::Full => {}
            _ if caplen == 0 => {}
            _ => return Err("short packet".into()),
        }
        let keep = (caplen - skiplen) as usize;
        let ts = if self.nano {
            Timestamp::from_sec_nsec(sec as i64, frac as i64)
        } else {
            Timestamp::from_sec_nsec(sec as i64, frac as i64 * 1000)
        };
        self.last = 0..keep;
        Ok(Some(Record {
            ts,
            len: len.max(keep as u32),
            data: &self.buf[..keep],
            linktype: self.linktype,
        }))
    }

    /// Reads the rest of a section header block whose type was `first`.
    fn read_shb_rest(&mut self, _first: [u8; 4]) -> Result<(), String> {
        let mut h = [0u8; 8];
        if !matches!(self.fill(&mut h), Fill::Full) {
            return Err("short pcapng section header".into());
        }
        let bom = u32::from_ne_bytes([h[4], h[5], h[6], h[7]]);
        self.swapped = match bom {
            PCAPNG_BOM => false,
            x if x.swap_bytes() == PCAPNG_BOM => true,
            _ => return Err("bad pcapng byte-order magic".into()),
        };
        let total = self.u32(&h[0..4]);
        if total < 28 || total & 3 != 0 || total > MAX_BLOCK {
            return Err("bad pcapng section header length".into());
        }
        // Skip version, section length, options, trailing length.
        if !self.skip(u64::from(total) - 12) {
            return Err("short pcapng section header".into());
        }
        self.interfaces.clear();
        Ok(())
    }

    /// Reads the next non-section-header block into `buf`; returns its
    /// type, or `None` at a clean end of file.
    fn read_block(&mut self) -> Result<Option<u32>, String> {
        loop {
            let Some(h) = self.read_header::<4>("block header")? else {
                return Ok(None);
            };
            if u32::from_ne_bytes(h) == PCAPNG_SHB {
                self.read_shb_rest(h)?;
                continue;
            }
            let btype = self.u32(&h);
            let mut l = [0u8; 4];
            if !matches!(self.fill(&mut l), Fill::Full) {
                return Err("short block header".into());
            }
            let total = self.u32(&l);
            if total < 12 || total & 3 != 0 || total > MAX_BLOCK {
                return Err(format!("bad block length {total}"));
            }
            if !matches!(self.fill_buf(total as usize - 8), Fill::Full) {
                return Err("short block".into());
            }
            return Ok(Some(btype));
        }
    }

    /// Parses the interface description block in `buf`.
    fn interface_block(&mut self) -> Result<(), String> {
        let body_len = self.buf.len().saturating_sub(4);
        if body_len < 8 {
            return Err("bad interface description block".into());
        }
        let linktype = canonical_linktype(u32::from(self.u16(&self.buf[0..2])));
        let mut iface = Interface {
            linktype,
            tsresol: Resol::Dec(6),
            tsoffset: 0,
        };
        let mut o = 8;
        while o + 4 <= body_len {
            let code = self.u16(&self.buf[o..o + 2]);
            let olen = self.u16(&self.buf[o + 2..o + 4]) as usize;
            let vstart = o + 4;
            if code == 0 || vstart + olen > body_len {
                break;
            }
            if code == 9 && olen >= 1 {
                let v = self.buf[vstart];
                iface.tsresol = if v & 0x80 != 0 {
                    Resol::Bin(u32::from(v & 0x7f))
                } else {
                    Resol::Dec(u32::from(v))
                };
            } else if code == 14 && olen >= 8 {
                let mut b = [0u8; 8];
                b.copy_from_slice(&self.buf[vstart..vstart + 8]);
                let v = u64::from_ne_bytes(b);
                iface.tsoffset = if self.swapped { v.swap_bytes() } else { v } as i64;
            }
            o = vstart + olen.div_ceil(4) * 4;
        }
        if self.interfaces.is_empty() {
            self.linktype = linktype;
        }
        self.interfaces.push(iface);
        Ok(())
    }

    fn next_pcapng(&mut self) -> Result<Option<Record<'_>>, String> {
        loop {
            let btype = match self.pending_block.take() {
                Some(b) => b,
                None => match self.read_block()? {
                    Some(b) => b,
                    None => return Ok(None),
                },
            };
            let body_len = self.buf.len().saturating_sub(4);
            match btype {
                1 => self.interface_block()?,
                // Enhanced packet (6) and obsolete packet (2) blocks.
                2 | 6 => {
                    if body_len < 20 {
                        return Err("bad packet block".into());
                    }
                    let ifid = if btype == 6 {
                        self.u32(&self.buf[0..4]) as usize
                    } else {
                        self.u16(&self.buf[0..2]) as usize
                    };
                    let hi = u64::from(self.u32(&self.buf[4..8]));
                    let lo = u64::from(self.u32(&self.buf[8..12]));
                    let caplen = self.u32(&self.buf[12..16]);
                    let len = self.u32(&self.buf[16..20]);
                    if caplen as usize > body_len - 20 || caplen > MAX_CAPLEN {
                        return Err("bad packet header; giving up".into());
                    }
                    let Some(iface) = self.interfaces.get(ifid).copied() else {
                        return Err(format!("packet for unknown interface {ifid}"));
                    };
                    let ts = iface.tsresol.to_timestamp(hi << 32 | lo)
                        + Timestamp::from_sec_nsec(iface.tsoffset, 0);
                    let keep = caplen as usize;
                    self.last = 20..20 + keep;
                    return Ok(Some(Record {
                        ts,
                        len: len.max(caplen),
                        data: &self.buf[20..20 + keep],
                        linktype: iface.linktype,
                    }));
                }
                // Simple packet.
                3 => {
                    if body_len < 4 {
                        return Err("bad simple packet block".into());
                    }
                    let len = self.u32(&self.buf[0..4]);
                    let caplen = (len as usize).min(body_len - 4);
                    let Some(iface) = self.interfaces.first().copied() else {
                        return Err("packet for unknown interface 0".into());
                    };
                    self.last = 4..4 + caplen;
                    return Ok(Some(Record {
                        ts: Timestamp::ZERO,
                        len,
                        data: &self.buf[4..4 + caplen],
                        linktype: iface.linktype,
                    }));
                }
                // Anything else (statistics, name resolution, custom): skip.
                _ => {}
            }
        }
    }
}

/// A pcap file writer.
pub struct DumpWriter {
    out: BufWriter<Box<dyn Write + Send>>,
    nano: bool,
    unbuffered: bool,
}

impl DumpWriter {
    /// Creates `path` (`-` for standard output) and writes the header.
    pub fn create(
        path: &str,
        snaplen: u32,
        linktype: u32,
        nano: bool,
        unbuffered: bool,
    ) -> Result<DumpWriter, String> {
        let out: Box<dyn Write + Send> = if path == "-" {
            Box::new(io::stdout())
        } else {
            Box::new(File::create(path).map_err(|e| format!("{path}: {}", strerror(&e)))?)
        };
        let mut w = DumpWriter {
            out: BufWriter::with_capacity(1 << 16, out),
            nano,
            unbuffered,
        };
        let magic = if nano { PCAP_MAGIC_NANO } else { PCAP_MAGIC };
        let mut h = [0u8; PCAP_HEADER_LEN as usize];
        h[0..4].copy_from_slice(&magic.to_ne_bytes());
        h[4..6].copy_from_slice(&2u16.to_ne_bytes());
        h[6..8].copy_from_slice(&4u16.to_ne_bytes());
        // thiszone, sigfigs: 0.
        h[16..20].copy_from_slice(&snaplen.to_ne_bytes());
        h[20..24].copy_from_slice(&linktype.to_ne_bytes());
        w.out
            .write_all(&h)
            .and_then(|_| if unbuffered { w.out.flush() } else { Ok(()) })
            .map_err(|e| format!("{path}: unable to write file header: {e}"))?;
        Ok(w)
    }

    /// Writes one record.
    pub fn write(&mut self, ts: Timestamp, len: u32, data: &[u8]) -> io::Result<()> {
        let mut h = [0u8; 16];
        let frac = if self.nano {
            ts.subsec_nanos()
        } else {
            ts.subsec_nanos() / 1000
        };
        h[0..4].copy_from_slice(&(ts.sec() as u32).to_ne_bytes());
        h[4..8].copy_from_slice(&(frac as u32).to_ne_bytes());
        h[8..12].copy_from_slice(&(data.len() as u32).to_ne_bytes());
        h[12..16].copy_from_slice(&len.to_ne_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)?;
        if self.unbuffered {
            self.out.flush()?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// An OS error as Click prints it: the `strerror` text, without Rust's
/// ` (os error N)` suffix.
fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolutions() {
        assert_eq!(
            Resol::Dec(6).to_timestamp(1_500_000),
            Timestamp(1_500_000_000)
        );
        assert_eq!(Resol::Dec(9).to_timestamp(7), Timestamp(7));
        assert_eq!(Resol::Dec(12).to_timestamp(7000), Timestamp(7));
        assert_eq!(Resol::Bin(1).to_timestamp(3), Timestamp(1_500_000_000));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for data in [
            &b""[..],
            b"\xd4\xc3",
            b"hello world, this is not a pcap file",
            b"\x0a\x0d\x0d\x0a\xff\xff\xff\xff\x4d\x3c\x2b\x1a",
        ] {
            assert!(DumpReader::new(Box::new(io::Cursor::new(data.to_vec()))).is_err());
        }
    }
}
