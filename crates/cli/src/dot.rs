//! `rclick dot`: the element graph for Graphviz, drawn as in the Click
//! paper: each element a box with its input ports on top and output ports
//! below, push ports filled black and pull ports white.

use rclick_core::ports::Mode;
use rclick_core::Router;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn port_cells(prefix: char, modes: &[Mode]) -> String {
    let mut s = String::new();
    for (i, m) in modes.iter().enumerate() {
        let fill = if *m == Mode::Pull { "white" } else { "black" };
        s.push_str(&format!(
            "<td port=\"{prefix}{i}\" bgcolor=\"{fill}\" width=\"10\" height=\"6\" fixedsize=\"true\"></td>"
        ));
    }
    s
}

/// Renders the router's graph in the DOT language.
pub fn render(router: &Router) -> String {
    let mut out = String::from(
        "digraph clickrouter {\n  rankdir=TB;\n  node [shape=plaintext, fontname=\"Helvetica\", fontsize=11];\n  edge [arrowsize=0.6];\n",
    );
    for i in 0..router.nelements() {
        let name = router.element_name(i).unwrap_or_default();
        let class = router.element_class(i).unwrap_or_default();
        let (ins, outs) = router.port_modes(i);
        let width = ins.len().max(outs.len()).max(1);
        let mut label = String::from(
            "<table border=\"1\" cellborder=\"1\" cellspacing=\"4\" cellpadding=\"2\">",
        );
        if !ins.is_empty() {
            label.push_str(&format!("<tr><td border=\"0\" colspan=\"{width}\"><table border=\"0\" cellspacing=\"4\"><tr>{}</tr></table></td></tr>", port_cells('i', &ins)));
        }
        label.push_str(&format!(
            "<tr><td border=\"0\" colspan=\"{width}\">{}<br/><font point-size=\"9\">{}</font></td></tr>",
            escape(name),
            escape(class)
        ));
        if !outs.is_empty() {
            label.push_str(&format!("<tr><td border=\"0\" colspan=\"{width}\"><table border=\"0\" cellspacing=\"4\"><tr>{}</tr></table></td></tr>", port_cells('o', &outs)));
        }
        label.push_str("</table>");
        out.push_str(&format!("  e{i} [label=<{label}>];\n"));
    }
    for c in &router.spec().connections {
        out.push_str(&format!(
            "  e{}:o{}:s -> e{}:i{}:n;\n",
            c.from, c.from_port, c.to, c.to_port
        ));
    }
    out.push_str("}\n");
    out
}
