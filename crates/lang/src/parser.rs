//! Recursive-descent parser from tokens to a syntax tree. It resolves
//! nothing: which names are classes or elements is decided later, in
//! scope order, by `expand`. Nesting is bounded so no input can exhaust the
//! stack.

use std::sync::Arc;

use crate::lexer::{Lexer, Loc, Tk, Token};
use crate::{Diagnostic, Severity};

/// Deepest nesting of groups and compound classes accepted.
pub(crate) const MAX_DEPTH: usize = 64;
/// Most ports one port list may expand to.
const MAX_PORTS_IN_LIST: usize = 4096;
/// Highest port number accepted.
const MAX_PORT: u32 = 0x7fff_ffff;

pub(crate) enum Stmt {
    Chain(Chain),
    ElementClass {
        name: String,
        loc: Loc,
        def: ClassDef,
    },
    Require {
        cfg: String,
        loc: Loc,
    },
    Define {
        cfg: String,
        loc: Loc,
    },
}

pub(crate) enum ClassDef {
    Synonym(String, Loc),
    Compound(CompoundAst),
    Error,
}

pub(crate) struct CompoundAst {
    pub bodies: Vec<Body>,
    /// Location of a trailing `...`, meaning "fall back to the previous
    /// definition of this class".
    pub extends: Option<Loc>,
}

pub(crate) struct Body {
    pub formals: Vec<Formal>,
    pub stmts: Vec<Stmt>,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub(crate) struct Formal {
    pub var: String,
    /// Empty for positional; a keyword; or `__REST__`.
    pub kw: String,
}

pub(crate) struct Chain {
    pub sets: Vec<ElemSet>,
    /// Connector before `sets[i + 1]`: (is `=>`, location).
    pub arrows: Vec<(bool, Loc)>,
}

pub(crate) struct ElemSet {
    pub elems: Vec<Elem>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Ports {
    pub list: Vec<u32>,
    /// The last listed port starts an open-ended range (`[N-]`).
    pub open: bool,
}

pub(crate) struct Elem {
    pub inp: Option<Ports>,
    pub outp: Option<Ports>,
    pub kind: ElemKind,
    pub loc: Loc,
}

pub(crate) enum ElemKind {
    Name {
        name: String,
        decl: Option<ClassRef>,
        config: Option<String>,
    },
    AnonCompound {
        class: CompoundAst,
        config: Option<String>,
    },
    Group(Vec<Stmt>),
    /// Click's implicit `input`/`output` (`[0] -> x -> [1]` in a compound).
    Implicit {
        output: bool,
    },
}

pub(crate) enum ClassRef {
    Named(String, Loc),
    Compound(CompoundAst),
    Missing,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ctx {
    File,
    Compound,
    Group,
}

enum StmtResult {
    Stmt(Stmt),
    Empty,
    End(Token),
}

pub(crate) struct Parser {
    lex: Lexer,
    pub diags: Vec<Diagnostic>,
    depth: usize,
}

impl Parser {
    pub fn new(src: Arc<str>, file: Arc<str>, fid: u32) -> Self {
        Parser {
            lex: Lexer::new(src, file, fid),
            diags: Vec::new(),
            depth: 0,
        }
    }

    fn next(&mut self) -> Token {
        self.lex.next(&mut self.diags)
    }

    fn peek(&mut self) -> &Token {
        self.lex.peek(&mut self.diags)
    }

    fn peek_kind(&mut self) -> Tk {
        self.peek().kind
    }

    fn unlex(&mut self, t: Token) {
        self.lex.unlex(t);
    }

    fn error(&mut self, loc: &Loc, msg: impl Into<String>) {
        let d = self.lex.diag(Severity::Error, loc, msg);
        self.diags.push(d);
    }

    fn syntax_error(&mut self, t: &Token) {
        let text = printable(&t.text);
        self.error(&t.loc, format!("syntax error near '{text}'"));
    }

    fn expect_char(&mut self, c: u8) -> bool {
        if self.peek().is(c) {
            self.next();
            true
        } else {
            let loc = self.peek().loc.clone();
            self.error(&loc, format!("expected '{}'", c as char));
            false
        }
    }

    /// The next top-level statement, or `None` at end of input.
    pub fn next_file_statement(&mut self) -> Option<Stmt> {
        loop {
            match self.statement(Ctx::File) {
                StmtResult::Stmt(s) => return Some(s),
                StmtResult::Empty => continue,
                StmtResult::End(_) => return None,
            }
        }
    }

    /// Statements up to the end of a compound body or group; returns them
    /// and the token that ended them.
    fn statements(&mut self, ctx: Ctx) -> (Vec<Stmt>, Token) {
        let mut v = Vec::new();
        loop {
            match self.statement(ctx) {
                StmtResult::Stmt(s) => v.push(s),
                StmtResult::Empty => {}
                StmtResult::End(t) => return (v, t),
            }
        }
    }

    fn statement(&mut self, ctx: Ctx) -> StmtResult {
        let t = self.next();
        match t.kind {
            Tk::Ident | Tk::Arrow | Tk::DArrow => {
                self.unlex(t);
                self.chain(ctx)
            }
            Tk::Char(b'[') | Tk::Char(b'{') | Tk::Char(b'(') => {
                self.unlex(t);
                self.chain(ctx)
            }
            Tk::ElementClass => self.elementclass(t.loc),
            Tk::Require | Tk::Define => {
                let open = self.peek().loc.clone();
                if !self.expect_char(b'(') {
                    return StmtResult::Empty;
                }
                let (cfg, loc) = self.lex.lex_config(&mut self.diags);
                self.expect_close_paren(&open);
                if t.kind == Tk::Require {
                    StmtResult::Stmt(Stmt::Require { cfg, loc: t.loc })
                } else {
                    let _ = loc;
                    StmtResult::Stmt(Stmt::Define { cfg, loc: t.loc })
                }
            }
            Tk::Char(b';') => StmtResult::Empty,
            Tk::Char(b'}') | Tk::DBar => {
                if ctx == Ctx::Compound {
                    StmtResult::End(t)
                } else {
                    self.syntax_error(&t);
                    if ctx == Ctx::Group {
                        StmtResult::End(t)
                    } else {
                        StmtResult::Empty
                    }
                }
            }
            Tk::Char(b')') if ctx == Ctx::Group => StmtResult::End(t),
            Tk::Eof => {
                match ctx {
                    Ctx::Group => self.error(&t.loc, "expected ')'"),
                    Ctx::Compound => self.error(&t.loc, "expected '}'"),
                    Ctx::File => {}
                }
                StmtResult::End(t)
            }
            _ => {
                self.syntax_error(&t);
                StmtResult::Empty
            }
        }
    }

    fn elementclass(&mut self, loc: Loc) -> StmtResult {
        let tname = self.next();
        let name = if tname.kind == Tk::Ident {
            tname.text.clone()
        } else {
            let l = tname.loc.clone();
            self.unlex(tname);
            self.error(&l, "expected element type name");
            String::new()
        };
        let tnext = self.next();
        let def = if tnext.is(b'{') {
            ClassDef::Compound(self.compound(&tnext.loc))
        } else if tnext.kind == Tk::Ident {
            ClassDef::Synonym(tnext.text.clone(), tnext.loc.clone())
        } else {
            self.syntax_error(&tnext);
            if tnext.kind == Tk::Eof {
                self.unlex(tnext);
            }
            ClassDef::Error
        };
        StmtResult::Stmt(Stmt::ElementClass { name, loc, def })
    }

    /// Parse compound bodies after `{`, through the closing `}`.
    fn compound(&mut self, open: &Loc) -> CompoundAst {
        let mut c = CompoundAst {
            bodies: Vec::new(),
            extends: None,
        };
        if self.depth >= MAX_DEPTH {
            // Parse the body at this level instead of recursing; the result
            // is garbage but the error says why.
            self.error(open, "maximum compound element nesting depth exceeded");
            return c;
        }
        self.depth += 1;
        loop {
            if self.peek_kind() == Tk::Dots {
                let dots = self.next();
                let t = self.next();
                if c.bodies.is_empty() || !t.is(b'}') {
                    self.error(
                        &dots.loc,
                        "'...' should occur last, after one or more compounds",
                    );
                    if !t.is(b'}') {
                        self.unlex(t);
                        // Keep parsing the rest as another body.
                        let body = self.body();
                        let end = body.1.clone();
                        c.bodies.push(body.0);
                        if end.kind == Tk::DBar {
                            continue;
                        }
                        break;
                    }
                }
                c.extends = Some(dots.loc);
                break;
            }
            let (body, end) = self.body();
            c.bodies.push(body);
            if end.kind != Tk::DBar {
                break;
            }
        }
        self.depth -= 1;
        c
    }

    fn body(&mut self) -> (Body, Token) {
        let loc = self.peek().loc.clone();
        let formals = self.formals();
        let (stmts, end) = self.statements(Ctx::Compound);
        (
            Body {
                formals,
                stmts,
                loc,
            },
            end,
        )
    }

    fn formals(&mut self) -> Vec<Formal> {
        let mut v: Vec<Formal> = Vec::new();
        let mut order_error = false;
        loop {
            let t1 = self.next();
            let (var, kw, loc) = match t1.kind {
                Tk::Ident => {
                    let t2 = self.next();
                    if t2.kind == Tk::Var {
                        (t2.text, t1.text, t1.loc)
                    } else {
                        if !v.is_empty() {
                            let l = t1.loc.clone();
                            self.error(&l, "expected variable");
                        }
                        self.unlex(t2);
                        self.unlex(t1);
                        break;
                    }
                }
                Tk::Var => (t1.text, String::new(), t1.loc),
                Tk::Char(b'|') => break,
                _ => {
                    if !v.is_empty() {
                        self.error(&t1.loc, "expected variable");
                    }
                    self.unlex(t1);
                    break;
                }
            };
            if v.iter().any(|f| f.var == var) {
                self.error(&loc, format!("parameter '${var}' multiply defined"));
            } else {
                if !kw.is_empty() && kw != "__REST__" && v.iter().any(|f| f.kw == kw) {
                    self.error(
                        &loc,
                        format!("repeated keyword parameter '{kw}' in compound element"),
                    );
                }
                if let Some(prev) = v.last() {
                    if !order_error
                        && ((kw.is_empty() && !prev.kw.is_empty()) || prev.kw == "__REST__")
                    {
                        self.error(&loc, "compound element parameters out of order");
                        order_error = true;
                    }
                }
                v.push(Formal { var, kw });
            }
            let sep = self.next();
            if sep.is(b'|') {
                break;
            } else if !sep.is(b',') {
                self.error(&sep.loc, "expected ',' or '|'");
                self.unlex(sep);
                break;
            }
        }
        v
    }

    /// `[...]` port list; the `[` has not been read.
    fn ports(&mut self) -> Ports {
        let mut p = Ports::default();
        self.next();
        loop {
            let t = self.next();
            if t.kind == Tk::Ident {
                let n = self.port_number(&t);
                if self.peek().is(b'-') {
                    self.next();
                    if self.peek_kind() == Tk::Ident {
                        let t2 = self.next();
                        let m = self.port_number(&t2);
                        if m < n {
                            self.error(&t2.loc, "syntax error: bad port range");
                        } else if p.list.len() + (m - n) as usize >= MAX_PORTS_IN_LIST {
                            self.error(&t2.loc, "port range too large");
                        } else {
                            p.list.extend(n..=m);
                        }
                    } else {
                        p.list.push(n);
                        p.open = true;
                    }
                } else if p.list.len() >= MAX_PORTS_IN_LIST {
                    self.error(&t.loc, "port range too large");
                } else {
                    if p.open {
                        self.error(&t.loc, "syntax error: open-ended port range must come last");
                        p.open = false;
                    }
                    p.list.push(n);
                }
            } else if t.is(b']') {
                // `[]` and a trailing comma mean "as many as needed".
                if p.list.is_empty() {
                    p.list.push(0);
                }
                p.open = true;
                break;
            } else {
                self.error(&t.loc, "syntax error: expected port number");
                self.unlex(t);
                break;
            }
            let t = self.next();
            if t.is(b']') {
                break;
            } else if !t.is(b',') {
                self.error(&t.loc, "syntax error: expected ','");
                self.unlex(t);
                if !matches!(self.peek_kind(), Tk::Ident | Tk::Char(b']')) {
                    break;
                }
            }
        }
        p
    }

    fn port_number(&mut self, t: &Token) -> u32 {
        match t.text.parse::<u32>() {
            Ok(n) if n <= MAX_PORT => n,
            _ => {
                self.error(&t.loc, "syntax error: port number should be integer");
                0
            }
        }
    }

    fn opt_ports(&mut self) -> Option<Ports> {
        if self.peek().is(b'[') {
            Some(self.ports())
        } else {
            None
        }
    }

    /// After a configuration string: its `)`. Missing, the string ran to
    /// the end of the file; Click reports `expected ')'` there, rclick at
    /// the `(` left open, which is where the mistake is.
    fn expect_close_paren(&mut self, open: &Loc) {
        if self.peek().is(b')') {
            self.next();
        } else {
            self.error(open, "unclosed '(': expected ')'");
        }
    }

    fn opt_config(&mut self) -> Option<String> {
        if self.peek().is(b'(') {
            let open = self.next().loc;
            let (cfg, _) = self.lex.lex_config(&mut self.diags);
            self.expect_close_paren(&open);
            Some(cfg)
        } else {
            None
        }
    }

    fn chain(&mut self, ctx: Ctx) -> StmtResult {
        let mut chain = Chain {
            sets: Vec::new(),
            arrows: Vec::new(),
        };
        loop {
            let first = chain.sets.is_empty();
            let (set, any_implicit) = self.element_set(ctx, first);
            let Some(set) = set else { break };
            chain.sets.push(set);
            let k = self.peek_kind();
            if any_implicit && !first && matches!(k, Tk::Arrow | Tk::DArrow) {
                let loc = self.peek().loc.clone();
                self.error(&loc, "implicit ports used in the middle of a chain");
            }
            // Connector.
            let t = loop {
                let t = self.next();
                if t.is(b',') || t.kind == Tk::DColon {
                    self.syntax_error(&t);
                    continue;
                }
                break t;
            };
            match t.kind {
                Tk::Arrow | Tk::DArrow => chain.arrows.push((t.kind == Tk::DArrow, t.loc)),
                Tk::Ident
                | Tk::Char(b'{')
                | Tk::Char(b'}')
                | Tk::Char(b'[')
                | Tk::Char(b')')
                | Tk::DBar
                | Tk::ElementClass
                | Tk::Require
                | Tk::Provide
                | Tk::Define
                | Tk::Eof => {
                    self.unlex(t);
                    break;
                }
                Tk::Char(b';') => break,
                _ => {
                    self.syntax_error(&t);
                    if !matches!(t.kind, Tk::Char(_)) {
                        self.unlex(t);
                    }
                    break;
                }
            }
        }
        if chain.arrows.len() >= chain.sets.len() {
            // A chain that ended after an arrow: drop the dangling arrow.
            chain.arrows.truncate(chain.sets.len().saturating_sub(1));
        }
        if chain.sets.is_empty() {
            StmtResult::Empty
        } else {
            StmtResult::Stmt(Stmt::Chain(chain))
        }
    }

    /// One comma-separated list of elements. Returns `None` when no element
    /// could be read, and whether implicit `input`/`output` were used.
    fn element_set(&mut self, ctx: Ctx, first_set: bool) -> (Option<ElemSet>, bool) {
        let nested = ctx != Ctx::File;
        let mut elems: Vec<Elem> = Vec::new();
        let mut any_implicit = false;
        let mut any_ports = false;
        loop {
            let inp = self.opt_ports();
            let t = self.next();
            let loc = t.loc.clone();
            let mut elem = match t.kind {
                Tk::Ident => {
                    let name = t.text.clone();
                    let mut decl = None;
                    if self.peek_kind() == Tk::DColon {
                        self.next();
                        let c = self.next();
                        decl = Some(if c.kind == Tk::Ident {
                            ClassRef::Named(c.text, c.loc)
                        } else if c.is(b'{') {
                            ClassRef::Compound(self.compound(&c.loc))
                        } else {
                            self.error(&c.loc, "missing element type in declaration");
                            self.unlex(c);
                            ClassRef::Missing
                        });
                    }
                    let config = self.opt_config();
                    Elem {
                        inp,
                        outp: None,
                        kind: ElemKind::Name { name, decl, config },
                        loc,
                    }
                }
                Tk::Char(b'{') => {
                    let class = self.compound(&t.loc);
                    let config = self.opt_config();
                    Elem {
                        inp,
                        outp: None,
                        kind: ElemKind::AnonCompound { class, config },
                        loc,
                    }
                }
                Tk::Char(b'(') => {
                    let stmts = if self.depth >= MAX_DEPTH {
                        self.error(&t.loc, "maximum element group nesting depth exceeded");
                        Vec::new()
                    } else {
                        self.depth += 1;
                        let (stmts, _) = self.statements(Ctx::Group);
                        self.depth -= 1;
                        stmts
                    };
                    Elem {
                        inp,
                        outp: None,
                        kind: ElemKind::Group(stmts),
                        loc,
                    }
                }
                _ => {
                    let k = t.kind;
                    let implicit = if nested && matches!(k, Tk::Arrow | Tk::DArrow) {
                        first_set && (inp.is_some() || elems.is_empty())
                    } else if nested && k == Tk::Char(b',') {
                        inp.is_some()
                    } else if nested && k != Tk::DColon {
                        !first_set && (inp.is_some() || elems.is_empty())
                    } else {
                        false
                    };
                    if implicit {
                        self.unlex(t);
                        any_implicit = true;
                        let (inp, outp) = if first_set { (None, inp) } else { (inp, None) };
                        if inp.is_some() || outp.is_some() {
                            any_ports = true;
                        }
                        elems.push(Elem {
                            inp,
                            outp,
                            kind: ElemKind::Implicit { output: !first_set },
                            loc,
                        });
                        if self.peek().is(b',') {
                            self.next();
                            continue;
                        }
                        break;
                    }
                    if inp.is_some() {
                        self.error(&loc, "stranded port ignored");
                    }
                    if elems.is_empty() {
                        if nested && first_set {
                            self.unlex(t);
                        } else {
                            self.syntax_error(&t);
                            if t.kind == Tk::Eof
                                || (nested && matches!(k, Tk::Char(b'}') | Tk::Char(b')')))
                            {
                                self.unlex(t);
                            }
                        }
                        return (None, any_implicit);
                    }
                    // A dangling comma: Click drops the token silently.
                    self.syntax_error(&t);
                    if t.kind == Tk::Eof
                        || matches!(k, Tk::Char(b'}') | Tk::Char(b')') | Tk::Char(b';'))
                    {
                        self.unlex(t);
                    }
                    break;
                }
            };
            if self.peek().is(b'[') {
                elem.outp = Some(self.ports());
            }
            if elem.inp.is_some() || elem.outp.is_some() {
                any_ports = true;
            }
            elems.push(elem);
            if self.peek().is(b',') {
                self.next();
                continue;
            }
            break;
        }
        if elems.is_empty() {
            return (None, any_implicit);
        }
        // `a, b :: C(cfg);` declares every name with the last one's class.
        if elems.len() > 1
            && first_set
            && !any_ports
            && !any_implicit
            && !matches!(self.peek_kind(), Tk::Arrow | Tk::DArrow)
        {
            let bare = |e: &Elem| {
                matches!(
                    &e.kind,
                    ElemKind::Name {
                        decl: None,
                        config: None,
                        ..
                    }
                )
            };
            let n = elems.len();
            if elems[..n - 1].iter().all(bare) {
                if let ElemKind::Name {
                    decl: Some(ClassRef::Named(cname, cloc)),
                    config,
                    ..
                } = &elems[n - 1].kind
                {
                    let (cname, cloc, config) = (cname.clone(), cloc.clone(), config.clone());
                    for e in &mut elems[..n - 1] {
                        if let ElemKind::Name {
                            decl, config: c, ..
                        } = &mut e.kind
                        {
                            *decl = Some(ClassRef::Named(cname.clone(), cloc.clone()));
                            *c = config.clone();
                        }
                    }
                }
            }
        }
        (Some(ElemSet { elems }), any_implicit)
    }
}

/// Render token text for an error message, escaping control characters.
fn printable(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_control() {
            out.push_str(&format!("\\{:03o}", c as u32 & 0xff));
        } else {
            out.push(c);
        }
    }
    out
}
