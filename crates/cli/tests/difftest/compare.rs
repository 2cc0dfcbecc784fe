//! Comparing outputs: text line by line (after the case's filters) and
//! pcap files record by record, reporting the first difference readably.

use super::case::Filter;
use super::frames::{read_pcap, Pcap, Record};

/// Applies `filters` to each line of `s`; returns the lines.
pub fn filtered_lines(s: &str, filters: &[Filter]) -> Vec<String> {
    s.lines()
        .map(|l| {
            let mut l = l.to_string();
            for f in filters {
                l = f.regex.replace_all(&l, f.replacement.as_str()).into_owned();
            }
            l
        })
        .collect()
}

/// `None` when equal, else a description of the first differing line.
pub fn text_diff(a_name: &str, a: &[String], b_name: &str, b: &[String]) -> Option<String> {
    let n = a.len().max(b.len());
    for i in 0..n {
        let (x, y) = (a.get(i), b.get(i));
        if x != y {
            let show = |v: Option<&String>| match v {
                Some(s) => format!("{s:?}"),
                None => "<end of output>".to_string(),
            };
            let mut out = format!(
                "first difference at line {}:\n    {a_name:>8}: {}\n    {b_name:>8}: {}",
                i + 1,
                show(x),
                show(y)
            );
            let ctx = |v: &[String]| {
                v.iter()
                    .take(i + 4)
                    .skip(i.saturating_sub(2))
                    .map(|l| format!("        | {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            out.push_str(&format!(
                "\n  {a_name} ({} lines) around it:\n{}\n  {b_name} ({} lines) around it:\n{}",
                a.len(),
                ctx(a),
                b.len(),
                ctx(b)
            ));
            return Some(out);
        }
    }
    None
}

fn hex_window(d: &[u8], at: usize) -> String {
    let start = at.saturating_sub(8);
    let end = (at + 8).min(d.len());
    let mut s = format!("[{start:#06x}] ");
    for (i, byte) in d[start..end].iter().enumerate() {
        if start + i == at {
            s.push_str(&format!(">{byte:02x}< "));
        } else {
            s.push_str(&format!("{byte:02x} "));
        }
    }
    if at >= d.len() {
        s.push_str("<end>");
    }
    s
}

fn record_diff(i: usize, a_name: &str, a: &Record, b_name: &str, b: &Record) -> Option<String> {
    if (a.sec, a.nsec) != (b.sec, b.nsec) {
        return Some(format!(
            "packet {i}: timestamp {a_name} {}.{:09} vs {b_name} {}.{:09}",
            a.sec, a.nsec, b.sec, b.nsec
        ));
    }
    if a.wire_len != b.wire_len || a.data.len() != b.data.len() {
        let first = a.data.iter().zip(&b.data).position(|(x, y)| x != y);
        return Some(format!(
            "packet {i}: length {a_name} {} (captured {}) vs {b_name} {} (captured {}){}",
            a.wire_len,
            a.data.len(),
            b.wire_len,
            b.data.len(),
            match first {
                Some(o) => format!(
                    "; first differing byte at offset {o}:\n    {a_name:>8}: {}\n    {b_name:>8}: {}",
                    hex_window(&a.data, o),
                    hex_window(&b.data, o)
                ),
                None => String::new(),
            }
        ));
    }
    let o = a.data.iter().zip(&b.data).position(|(x, y)| x != y)?;
    Some(format!(
        "packet {i}: bytes differ at offset {o}:\n    {a_name:>8}: {}\n    {b_name:>8}: {}\n  full packets:\n    {a_name:>8}: {}\n    {b_name:>8}: {}",
        hex_window(&a.data, o),
        hex_window(&b.data, o),
        hexdump(&a.data),
        hexdump(&b.data)
    ))
}

pub fn hexdump(d: &[u8]) -> String {
    d.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join("")
}

/// Compares two pcap files (header link type and snaplen, then each
/// record's timestamp, lengths and bytes).
pub fn pcap_diff(a_name: &str, a: &Pcap, b_name: &str, b: &Pcap, header: bool) -> Option<String> {
    if header && (a.linktype, a.snaplen, a.nano) != (b.linktype, b.snaplen, b.nano) {
        return Some(format!(
            "pcap header: {a_name} linktype {} snaplen {}{} vs {b_name} linktype {} snaplen {}{}",
            a.linktype,
            a.snaplen,
            if a.nano { " (ns)" } else { "" },
            b.linktype,
            b.snaplen,
            if b.nano { " (ns)" } else { "" },
        ));
    }
    records_diff(a_name, &a.records, b_name, &b.records).or_else(|| {
        (a.trailing != b.trailing).then(|| {
            format!(
                "trailing partial record: {a_name} {} bytes vs {b_name} {} bytes",
                a.trailing, b.trailing
            )
        })
    })
}

pub fn records_diff(a_name: &str, a: &[Record], b_name: &str, b: &[Record]) -> Option<String> {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if let Some(d) = record_diff(i, a_name, x, b_name, y) {
            return Some(d);
        }
    }
    if a.len() != b.len() {
        let (longer, name) = if a.len() > b.len() {
            (a, a_name)
        } else {
            (b, b_name)
        };
        let extra = &longer[a.len().min(b.len())];
        return Some(format!(
            "packet count: {a_name} {} vs {b_name} {}; first extra packet (in {name}): {}.{:09} len {} {}",
            a.len(),
            b.len(),
            extra.sec,
            extra.nsec,
            extra.wire_len,
            hexdump(&extra.data)
        ));
    }
    None
}

/// Compares two output files of the same name: as pcaps when both are
/// pcap files, else as text after filters.
pub fn file_diff(
    a_name: &str,
    a: Option<&[u8]>,
    b_name: &str,
    b: Option<&[u8]>,
    filters: &[Filter],
) -> Option<String> {
    match (a, b) {
        (None, None) => Some("neither driver wrote this file".to_string()),
        (Some(_), None) => Some(format!("{b_name} did not write this file ({a_name} did)")),
        (None, Some(_)) => Some(format!("{a_name} did not write this file ({b_name} did)")),
        (Some(x), Some(y)) => match (read_pcap(x), read_pcap(y)) {
            (Some(p), Some(q)) => pcap_diff(a_name, &p, b_name, &q, true),
            (Some(_), None) | (None, Some(_)) => Some(format!(
                "one is a pcap file and the other not ({a_name} {} bytes, {b_name} {} bytes)",
                x.len(),
                y.len()
            )),
            (None, None) => {
                let fa = filtered_lines(&String::from_utf8_lossy(x), filters);
                let fb = filtered_lines(&String::from_utf8_lossy(y), filters);
                text_diff(a_name, &fa, b_name, &fb)
            }
        },
    }
}
