//! The canonical flattened configuration text of a [`RouterSpec`], laid out
//! as Click's `Router::unparse` lays it out.

use std::collections::HashMap;
use std::fmt::Write;

use crate::args::quote_word;
use crate::{Connection, RouterSpec};

/// Canonical flattened configuration text of a spec.
///
/// An optional `require(...)` line and a blank line; one
/// `NAME :: CLASS(CONFIG);` per element in router order (`NAME :: CLASS;`
/// when the configuration is empty); a blank line if there were elements;
/// then the connections, sorted by (destination, destination port, source,
/// source port) and printed as chains: a connection continues the chain of
/// the previous one when it enters port 0 of an element that the next
/// connection leaves from output 0, as Click chooses.
pub fn flatten(spec: &RouterSpec) -> String {
    let mut out = String::new();
    if !spec.requirements.is_empty() {
        let reqs: Vec<String> = spec
            .requirements
            .iter()
            .map(|r| {
                if r == "compact_config" {
                    r.clone()
                } else {
                    format!("package {}", quote_word(r))
                }
            })
            .collect();
        let _ = write!(out, "require({});\n\n", reqs.join(", "));
    }
    for e in &spec.elements {
        if e.config.is_empty() {
            let _ = writeln!(out, "{} :: {};", e.name, e.class);
        } else {
            let _ = writeln!(out, "{} :: {}({});", e.name, e.class, e.config);
        }
    }
    if !spec.elements.is_empty() {
        out.push('\n');
    }
    write_connections(spec, &mut out);
    out
}

fn write_connections(spec: &RouterSpec, out: &mut String) {
    let mut conns: Vec<Connection> = spec.connections.clone();
    conns.sort_by_key(|c| (c.to, c.to_port, c.from, c.from_port));
    conns.dedup();
    let name = |i: usize| spec.elements.get(i).map_or("?", |e| e.name.as_str());
    let nc = conns.len();

    // Connections leaving each element's output 0, in order.
    let mut from0: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, c) in conns.iter().enumerate() {
        if c.from_port == 0 {
            from0.entry(c.from).or_default().push(i);
        }
    }
    // A connection into port 0 is followed by a connection out of that
    // element's output 0: the first one also entering port 0, else the last.
    let mut next: Vec<Option<usize>> = vec![None; nc];
    let mut starts = vec![true; nc];
    for c in 0..nc {
        if conns[c].to_port != 0 {
            continue;
        }
        let Some(cands) = from0.get(&conns[c].to) else {
            continue;
        };
        let mut result = None;
        for &d in cands {
            if d == c {
                continue;
            }
            result = Some(d);
            if conns[d].to_port == 0 {
                break;
            }
        }
        if let Some(d) = result {
            next[c] = Some(d);
            starts[d] = false;
        }
    }

    let mut used = vec![false; nc];
    let print_chain = |c: usize, used: &mut Vec<bool>, out: &mut String| {
        let f = &conns[c];
        out.push_str(name(f.from));
        if f.from_port != 0 {
            let _ = write!(out, " [{}]", f.from_port);
        }
        let mut d = Some(c);
        while let Some(x) = d {
            if used[x] {
                break;
            }
            out.push_str(if x == c { " -> " } else { "\n    -> " });
            if conns[x].to_port != 0 {
                let _ = write!(out, "[{}] ", conns[x].to_port);
            }
            out.push_str(name(conns[x].to));
            used[x] = true;
            d = next[x];
        }
        out.push_str(";\n");
    };
    for c in 0..nc {
        if !used[c] && starts[c] {
            print_chain(c, &mut used, out);
        }
    }
    // What remains lies on cycles: start each at its first connection.
    let mut c = 0;
    while c < nc {
        if !used[c] {
            print_chain(c, &mut used, out);
        }
        c += 1;
    }
}
