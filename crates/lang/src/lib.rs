//! The Click configuration language.
//!
//! This crate turns configuration text into a flat [`RouterSpec`]: a list of
//! element declarations (compound classes fully expanded) and connections
//! between their ports, each carrying the [`Landmark`] (file and line) it came
//! from. It knows nothing about what element classes do; callers say which
//! class names exist through [`ClassLookup`].
//!
//! Errors are collected, never thrown at the first one: [`parse_router`]
//! returns every [`Diagnostic`] it found, worded as Click words them.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

pub mod args;
mod expand;
mod flatten;
mod lexer;
mod parser;
mod vars;

pub use args::split_config_args;

/// A hash of this crate's sources (`src/`, `Cargo.toml`, `build.rs`),
/// part of the element-package ABI fingerprint of `rclick-core`.
pub const SOURCE_HASH: &str = include_str!(concat!(env!("OUT_DIR"), "/source_hash.txt"));
pub use flatten::flatten;

/// Where a piece of configuration came from: `file:line`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Landmark {
    pub file: Arc<str>,
    pub line: u32,
}

impl Landmark {
    pub fn new(file: impl Into<Arc<str>>, line: u32) -> Self {
        Landmark {
            file: file.into(),
            line,
        }
    }
}

impl fmt::Display for Landmark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    /// A line that introduces the warnings under it (Click's `While
    /// configuring 'x :: C':` above an element's warnings): printed like an
    /// error line, but not an error.
    Context,
}

/// One message about a configuration. `Display` prints Click's form,
/// `file:line: message` (warnings as `file:line: warning: message`); the
/// optional source line, caret column and hint are rclick's additions, shown
/// by [`Diagnostic::render`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub landmark: Landmark,
    pub message: String,
    /// The offending source line, verbatim, when known.
    pub source_line: Option<String>,
    /// 0-based byte column of the offending token within `source_line`.
    pub column: Option<usize>,
    pub hint: Option<String>,
    /// Whether Click's one-line form (`Display`) shows the landmark. Click
    /// reports some errors (push/pull and agnostic conflicts) without one;
    /// rclick's rich form ([`Diagnostic::render`]) always shows it.
    pub plain_landmark: bool,
}

impl Diagnostic {
    pub fn error(landmark: Landmark, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            landmark,
            message: message.into(),
            source_line: None,
            column: None,
            hint: None,
            plain_landmark: true,
        }
    }

    /// Click prints this message without its `file:line:` landmark; the
    /// rich form keeps it.
    pub fn without_plain_landmark(mut self) -> Self {
        self.plain_landmark = false;
        self
    }

    pub fn warning(landmark: Landmark, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(landmark, message)
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_source(mut self, line: impl Into<String>, column: Option<usize>) -> Self {
        self.source_line = Some(line.into());
        self.column = column;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Click's one-line form followed, when known, by the source line, a
    /// caret under the offending column, and a hint.
    pub fn render(&self) -> String {
        let mut out = Diagnostic {
            plain_landmark: true,
            ..self.clone()
        }
        .to_string();
        if let Some(src) = &self.source_line {
            out.push_str("\n    ");
            out.push_str(src.trim_end());
            if let Some(col) = self.column {
                out.push_str("\n    ");
                for ch in src.chars().take(col) {
                    out.push(if ch == '\t' { '\t' } else { ' ' });
                }
                out.push('^');
            }
        }
        if let Some(h) = &self.hint {
            out.push_str("\n    = hint: ");
            out.push_str(h);
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    /// A diagnostic with an empty landmark file (Click's context lines,
    /// such as the indented messages under `While configuring` and `Router
    /// could not be initialized!`) prints without a `file:line:` prefix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.landmark.file.is_empty() || !self.plain_landmark {
            return match self.severity {
                Severity::Error | Severity::Context => write!(f, "{}", self.message),
                // A warning under a context line is the whole line, its
                // place of the word `warning:` included (`  pattern 0:
                // warning: ...`, as Click prints).
                Severity::Warning => write!(f, "{}", self.message),
            };
        }
        match self.severity {
            Severity::Error | Severity::Context => {
                write!(f, "{}: {}", self.landmark, self.message)
            }
            Severity::Warning => write!(f, "{}: warning: {}", self.landmark, self.message),
        }
    }
}

/// One element of the flattened router.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementDecl {
    /// Full name, compound components as `instance/component`.
    pub name: String,
    /// A primitive class name (compounds are expanded away).
    pub class: String,
    /// The configuration string, verbatim (after compound-parameter
    /// substitution), without the surrounding parentheses.
    pub config: String,
    pub landmark: Landmark,
}

/// A connection `from [from_port] -> [to_port] to`, by element index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Connection {
    pub from: usize,
    pub from_port: usize,
    pub to: usize,
    pub to_port: usize,
}

/// A flat router: what the runtime builds from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterSpec {
    /// Elements in router order: top-level elements in declaration order,
    /// then compound components as expanded.
    pub elements: Vec<ElementDecl>,
    pub connections: Vec<Connection>,
    /// Landmark of each connection (parallel to `connections`).
    pub connection_landmarks: Vec<Landmark>,
    /// `require(...)` arguments other than `library` includes, e.g.
    /// `compact_config` or a package name, each as written (`package X`
    /// normalised to `X`).
    pub requirements: Vec<String>,
}

impl RouterSpec {
    /// A spec built programmatically: `(name, class, config)` triples and
    /// `(from, from_port, to, to_port)` connections by element index, every
    /// landmark `file:1`. For programs embedding rclick, and tests.
    pub fn from_lists(
        file: &str,
        elements: &[(&str, &str, &str)],
        connections: &[(usize, usize, usize, usize)],
    ) -> Self {
        let lm = Landmark::new(file, 1);
        RouterSpec {
            elements: elements
                .iter()
                .map(|(name, class, config)| ElementDecl {
                    name: name.to_string(),
                    class: class.to_string(),
                    config: config.to_string(),
                    landmark: lm.clone(),
                })
                .collect(),
            connections: connections
                .iter()
                .map(|&(from, from_port, to, to_port)| Connection {
                    from,
                    from_port,
                    to,
                    to_port,
                })
                .collect(),
            connection_landmarks: connections.iter().map(|_| lm.clone()).collect(),
            requirements: Vec::new(),
        }
    }

    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.elements.iter().position(|e| e.name == name)
    }
}

/// Which primitive element classes exist. Implemented by the runtime's class
/// registry; tests can use a `HashSet<String>`.
pub trait ClassLookup {
    fn has_class(&self, name: &str) -> bool;

    /// `require(package NAME)` for a NAME not in
    /// [`ParseOptions::provided`]: loads the package if this lookup can
    /// (the runtime's registry loads element packages found on CLICKPATH).
    /// `None` means packages cannot be loaded here; `Some(Err(why))`, that
    /// loading failed. Classes loaded are then found by
    /// [`has_class`](ClassLookup::has_class).
    fn require_package(&self, _name: &str) -> Option<Result<(), String>> {
        None
    }
}

impl ClassLookup for std::collections::HashSet<String> {
    fn has_class(&self, name: &str) -> bool {
        self.contains(name)
    }
}

impl<F: Fn(&str) -> bool> ClassLookup for F {
    fn has_class(&self, name: &str) -> bool {
        self(name)
    }
}

/// Options for [`parse_router`].
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Command-line `NAME=VALUE` variables; they override `define`.
    pub variables: Vec<(String, String)>,
    /// Extra directories searched by `require(library FILE)` after the
    /// including file's own directory.
    pub library_path: Vec<PathBuf>,
    /// Requirement names that are satisfied (packages compiled in).
    pub provided: Vec<String>,
    /// Click's tool mode (`click-flatten`): a class name this lookup does
    /// not know is not an error but a class of that name, and an
    /// undeclared name used as an element (`A -> B`) is an element of the
    /// class of that name, as Click's tools read configurations. Such a
    /// class exists from then on, everywhere: `A :: Idle` after `A -> B`
    /// is "class 'A' used as element name".
    pub tool: bool,
}

/// The result of parsing: the spec when there were no errors, and every
/// diagnostic (errors and warnings) in source order.
#[derive(Clone, Debug, Default)]
pub struct ParseOutcome {
    pub spec: Option<RouterSpec>,
    pub diagnostics: Vec<Diagnostic>,
}

impl ParseOutcome {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
}

/// Parse configuration `text` whose landmark file name is `file` (`"config"`
/// for `-e` text, `"<stdin>"` for standard input): expand compound classes,
/// resolve variables, include `require(library ...)` files, and return the
/// flat spec, or every diagnostic when there were errors.
///
/// Never panics; deep nesting and runaway expansion are reported as errors.
pub fn parse_router(
    text: &str,
    file: &str,
    classes: &dyn ClassLookup,
    opts: &ParseOptions,
) -> ParseOutcome {
    vars::reset_work_budget();
    let (spec, mut diagnostics) = expand::Ctx::new(classes, opts).run(text, file);
    cap_repeated(&mut diagnostics);
    ParseOutcome { spec, diagnostics }
}

/// How many diagnostics of one cause are shown before the rest are
/// summarized in one line.
pub const MAX_REPEATED_DIAGNOSTICS: usize = 10;

/// Collapses runs of one cause, as compilers cap repeated errors: a
/// diagnostic's cause is its severity, landmark and message with every
/// number blanked out (`input 7 unused` and `input 8 unused` on one line
/// are one cause). The first [`MAX_REPEATED_DIAGNOSTICS`] of each cause
/// are kept in place; the rest become one `... and N more like this`
/// line after the last one kept. A 4 KB configuration asking for port
/// 65535 of a few elements used to print hundreds of thousands of lines.
pub fn cap_repeated(diagnostics: &mut Vec<Diagnostic>) {
    use std::collections::HashMap;
    if diagnostics.len() <= MAX_REPEATED_DIAGNOSTICS {
        return;
    }
    let cause = |d: &Diagnostic| {
        let mut key = String::with_capacity(d.message.len());
        let mut in_number = false;
        for c in d.message.chars() {
            if c.is_ascii_digit() {
                if !in_number {
                    key.push('#');
                }
                in_number = true;
            } else {
                key.push(c);
                in_number = false;
            }
        }
        (d.severity == Severity::Error, d.landmark.clone(), key)
    };
    // Per cause: how many seen, and the index of its summary, if any.
    let mut seen: HashMap<_, (usize, Option<usize>)> = HashMap::new();
    // Kept diagnostics, each followed by the summaries placed after it.
    let mut kept: Vec<(Diagnostic, Vec<usize>)> = Vec::new();
    // Capped causes: the last diagnostic left out, and how many were.
    let mut summaries: Vec<(Diagnostic, usize)> = Vec::new();
    for d in diagnostics.drain(..) {
        let (count, summary) = seen.entry(cause(&d)).or_insert((0, None));
        *count += 1;
        if *count <= MAX_REPEATED_DIAGNOSTICS {
            kept.push((d, Vec::new()));
            continue;
        }
        match summary {
            Some(i) => {
                summaries[*i] = (d, summaries[*i].1 + 1);
            }
            None => {
                *summary = Some(summaries.len());
                if let Some(last) = kept.last_mut() {
                    last.1.push(summaries.len());
                }
                summaries.push((d, 1));
            }
        }
    }
    let mut summaries: Vec<Option<(Diagnostic, usize)>> = summaries.into_iter().map(Some).collect();
    for (d, after) in kept {
        diagnostics.push(d);
        for i in after {
            let Some((last, more)) = summaries[i].take() else {
                continue;
            };
            let message = format!("... and {more} more like this (the last: {})", last.message);
            diagnostics.push(Diagnostic {
                message,
                source_line: None,
                column: None,
                hint: None,
                ..last
            });
        }
    }
}
