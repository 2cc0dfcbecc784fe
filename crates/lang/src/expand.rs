//! From syntax trees to a flat router: resolves names in scope order,
//! builds compound classes, makes connections, then instantiates compounds
//! and splices their `input`/`output` pseudo-ports away.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use crate::args::{is_space_char, split_config_args, split_words, unquote_string};
use crate::lexer::{Loc, Sources};
use crate::parser::{
    Body, Chain, ClassDef, ClassRef, CompoundAst, Elem, ElemKind, Formal, Parser, Ports, Stmt,
};
use crate::vars::{self, Env, Var};
use crate::{
    ClassLookup, Connection, Diagnostic, ElementDecl, Landmark, ParseOptions, RouterSpec, Severity,
};

/// Most elements a router may expand to; compounds nest exponentially.
const MAX_ELEMENTS: usize = 200_000;
/// Most connections a router may expand to.
const MAX_CONNECTIONS: usize = 2_000_000;
/// Deepest `require(library ...)` include chain.
const MAX_INCLUDE_DEPTH: usize = 32;
/// Most diagnostics kept; a fuzzer can make one per token.
const MAX_DIAGNOSTICS: usize = 1000;
/// Diagnostics that get spelling hints (computing them is not free).
const MAX_HINTS: usize = 16;

#[derive(Clone)]
pub(crate) enum ClassB {
    Prim(String),
    Compound(Rc<CompoundClass>),
    Error,
}

pub(crate) struct CompoundClass {
    name: String,
    alts: Vec<Rc<CompoundDef>>,
    /// Previous definition extended with `...`.
    fallback: Option<ClassB>,
}

pub(crate) struct CompoundDef {
    name: String,
    lm: Landmark,
    formals: Vec<Formal>,
    defines: Vec<(String, String)>,
    elems: Vec<SElem>,
    conns: Vec<RConn>,
    ninputs: u32,
    noutputs: u32,
    depth: usize,
}

#[derive(Clone, Copy, Debug)]
enum Tun {
    /// The outside of a group or compound instance.
    Outer {
        fin: usize,
        fout: usize,
    },
    /// `input` as seen inside; `outer` is unset in a class definition.
    InFace {
        outer: Option<usize>,
    },
    OutFace {
        outer: Option<usize>,
    },
}

#[derive(Clone)]
enum SKind {
    Class(ClassB),
    Tunnel(Tun),
}

#[derive(Clone)]
struct SElem {
    name: String,
    kind: SKind,
    config: String,
    loc: Loc,
    /// Ports a pseudo-element face is used on (sources for `input`,
    /// destinations for `output`), and whether it was used the wrong way.
    face_ports: BTreeSet<u32>,
    face_misuse: bool,
}

#[derive(Clone)]
struct RConn {
    from: usize,
    fp: u32,
    to: usize,
    tp: u32,
    loc: Loc,
}

/// One scope being built: the top level or a compound class body.
struct Scope {
    elems: Vec<SElem>,
    map: HashMap<String, usize>,
    /// Anonymous elements still to be named: (index, class part, number).
    anon: Vec<(usize, String, usize)>,
    conns: Vec<RConn>,
    defines: Vec<(String, String)>,
    define_names: HashSet<String>,
    anon_offset: usize,
    /// Printable name for pseudo-element messages.
    name: String,
    compound: bool,
}

impl Scope {
    fn new(compound: bool, name: &str, loc: &Loc) -> Scope {
        let mut s = Scope {
            elems: Vec::new(),
            map: HashMap::new(),
            anon: Vec::new(),
            conns: Vec::new(),
            defines: Vec::new(),
            define_names: HashSet::new(),
            anon_offset: 0,
            name: if name.is_empty() {
                "<anonymous>".to_string()
            } else {
                name.to_string()
            },
            compound,
        };
        if compound {
            s.push_elem(
                "input",
                SKind::Tunnel(Tun::InFace { outer: None }),
                String::new(),
                loc.clone(),
            );
            s.push_elem(
                "output",
                SKind::Tunnel(Tun::OutFace { outer: None }),
                String::new(),
                loc.clone(),
            );
            s.map.insert("input".into(), 0);
            s.map.insert("output".into(), 1);
            s.anon_offset = 2;
        }
        s
    }

    fn push_elem(&mut self, name: &str, kind: SKind, config: String, loc: Loc) -> usize {
        self.elems.push(SElem {
            name: name.to_string(),
            kind,
            config,
            loc,
            face_ports: BTreeSet::new(),
            face_misuse: false,
        });
        self.elems.len() - 1
    }

    fn anon_number(&self) -> usize {
        self.elems.len() - self.anon_offset + 1
    }

    fn add_anon(&mut self, class_part: &str, kind: SKind, config: String, loc: Loc) -> usize {
        let n = self.anon_number();
        let idx = self.push_elem(&format!("{class_part}@{n}"), kind, config, loc);
        self.anon.push((idx, class_part.to_string(), n));
        idx
    }

    fn connect(&mut self, from: usize, fp: u32, to: usize, tp: u32, loc: &Loc) {
        if let SKind::Tunnel(t) = self.elems[from].kind {
            match t {
                Tun::InFace { .. } => {
                    self.elems[from].face_ports.insert(fp);
                }
                Tun::OutFace { .. } => self.elems[from].face_misuse = true,
                Tun::Outer { .. } => {}
            }
        }
        if let SKind::Tunnel(t) = self.elems[to].kind {
            match t {
                Tun::OutFace { .. } => {
                    self.elems[to].face_ports.insert(tp);
                }
                Tun::InFace { .. } => self.elems[to].face_misuse = true,
                Tun::Outer { .. } => {}
            }
        }
        self.conns.push(RConn {
            from,
            fp,
            to,
            tp,
            loc: loc.clone(),
        });
    }

    /// Give anonymous elements their final `Class@N` names, skipping
    /// numbers whose names are taken.
    fn deanonymize(&mut self) {
        let anon = std::mem::take(&mut self.anon);
        for (idx, class_part, mut n) in anon {
            let mut name = format!("{class_part}@{n}");
            while self.map.contains_key(&name) {
                n += 1;
                name = format!("{class_part}@{n}");
            }
            self.map.insert(name.clone(), idx);
            self.elems[idx].name = name;
        }
    }
}

/// An element reference in a connection: element index and port lists.
struct Ep {
    idx: usize,
    inp: Ports,
    outp: Ports,
    /// Ports implied by a group, not written by the user.
    implied: bool,
}

pub(crate) struct Ctx<'a> {
    classes: &'a dyn ClassLookup,
    opts: &'a ParseOptions,
    sources: Sources,
    pub diags: Vec<Diagnostic>,
    layers: Vec<HashMap<String, ClassB>>,
    requirements: Vec<String>,
    libraries: HashSet<PathBuf>,
    reported_undeclared: HashSet<String>,
    reported_unknown: HashSet<String>,
    /// Tool mode: classes made up for unknown names (Click's tools' base
    /// types), found after every other class.
    tool_classes: HashSet<String>,
    hints_left: usize,
    compound_depth: usize,
    include_depth: usize,
    too_big: bool,
}

impl<'a> Ctx<'a> {
    pub fn new(classes: &'a dyn ClassLookup, opts: &'a ParseOptions) -> Self {
        Ctx {
            classes,
            opts,
            sources: Sources::default(),
            diags: Vec::new(),
            layers: vec![HashMap::new()],
            requirements: Vec::new(),
            libraries: HashSet::new(),
            reported_undeclared: HashSet::new(),
            reported_unknown: HashSet::new(),
            tool_classes: HashSet::new(),
            hints_left: MAX_HINTS,
            compound_depth: 0,
            include_depth: 0,
            too_big: false,
        }
    }

    /// Record a diagnostic; past [`MAX_DIAGNOSTICS`] only errors still
    /// count, as one final "too many errors".
    fn push(&mut self, d: Diagnostic) {
        if self.diags.len() < MAX_DIAGNOSTICS {
            self.diags.push(d);
        } else if self.diags.len() == MAX_DIAGNOSTICS && d.is_error() {
            let mut d = d;
            d.message = "too many errors, giving up".to_string();
            d.hint = None;
            self.diags.push(d);
        }
    }

    fn error(&mut self, loc: &Loc, msg: impl Into<String>) {
        let d = self.sources.diag(Severity::Error, loc, msg);
        self.push(d);
    }

    fn error_hint(&mut self, loc: &Loc, msg: impl Into<String>, hint: Option<String>) {
        let mut d = self.sources.diag(Severity::Error, loc, msg);
        d.hint = hint;
        self.push(d);
    }

    fn lookup_class(&self, name: &str) -> Option<ClassB> {
        for layer in self.layers.iter().rev() {
            if let Some(c) = layer.get(name) {
                return Some(c.clone());
            }
        }
        if self.classes.has_class(name) || self.tool_classes.contains(name) {
            Some(ClassB::Prim(name.to_string()))
        } else {
            None
        }
    }

    /// A class name used where a class must be (`x :: NAME`, `elementclass
    /// X NAME`): the class, or, in tool mode, a new class of that name
    /// (an error only if `NAME` already names an element of `scope`, as in
    /// Click's tools); otherwise "unknown element class".
    fn class_or_unknown(&mut self, scope: Option<&Scope>, name: &str, loc: &Loc) -> ClassB {
        if let Some(c) = self.lookup_class(name) {
            return c;
        }
        if self.opts.tool {
            if scope.is_some_and(|s| s.map.contains_key(name)) {
                self.error(
                    loc,
                    format!("'{name}' was previously used as an element name"),
                );
            }
            self.tool_classes.insert(name.to_string());
            return ClassB::Prim(name.to_string());
        }
        self.unknown_class(name, loc);
        ClassB::Error
    }

    fn define_class(&mut self, name: &str, c: ClassB) {
        if let Some(layer) = self.layers.last_mut() {
            layer.insert(name.to_string(), c);
        }
    }

    /// Parse and process a whole file into `scope`.
    fn run_file(&mut self, text: &str, file: &str, scope: &mut Scope) {
        let src: Arc<str> = Arc::from(text);
        let fid = self.sources.add(src.clone());
        let mut p = Parser::new(src, Arc::from(file), fid);
        loop {
            let st = p.next_file_statement();
            for d in std::mem::take(&mut p.diags) {
                self.push(d);
            }
            let Some(st) = st else { break };
            self.statement(scope, &st, file);
        }
    }

    fn statements(&mut self, scope: &mut Scope, stmts: &[Stmt], file: &str) {
        for s in stmts {
            self.statement(scope, s, file);
        }
    }

    fn statement(&mut self, scope: &mut Scope, st: &Stmt, file: &str) {
        match st {
            Stmt::Chain(c) => self.chain(scope, c, file),
            Stmt::ElementClass { name, loc, def } => {
                let c = match def {
                    ClassDef::Synonym(other, oloc) => self.class_or_unknown(None, other, oloc),
                    ClassDef::Compound(ast) => self.compound_class(scope, name, ast, file),
                    ClassDef::Error => ClassB::Error,
                };
                let _ = loc;
                if !name.is_empty() {
                    self.define_class(name, c);
                }
            }
            Stmt::Require { cfg, loc } => self.require(scope, cfg, loc, file),
            Stmt::Define { cfg, loc } => {
                for arg in split_config_args(cfg) {
                    if arg.is_empty() {
                        continue;
                    }
                    let (var, rest) = match arg.find(is_space_char) {
                        Some(p) => (&arg[..p], arg[p..].trim_start()),
                        None => (&arg[..], ""),
                    };
                    let ok = var.len() >= 2
                        && var.starts_with('$')
                        && var[1..]
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'_');
                    if !ok {
                        self.error(loc, "bad 'define' declaration: not a variable");
                        continue;
                    }
                    let name = var[1..].to_string();
                    if !scope.define_names.insert(name.clone()) {
                        self.error(loc, format!("parameter '${name}' multiply defined"));
                        continue;
                    }
                    scope.defines.push((name, rest.to_string()));
                }
            }
        }
    }

    fn require(&mut self, scope: &mut Scope, cfg: &str, loc: &Loc, file: &str) {
        for arg in split_config_args(cfg) {
            let mut words = split_words(&arg);
            if words.is_empty() {
                continue;
            }
            let ty = words[0].clone();
            if words.len() == 1 && !matches!(ty.as_str(), "compact_config" | "package" | "library")
            {
                words.insert(0, "package".to_string());
            }
            match (words[0].as_str(), words.len()) {
                ("compact_config", 1) => {
                    if !self.requirements.iter().any(|r| r == "compact_config") {
                        self.requirements.push("compact_config".into());
                    }
                }
                ("package", 2) => {
                    let name = unquote_string(&words[1]);
                    let available = if self.opts.provided.contains(&name) {
                        true
                    } else {
                        // An element package: loaded now if it can be,
                        // so that the declarations after it find its
                        // classes (Click loads it from the lexer too).
                        match self.classes.require_package(&name) {
                            Some(Ok(())) => true,
                            Some(Err(why)) => {
                                self.error(loc, format!("while loading package '{name}': {why}"));
                                false
                            }
                            None => false,
                        }
                    };
                    if !available {
                        self.error(loc, format!("requirement '{name}' not available"));
                    } else if !self.requirements.contains(&name) {
                        self.requirements.push(name);
                    }
                }
                ("library", 2) => {
                    let name = unquote_string(&words[1]);
                    if scope.compound {
                        self.error(loc, "'require library' must be used at file scope");
                    } else {
                        self.library(scope, &name, loc, file);
                    }
                }
                _ => {
                    self.error(loc, "syntax error at requirement");
                }
            }
        }
    }

    fn library(&mut self, scope: &mut Scope, name: &str, loc: &Loc, file: &str) {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let including = Path::new(file);
        match including.parent() {
            Some(p) if !p.as_os_str().is_empty() && file != "config" && file != "<stdin>" => {
                dirs.push(p.to_path_buf())
            }
            _ => dirs.push(PathBuf::from(".")),
        }
        dirs.extend(self.opts.library_path.iter().cloned());
        let candidates: Vec<PathBuf> = if Path::new(name).is_absolute() {
            vec![PathBuf::from(name)]
        } else {
            dirs.iter().map(|d| d.join(name)).collect()
        };
        let Some(path) = candidates.into_iter().find(|p| p.is_file()) else {
            self.error(loc, format!("library '{name}' not found in CLICKPATH/conf"));
            return;
        };
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !self.libraries.insert(key) {
            return;
        }
        if self.include_depth >= MAX_INCLUDE_DEPTH {
            self.error(loc, "libraries nested too deeply");
            return;
        }
        let text = match std::fs::read(&path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                self.error(loc, format!("{}: {}", path.display(), e));
                return;
            }
        };
        self.include_depth += 1;
        let fname = path.to_string_lossy().into_owned();
        self.run_file(&text, &fname, scope);
        self.include_depth -= 1;
    }

    fn unknown_class(&mut self, name: &str, loc: &Loc) {
        if !self.reported_unknown.insert(name.to_string()) {
            return;
        }
        let hint = not_yet_in_rclick(name).or_else(|| {
            self.class_hint(name)
                .map(|h| format!("did you mean '{h}'?"))
        });
        self.error_hint(loc, format!("unknown element class '{name}'"), hint);
    }

    /// A known class one edit away from `name`, if any.
    fn class_hint(&mut self, name: &str) -> Option<String> {
        if self.hints_left == 0 || name.len() > 64 {
            return None;
        }
        self.hints_left -= 1;
        for layer in self.layers.iter().rev() {
            for k in layer.keys() {
                if edit_distance(k, name) <= 1 {
                    return Some(k.clone());
                }
            }
        }
        let chars: Vec<char> = name.chars().collect();
        let alphabet: Vec<char> = ('A'..='Z')
            .chain('a'..='z')
            .chain('0'..='9')
            .chain(['_'])
            .collect();
        let mut cands: Vec<String> = Vec::new();
        let lower = name.to_lowercase();
        let mut cap = lower.clone();
        if let Some(f) = cap.get_mut(0..1) {
            f.make_ascii_uppercase();
        }
        cands.push(cap);
        for i in 0..chars.len() {
            let mut v = chars.clone();
            v.remove(i);
            cands.push(v.iter().collect());
            if i + 1 < chars.len() {
                let mut v = chars.clone();
                v.swap(i, i + 1);
                cands.push(v.iter().collect());
            }
        }
        for i in 0..=chars.len() {
            for &a in &alphabet {
                let mut v = chars.clone();
                v.insert(i, a);
                cands.push(v.iter().collect());
                if i < chars.len() {
                    let mut v = chars.clone();
                    v[i] = a;
                    cands.push(v.iter().collect());
                }
            }
        }
        cands
            .into_iter()
            .find(|c| c != name && self.classes.has_class(c))
    }

    fn compound_class(
        &mut self,
        outer: &Scope,
        name: &str,
        ast: &CompoundAst,
        file: &str,
    ) -> ClassB {
        let _ = outer;
        let fallback = match &ast.extends {
            Some(loc) => match self.lookup_class(name) {
                Some(c) => Some(c),
                None => {
                    self.error(loc, format!("cannot extend unknown element class '{name}'"));
                    None
                }
            },
            None => None,
        };
        let mut alts = Vec::new();
        for body in &ast.bodies {
            alts.push(Rc::new(self.compound_body(name, body, file)));
        }
        if alts.is_empty() {
            return fallback.unwrap_or(ClassB::Error);
        }
        ClassB::Compound(Rc::new(CompoundClass {
            name: name.to_string(),
            alts,
            fallback,
        }))
    }

    fn compound_body(&mut self, name: &str, body: &Body, file: &str) -> CompoundDef {
        let mut scope = Scope::new(true, name, &body.loc);
        for f in &body.formals {
            scope.define_names.insert(f.var.clone());
        }
        self.layers.push(HashMap::new());
        self.compound_depth += 1;
        self.statements(&mut scope, &body.stmts, file);
        self.compound_depth -= 1;
        self.layers.pop();
        let ninputs = self.check_pseudo(&scope, 0, false, &scope.name.clone(), &body.loc);
        let noutputs = self.check_pseudo(&scope, 1, true, &scope.name.clone(), &body.loc);
        scope.deanonymize();
        CompoundDef {
            name: name.to_string(),
            lm: body.loc.lm.clone(),
            formals: body.formals.clone(),
            defines: scope.defines,
            elems: scope.elems,
            conns: scope.conns,
            ninputs,
            noutputs,
            depth: self.compound_depth + 1,
        }
    }

    /// Check a pseudo-element face's use; returns its port count.
    fn check_pseudo(
        &mut self,
        scope: &Scope,
        idx: usize,
        output: bool,
        name: &str,
        loc: &Loc,
    ) -> u32 {
        let e = &scope.elems[idx];
        let (this, other) = if output {
            ("output", "input")
        } else {
            ("input", "output")
        };
        if e.face_misuse {
            self.error(
                loc,
                format!("'{name}' pseudoelement '{this}' may only be used as {other}"),
            );
        }
        let n = e.face_ports.iter().next_back().map_or(0, |&m| m + 1);
        let mut missing = Vec::new();
        for i in 0..n {
            if !e.face_ports.contains(&i) {
                missing.push(i);
                if missing.len() >= 8 {
                    break;
                }
            }
        }
        for i in missing {
            self.error(loc, format!("'{name}' {this} {i} missing"));
        }
        n
    }

    fn chain(&mut self, scope: &mut Scope, chain: &Chain, file: &str) {
        let mut prev: Option<Vec<Ep>> = None;
        for (i, set) in chain.sets.iter().enumerate() {
            let eps = self.element_set(scope, &set.elems, file);
            match &prev {
                None => {
                    if let Some(e) = eps.iter().find(|e| !e.inp.list.is_empty() && !e.implied) {
                        let loc = scope.elems[e.idx].loc.clone();
                        let loc = set.elems.first().map_or(loc, |x| x.loc.clone());
                        self.error(&loc, "input ports ignored at start of chain");
                    }
                }
                Some(outs) => {
                    let (double, loc) = chain
                        .arrows
                        .get(i - 1)
                        .cloned()
                        .unwrap_or((false, set.elems[0].loc.clone()));
                    self.connect_all(scope, outs, &eps, double, &loc);
                }
            }
            prev = Some(eps);
        }
        if let (Some(last), Some(set)) = (&prev, chain.sets.last()) {
            if last.iter().any(|e| !e.outp.list.is_empty() && !e.implied) {
                let loc = set
                    .elems
                    .last()
                    .map(|x| x.loc.clone())
                    .unwrap_or_else(|| scope.elems[last[0].idx].loc.clone());
                self.error(&loc, "output ports ignored at end of chain");
            }
        }
    }

    /// Resolve one comma-separated set. Groups are built first, as Click
    /// builds them while parsing, before the set's other elements exist.
    fn element_set(&mut self, scope: &mut Scope, elems: &[Elem], file: &str) -> Vec<Ep> {
        let mut groups: HashMap<usize, Ep> = HashMap::new();
        for (i, e) in elems.iter().enumerate() {
            if let ElemKind::Group(stmts) = &e.kind {
                let ep = self.group(scope, e, stmts, file);
                groups.insert(i, ep);
            }
        }
        let mut out = Vec::with_capacity(elems.len());
        for (i, e) in elems.iter().enumerate() {
            if let Some(ep) = groups.remove(&i) {
                out.push(ep);
            } else if let Some(ep) = self.element(scope, e, file) {
                out.push(ep);
            }
        }
        out
    }

    fn group(&mut self, scope: &mut Scope, e: &Elem, stmts: &[Stmt], file: &str) -> Ep {
        let n = scope.anon_number();
        let gname = format!("@{n}");
        let o = scope.elems.len();
        scope.push_elem(
            &gname,
            SKind::Tunnel(Tun::Outer {
                fin: o + 1,
                fout: o + 2,
            }),
            String::new(),
            e.loc.clone(),
        );
        scope.push_elem(
            &format!("{gname}/input"),
            SKind::Tunnel(Tun::InFace { outer: Some(o) }),
            String::new(),
            e.loc.clone(),
        );
        scope.push_elem(
            &format!("{gname}/output"),
            SKind::Tunnel(Tun::OutFace { outer: Some(o) }),
            String::new(),
            e.loc.clone(),
        );
        let saved_in = scope.map.insert("input".into(), o + 1);
        let saved_out = scope.map.insert("output".into(), o + 2);
        self.statements(scope, stmts, file);
        match saved_in {
            Some(v) => scope.map.insert("input".into(), v),
            None => scope.map.remove("input"),
        };
        match saved_out {
            Some(v) => scope.map.insert("output".into(), v),
            None => scope.map.remove("output"),
        };
        let nin = self.check_pseudo(scope, o + 1, false, "<anonymous group>", &e.loc);
        let nout = self.check_pseudo(scope, o + 2, true, "<anonymous group>", &e.loc);
        let implied_in = e.inp.is_none() && nin > 0;
        let implied_out = e.outp.is_none() && nout > 0;
        Ep {
            idx: o,
            inp: e.inp.clone().unwrap_or(Ports {
                list: (0..nin).collect(),
                open: false,
            }),
            outp: e.outp.clone().unwrap_or(Ports {
                list: (0..nout).collect(),
                open: false,
            }),
            implied: implied_in || implied_out,
        }
    }

    fn element(&mut self, scope: &mut Scope, e: &Elem, file: &str) -> Option<Ep> {
        let ports = |p: &Option<Ports>| p.clone().unwrap_or_default();
        let idx = match &e.kind {
            ElemKind::Group(_) => return None,
            ElemKind::Implicit { output } => {
                let name = if *output { "output" } else { "input" };
                match scope.map.get(name) {
                    Some(&i) => i,
                    None => {
                        self.error(&e.loc, format!("undeclared element '{name}'"));
                        return None;
                    }
                }
            }
            ElemKind::AnonCompound { class, config } => {
                let c = self.compound_class(scope, "", class, file);
                scope.add_anon(
                    "",
                    SKind::Class(c),
                    config.clone().unwrap_or_default(),
                    e.loc.clone(),
                )
            }
            ElemKind::Name { name, decl, config } => {
                let ty = self.lookup_class(name);
                let decl_ty = decl.as_ref().map(|d| match d {
                    ClassRef::Named(c, cloc) => self.class_or_unknown(Some(scope), c, cloc),
                    ClassRef::Compound(ast) => self.compound_class(scope, "", ast, file),
                    ClassRef::Missing => ClassB::Error,
                });
                let existing = scope.map.get(name).copied();
                if existing.is_some() && config.is_some() && ty.is_none() {
                    self.error(&e.loc, "configuration string ignored on element reference");
                }
                if ty.is_some() || existing.is_none() {
                    let mut ty = ty;
                    // `A :: A` with A made up just now by tool mode (Click's
                    // tools check the name against the declared class).
                    let named_as_tool_class =
                        self.opts.tool && matches!(decl, Some(ClassRef::Named(c, _)) if c == name);
                    if decl_ty.is_some() && (ty.is_some() || named_as_tool_class) {
                        self.error(&e.loc, format!("class '{name}' used as element name"));
                    } else if decl_ty.is_none() && ty.is_none() && self.opts.tool {
                        // Tool mode: an undeclared name is an element of
                        // the class of that name.
                        ty = Some(self.class_or_unknown(Some(scope), name, &e.loc));
                    } else if decl_ty.is_none() && ty.is_none() {
                        if self.reported_undeclared.insert(name.clone()) {
                            let hint = not_yet_in_rclick(name).or_else(|| {
                                self.element_hint(scope, name)
                                    .or_else(|| self.class_hint(name))
                                    .map(|h| format!("did you mean '{h}'?"))
                            });
                            self.error_hint(&e.loc, format!("undeclared element '{name}'"), hint);
                        }
                        ty = Some(ClassB::Error);
                    }
                    let cfg = config.clone().unwrap_or_default();
                    match ty {
                        Some(t) => scope.add_anon(name, SKind::Class(t), cfg, e.loc.clone()),
                        None => {
                            if name
                                .split('/')
                                .any(|c| c.bytes().all(|b| b.is_ascii_digit()))
                            {
                                self.error(
                                    &e.loc,
                                    format!("element name '{name}' has all-digit component"),
                                );
                            }
                            let i = scope.push_elem(
                                name,
                                SKind::Class(decl_ty.unwrap_or(ClassB::Error)),
                                cfg,
                                e.loc.clone(),
                            );
                            scope.map.insert(name.clone(), i);
                            i
                        }
                    }
                } else {
                    let i = existing.unwrap_or(0);
                    if decl.is_some() {
                        self.error(&e.loc, format!("redeclaration of element '{name}'"));
                        if !matches!(scope.elems[i].kind, SKind::Tunnel(_)) {
                            let ploc = scope.elems[i].loc.clone();
                            self.error(&ploc, format!("element '{name}' previously declared here"));
                        }
                    }
                    i
                }
            }
        };
        Some(Ep {
            idx,
            inp: ports(&e.inp),
            outp: ports(&e.outp),
            implied: false,
        })
    }

    fn element_hint(&mut self, scope: &Scope, name: &str) -> Option<String> {
        if self.hints_left == 0 || name.len() > 64 {
            return None;
        }
        self.hints_left -= 1;
        let max = if name.len() <= 3 { 1 } else { 2 };
        let mut best: Option<(usize, &String)> = None;
        for k in scope.map.keys() {
            if k.len().abs_diff(name.len()) > max {
                continue;
            }
            let d = edit_distance(k, name);
            let better = match best {
                None => true,
                Some((bd, bk)) => d < bd || (d == bd && k < bk),
            };
            if d <= max && better {
                best = Some((d, k));
            }
        }
        best.map(|(_, k)| k.clone())
    }

    /// Connect the outputs of one set to the inputs of the next, Click's way:
    /// one-to-many and many-to-one with `->`, many-to-many with `=>`, one
    /// open-ended port list per connection filling the gap.
    fn connect_all(&mut self, scope: &mut Scope, outs: &[Ep], ins: &[Ep], double: bool, loc: &Loc) {
        if outs.is_empty() || ins.is_empty() {
            return;
        }
        // Index 0: inputs (of `ins`), 1: outputs (of `outs`).
        let side = |k: usize, j: usize| -> &Ports {
            if k == 0 {
                &ins[j].inp
            } else {
                &outs[j].outp
            }
        };
        let len = [ins.len(), outs.len()];
        let mut minp = [0usize; 2];
        let mut expandable = [0usize; 2];
        for k in 0..2 {
            for j in 0..len[k] {
                let p = side(k, j);
                if p.open {
                    minp[k] += p.list.len();
                    expandable[k] += 1;
                } else {
                    minp[k] += p.list.len().max(1);
                }
            }
        }
        if expandable[0] + expandable[1] > 1 {
            self.error(loc, "at most one expandable port allowed per connection");
            expandable[usize::from(minp[0] < minp[1])] = 0;
        }
        if double {
            for k in 0..2 {
                if minp[k] == 1 && minp[1 - k] > 1 && side(k, 0).list.is_empty() {
                    expandable[k] = 1;
                }
            }
        }
        let mut step = [false; 2];
        let mut nexp = [0usize; 2];
        for k in 0..2 {
            step[k] = minp[k] > 1 || expandable[k] > 0;
            nexp[k] = if expandable[k] > 0 {
                minp[1 - k].saturating_sub(minp[k])
            } else {
                0
            };
        }
        if step[0] && step[1] {
            if !double {
                self.error(loc, "syntax error: many-to-many connections require '=>'");
            }
            if expandable[0] == 0 && expandable[1] == 0 && minp[0] != minp[1] {
                self.error(
                    loc,
                    format!(
                        "connection mismatch: {} outputs connected to {} inputs",
                        minp[1], minp[0]
                    ),
                );
            } else if expandable[0] == 0 && minp[0] < minp[1] {
                self.error(
                    loc,
                    format!(
                        "connection mismatch: {} or more outputs connected to {} inputs",
                        minp[1], minp[0]
                    ),
                );
            } else if expandable[1] == 0 && minp[1] < minp[0] {
                self.error(
                    loc,
                    format!(
                        "connection mismatch: {} outputs connected to {} or more inputs",
                        minp[1], minp[0]
                    ),
                );
            }
        } else if !step[0] && !step[1] {
            step[0] = true;
        }
        let mut it = [0usize; 2];
        let mut ppos = [0usize; 2];
        let mut port: [Option<u32>; 2] = [None, None];
        while it[0] < len[0] && it[1] < len[1] {
            for k in 0..2 {
                if port[k].is_none() {
                    port[k] = Some(side(k, it[k]).list.first().copied().unwrap_or(0));
                }
            }
            if scope.conns.len() >= MAX_CONNECTIONS {
                if !self.too_big {
                    self.too_big = true;
                    self.error(loc, "too many connections");
                }
                return;
            }
            scope.connect(
                outs[it[1]].idx,
                port[1].unwrap_or(0),
                ins[it[0]].idx,
                port[0].unwrap_or(0),
                loc,
            );
            for k in 0..2 {
                if !step[k] {
                    continue;
                }
                let p = side(k, it[k]);
                let np = p.list.len();
                ppos[k] += 1;
                if ppos[k] < np {
                    port[k] = Some(p.list[ppos[k]]);
                } else if p.open && nexp[k] > 0 {
                    let base = p.list[np - 1];
                    port[k] = Some(base.saturating_add((ppos[k] - (np - 1)) as u32));
                    nexp[k] -= 1;
                } else if np == 0 && minp[k] == 1 && nexp[k] > 0 {
                    port[k] = Some(ppos[k] as u32);
                    nexp[k] -= 1;
                } else {
                    port[k] = None;
                    ppos[k] = 0;
                    it[k] += 1;
                }
            }
        }
    }

    /// Parse, process and expand a configuration.
    pub fn run(mut self, text: &str, file: &str) -> (Option<RouterSpec>, Vec<Diagnostic>) {
        let root_loc = Loc {
            lm: Landmark::new(file, 1),
            fid: u32::MAX,
            off: 0,
        };
        let mut top = Scope::new(false, "", &root_loc);
        self.run_file(text, file, &mut top);
        top.deanonymize();

        // Global variables: defines, overridden by the command line.
        let mut vars: Vec<Var> = top
            .defines
            .iter()
            .map(|(n, v)| Var {
                name: n.clone(),
                value: v.clone(),
                expand: true,
            })
            .collect();
        for (n, v) in &self.opts.variables {
            match vars.iter_mut().find(|x| x.name == *n) {
                Some(x) => {
                    x.value = v.clone();
                    x.expand = false;
                }
                None => vars.push(Var {
                    name: n.clone(),
                    value: v.clone(),
                    expand: false,
                }),
            }
        }
        let env = Env::root(vars);

        let mut flat = Flat::default();
        let initial = top.elems.len();
        for e in &top.elems {
            let config = self.expand_config(&e.config, &env, &e.loc);
            let kind = match &e.kind {
                SKind::Class(c) => FKind::from_class(c),
                SKind::Tunnel(t) => FKind::Tunnel(*t),
            };
            flat.push(e.name.clone(), kind, config, e.loc.clone(), true);
        }
        for c in &top.conns {
            flat.connect(c.clone());
        }
        for i in 0..initial {
            self.expand_element(&mut flat, i, &env, 0);
        }
        let spec = self.splice(&flat);
        let failed = self.diags.iter().any(|d| d.is_error());
        (if failed { None } else { Some(spec) }, self.diags)
    }

    fn expand_config(&mut self, config: &str, env: &Rc<Env>, loc: &Loc) -> String {
        match vars::expand(config, env) {
            Ok(s) => s,
            Err(vars::TooLarge) => {
                self.error(loc, "variable expansion too large");
                String::new()
            }
        }
    }

    fn expand_element(&mut self, flat: &mut Flat, which: usize, env: &Rc<Env>, depth: usize) {
        let FKind::Compound(cls) = flat.kinds[which].clone() else {
            return;
        };
        if self.too_big {
            flat.kinds[which] = FKind::Error;
            return;
        }
        let loc = flat.locs[which].clone();
        if depth > 2 * crate::parser::MAX_DEPTH {
            self.error(&loc, "recursive compound element instantiation");
            flat.kinds[which] = FKind::Error;
            return;
        }
        let args = split_config_args(&flat.configs[which]);
        let (nin, nout) = (flat.nin[which], flat.nout[which]);
        match self.resolve(&cls, &args, nin, nout, &loc) {
            Resolved::Prim(name) => flat.kinds[which] = FKind::Prim(name),
            Resolved::Error => flat.kinds[which] = FKind::Error,
            Resolved::Def(def, values) => {
                let mut vars: Vec<Var> = def
                    .formals
                    .iter()
                    .zip(values)
                    .map(|(f, v)| Var {
                        name: f.var.clone(),
                        value: v,
                        expand: false,
                    })
                    .collect();
                vars.extend(def.defines.iter().map(|(n, v)| Var {
                    name: n.clone(),
                    value: v.clone(),
                    expand: true,
                }));
                let new_env = Rc::new(Env {
                    vars,
                    parent: env.parent_of(def.depth),
                    depth: def.depth,
                });
                self.expand_into(flat, which, &def, &new_env, depth);
            }
        }
    }

    fn resolve(
        &mut self,
        cls: &Rc<CompoundClass>,
        args: &[String],
        nin: u32,
        nout: u32,
        loc: &Loc,
    ) -> Resolved {
        let mut closest: Option<(Rc<CompoundDef>, Vec<String>)> = None;
        let mut ncand = 0;
        let mut cur = cls.clone();
        let mut candidates: Vec<Rc<CompoundDef>> = Vec::new();
        let mut guard = 0;
        loop {
            guard += 1;
            for def in &cur.alts {
                ncand += 1;
                candidates.push(def.clone());
                let assigned = assign_arguments(&def.formals, args);
                if let Some(values) = assigned {
                    if def.ninputs == nin && def.noutputs == nout {
                        return Resolved::Def(def.clone(), values);
                    }
                    closest = Some((def.clone(), values));
                }
            }
            match &cur.fallback {
                Some(ClassB::Compound(next)) if guard < 1000 => cur = next.clone(),
                Some(ClassB::Prim(p)) => return Resolved::Prim(p.clone()),
                Some(ClassB::Error) => return Resolved::Error,
                _ => break,
            }
        }
        if ncand != 1 || closest.is_none() {
            let nargs = if args.is_empty() {
                String::new()
            } else {
                format!("{} {}, ", args.len(), plural(args.len(), "argument"))
            };
            let sig = format!(
                "{}[{}{} {}, {} {}]",
                if cls.name.is_empty() {
                    "<anonymous>"
                } else {
                    &cls.name
                },
                nargs,
                nin,
                plural(nin as usize, "input"),
                nout,
                plural(nout as usize, "output")
            );
            // Reported at the use (Click names the end of the file), then
            // Click's indented candidate list, each at its definition.
            self.error(loc, format!("no match for '{sig}'"));
            if let Some(first) = candidates.first() {
                self.push(Diagnostic::error(first.lm.clone(), "candidates are:"));
            }
            for d in &candidates {
                self.push(Diagnostic::error(
                    d.lm.clone(),
                    format!("  {}", signature(d)),
                ));
            }
        }
        match closest {
            Some((def, values)) => Resolved::Def(def, values),
            None => Resolved::Error,
        }
    }

    fn expand_into(
        &mut self,
        flat: &mut Flat,
        which: usize,
        def: &Rc<CompoundDef>,
        env: &Rc<Env>,
        depth: usize,
    ) {
        let ename = flat.names[which].clone();
        let wloc = flat.locs[which].clone();
        let fin = flat.push(
            format!("{ename}/input"),
            FKind::Tunnel(Tun::InFace { outer: Some(which) }),
            String::new(),
            wloc.clone(),
            false,
        );
        let fout = flat.push(
            format!("{ename}/output"),
            FKind::Tunnel(Tun::OutFace { outer: Some(which) }),
            String::new(),
            wloc.clone(),
            false,
        );
        flat.kinds[which] = FKind::Tunnel(Tun::Outer { fin, fout });
        let mut map: Vec<Option<usize>> = vec![Some(fin), Some(fout)];
        let mut new_elems = Vec::new();
        for e in def.elems.iter().skip(2) {
            if flat.names.len() >= MAX_ELEMENTS {
                if !self.too_big {
                    self.too_big = true;
                    self.error(&wloc, "too many elements after compound expansion");
                }
                return;
            }
            let cname = format!("{ename}/{}", e.name);
            let tunnel = matches!(e.kind, SKind::Tunnel(_));
            if !tunnel {
                if let Some(&prev) = flat.map.get(&cname) {
                    self.error(&wloc, format!("redeclaration of element '{cname}'"));
                    let ploc = flat.locs[prev].clone();
                    self.error(&ploc, format!("element '{cname}' previously declared here"));
                    map.push(None);
                    continue;
                }
            }
            let (kind, config) = match &e.kind {
                SKind::Tunnel(t) => (FKind::Tunnel(*t), String::new()),
                SKind::Class(c) => (
                    FKind::from_class(c),
                    self.expand_config(&e.config, env, &e.loc),
                ),
            };
            let i = flat.push(cname, kind, config, e.loc.clone(), !tunnel);
            map.push(Some(i));
            new_elems.push(i);
        }
        // Tunnel roles refer to indices inside the definition.
        for &i in &new_elems {
            if let FKind::Tunnel(t) = flat.kinds[i] {
                let m = |x: usize| map.get(x).copied().flatten();
                let nt = match t {
                    Tun::Outer { fin, fout } => match (m(fin), m(fout)) {
                        (Some(a), Some(b)) => Tun::Outer { fin: a, fout: b },
                        _ => continue,
                    },
                    Tun::InFace { outer } => Tun::InFace {
                        outer: outer.and_then(m),
                    },
                    Tun::OutFace { outer } => Tun::OutFace {
                        outer: outer.and_then(m),
                    },
                };
                flat.kinds[i] = FKind::Tunnel(nt);
            }
        }
        for c in &def.conns {
            if let (Some(Some(f)), Some(Some(t))) = (map.get(c.from), map.get(c.to)) {
                if flat.conns.len() >= MAX_CONNECTIONS {
                    if !self.too_big {
                        self.too_big = true;
                        self.error(&wloc, "too many connections");
                    }
                    return;
                }
                flat.connect(RConn {
                    from: *f,
                    fp: c.fp,
                    to: *t,
                    tp: c.tp,
                    loc: c.loc.clone(),
                });
            }
        }
        for i in new_elems {
            self.expand_element(flat, i, env, depth + 1);
        }
    }

    /// Build the spec: primitive elements in order, and connections with
    /// every pseudo-port hop replaced by what it leads to.
    fn splice(&mut self, flat: &Flat) -> RouterSpec {
        let mut spec = RouterSpec::default();
        let mut router_id: Vec<Option<usize>> = vec![None; flat.names.len()];
        for (i, rid) in router_id.iter_mut().enumerate() {
            let class = match &flat.kinds[i] {
                FKind::Prim(c) => c.clone(),
                FKind::Error => "Error".to_string(),
                FKind::Tunnel(_) | FKind::Compound(_) => continue,
            };
            *rid = Some(spec.elements.len());
            spec.elements.push(ElementDecl {
                name: flat.names[i].clone(),
                class,
                config: flat.configs[i].clone(),
                landmark: flat.locs[i].lm.clone(),
            });
        }

        let mut out_edges: HashMap<(usize, u32), Vec<usize>> = HashMap::new();
        for (ci, c) in flat.conns.iter().enumerate() {
            if matches!(flat.kinds[c.from], FKind::Tunnel(_)) {
                out_edges.entry((c.from, c.fp)).or_default().push(ci);
            }
        }
        self.check_tunnels(flat);

        let mut memo: DestMemo = HashMap::new();
        let mut conns: Vec<(Connection, Landmark)> = Vec::new();
        for c in &flat.conns {
            let Some(from) = router_id[c.from] else {
                continue;
            };
            let dests = self.dests(flat, &out_edges, &router_id, &mut memo, c.to, c.tp);
            for &(to, tp) in dests.iter() {
                if conns.len() >= MAX_CONNECTIONS {
                    break;
                }
                conns.push((
                    Connection {
                        from,
                        from_port: c.fp as usize,
                        to,
                        to_port: tp as usize,
                    },
                    c.loc.lm.clone(),
                ));
            }
        }
        let key = |c: &Connection| (c.to, c.to_port, c.from, c.from_port);
        conns.sort_by_key(|a| key(&a.0));
        conns.dedup_by(|a, b| a.0 == b.0);
        for (c, lm) in conns {
            spec.connections.push(c);
            spec.connection_landmarks.push(lm);
        }
        spec.requirements = std::mem::take(&mut self.requirements);
        spec
    }

    /// Primitive (element, input port) pairs reached by a connection into
    /// `(node, port)`, following pseudo-ports. Cycles through pseudo-ports
    /// lead nowhere.
    fn dests(
        &mut self,
        flat: &Flat,
        out_edges: &HashMap<(usize, u32), Vec<usize>>,
        router_id: &[Option<usize>],
        memo: &mut DestMemo,
        node: usize,
        port: u32,
    ) -> Rc<Vec<(usize, u32)>> {
        if let Some(r) = router_id[node] {
            return Rc::new(vec![(r, port)]);
        }
        if let Some(v) = memo.get(&(node, port)) {
            return v.clone();
        }
        let next = match flat.kinds[node] {
            FKind::Tunnel(Tun::Outer { fin, .. }) => Some(fin),
            FKind::Tunnel(Tun::OutFace { outer: Some(o) }) => Some(o),
            _ => None,
        };
        // Mark in progress so a pseudo-port cycle terminates.
        memo.insert((node, port), Rc::new(Vec::new()));
        let mut result = Vec::new();
        if let Some(n) = next {
            if let Some(edges) = out_edges.get(&(n, port)) {
                for &ci in edges {
                    let c = &flat.conns[ci];
                    let d = self.dests(flat, out_edges, router_id, memo, c.to, c.tp);
                    result.extend(d.iter().copied());
                    if result.len() > MAX_CONNECTIONS {
                        break;
                    }
                }
            }
        }
        let r = Rc::new(result);
        memo.insert((node, port), r.clone());
        r
    }

    /// Report compound and group ports used on one side only, in Click's
    /// order: connections are visited in order and, in each, the output
    /// end before the input end; reaching a compound's port through a
    /// tunnel follows it to the ports it leads to (depth first, each port
    /// once), and a port leading nowhere is reported there.
    fn check_tunnels(&mut self, flat: &Flat) {
        let mut from_at: HashMap<(usize, u32), Vec<usize>> = HashMap::new();
        let mut to_at: HashMap<(usize, u32), Vec<usize>> = HashMap::new();
        for (ci, c) in flat.conns.iter().enumerate() {
            from_at.entry((c.from, c.fp)).or_default().push(ci);
            to_at.entry((c.to, c.tp)).or_default().push(ci);
        }
        let is_tunnel = |e: usize| matches!(flat.kinds[e], FKind::Tunnel(_));
        let none: Vec<usize> = Vec::new();
        let mut seen: HashSet<(usize, u32, bool)> = HashSet::new();
        let mut msgs: Vec<(usize, String)> = Vec::new();
        for c in &flat.conns {
            if !is_tunnel(c.from) && !is_tunnel(c.to) {
                continue;
            }
            for start in [(c.from, c.fp, true), (c.to, c.tp, false)] {
                let mut stack = vec![start];
                while let Some((e, p, out)) = stack.pop() {
                    if !is_tunnel(e) || !seen.insert((e, p, out)) {
                        continue;
                    }
                    // The connections this end leads to, the compound to
                    // blame, and what to say when there are none.
                    let (conns, outer, what) = match (&flat.kinds[e], out) {
                        (&FKind::Tunnel(Tun::Outer { fin, .. }), false) => {
                            (from_at.get(&(fin, p)), e, format!("has no input {p}"))
                        }
                        (&FKind::Tunnel(Tun::InFace { outer: Some(o) }), true) => {
                            (to_at.get(&(o, p)), o, format!("input {p} unused"))
                        }
                        (&FKind::Tunnel(Tun::Outer { fout, .. }), true) => {
                            (to_at.get(&(fout, p)), e, format!("has no output {p}"))
                        }
                        (&FKind::Tunnel(Tun::OutFace { outer: Some(o) }), false) => {
                            (from_at.get(&(o, p)), o, format!("output {p} unused"))
                        }
                        _ => continue,
                    };
                    let conns = conns.unwrap_or(&none);
                    if conns.is_empty() {
                        msgs.push((outer, format!("'{}' {what}", flat.names[outer])));
                    }
                    for &ci in conns.iter().rev() {
                        let k = &flat.conns[ci];
                        stack.push(if out {
                            (k.from, k.fp, true)
                        } else {
                            (k.to, k.tp, false)
                        });
                    }
                }
            }
        }
        for (o, m) in msgs.into_iter().take(1000) {
            let loc = flat.locs[o].clone();
            self.error(&loc, m);
        }
    }
}

/// Primitive destinations reached through a pseudo-port, by (node, port).
type DestMemo = HashMap<(usize, u32), Rc<Vec<(usize, u32)>>>;

enum Resolved {
    Prim(String),
    Def(Rc<CompoundDef>, Vec<String>),
    Error,
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

fn signature(d: &CompoundDef) -> String {
    let mut s = if d.name.is_empty() {
        "<anonymous>".to_string()
    } else {
        d.name.clone()
    };
    if !d.formals.is_empty() {
        let f: Vec<&str> = d
            .formals
            .iter()
            .map(|f| match f.kw.as_str() {
                "" => "<arg>",
                "__REST__" => "...",
                k => k,
            })
            .collect();
        s.push('(');
        s.push_str(&f.join(", "));
        s.push(')');
    }
    s.push_str(&format!(
        "[{} {}, {} {}]",
        d.ninputs,
        plural(d.ninputs as usize, "input"),
        d.noutputs,
        plural(d.noutputs as usize, "output")
    ));
    let _ = &d.lm;
    s
}

/// Match configuration arguments to compound formals: positional first,
/// then `KEYWORD value` arguments, the rest gathered by `__REST__`.
fn assign_arguments(formals: &[Formal], args: &[String]) -> Option<Vec<String>> {
    // Rust 1.80 (the workspace's minimum) lacks Option::is_none_or.
    if !matches!(formals.last(), Some(f) if !f.kw.is_empty()) {
        return if args.len() == formals.len() {
            Some(args.to_vec())
        } else {
            None
        };
    }
    let npos = formals.iter().take_while(|f| f.kw.is_empty()).count();
    if args.len() < npos {
        return None;
    }
    let mut values = vec![String::new(); formals.len()];
    values[..npos].clone_from_slice(&args[..npos]);
    let rest_idx = formals.iter().position(|f| f.kw == "__REST__");
    let mut rest: Vec<String> = Vec::new();
    for arg in &args[npos..] {
        let word_end = arg.find(is_space_char).unwrap_or(arg.len());
        let word = &arg[..word_end];
        let is_kw = !word.is_empty()
            && word
                .bytes()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
        let slot = if is_kw {
            formals
                .iter()
                .position(|f| f.kw == word && f.kw != "__REST__")
        } else {
            None
        };
        match (slot, rest_idx) {
            (Some(j), _) => values[j] = arg[word_end..].trim().to_string(),
            (None, Some(_)) => rest.push(arg.clone()),
            (None, None) => return None,
        }
    }
    if let Some(r) = rest_idx {
        values[r] = rest.join(", ");
    }
    Some(values)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[derive(Clone)]
enum FKind {
    Prim(String),
    Compound(Rc<CompoundClass>),
    Tunnel(Tun),
    Error,
}

impl FKind {
    fn from_class(c: &ClassB) -> FKind {
        match c {
            ClassB::Prim(p) => FKind::Prim(p.clone()),
            ClassB::Compound(cc) => FKind::Compound(cc.clone()),
            ClassB::Error => FKind::Error,
        }
    }
}

/// The whole router while compounds are expanded into it.
#[derive(Default)]
struct Flat {
    names: Vec<String>,
    kinds: Vec<FKind>,
    configs: Vec<String>,
    locs: Vec<Loc>,
    map: HashMap<String, usize>,
    conns: Vec<RConn>,
    nin: Vec<u32>,
    nout: Vec<u32>,
}

impl Flat {
    fn push(
        &mut self,
        name: String,
        kind: FKind,
        config: String,
        loc: Loc,
        register: bool,
    ) -> usize {
        let i = self.names.len();
        if register {
            self.map.insert(name.clone(), i);
        }
        self.names.push(name);
        self.kinds.push(kind);
        self.configs.push(config);
        self.locs.push(loc);
        self.nin.push(0);
        self.nout.push(0);
        i
    }

    fn connect(&mut self, c: RConn) {
        self.nout[c.from] = self.nout[c.from].max(c.fp.saturating_add(1));
        self.nin[c.to] = self.nin[c.to].max(c.tp.saturating_add(1));
        self.conns.push(c);
    }
}

/// The element classes of Click 2.1 (its userlevel driver with every
/// package, as `click -h classes` lists them), one per line, sorted.
const CLICK_CLASSES: &str = include_str!("click_classes.txt");

/// For a name that is a Click element class this router lacks, a hint
/// saying so: Click users otherwise read the error as a typo.
fn not_yet_in_rclick(name: &str) -> Option<String> {
    let known = CLICK_CLASSES
        .lines()
        .collect::<Vec<_>>()
        .binary_search(&name)
        .is_ok();
    known.then(|| {
        format!(
            "'{name}' is a Click element class that rclick does not have yet; \
             docs/elements.md lists the classes it has"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(specs: &[(&str, &str)]) -> Vec<Formal> {
        specs
            .iter()
            .map(|(v, k)| Formal {
                var: v.to_string(),
                kw: k.to_string(),
            })
            .collect()
    }

    fn a(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn argument_assignment() {
        assert_eq!(assign_arguments(&[], &[]), Some(vec![]));
        assert_eq!(assign_arguments(&[], &a(&["x"])), None);
        assert_eq!(
            assign_arguments(&f(&[("a", "")]), &a(&["x"])),
            Some(a(&["x"]))
        );
        let fs = f(&[("a", ""), ("b", "RATE"), ("c", "__REST__")]);
        assert_eq!(assign_arguments(&fs, &a(&["1"])), Some(a(&["1", "", ""])));
        assert_eq!(
            assign_arguments(&fs, &a(&["1", "RATE 5", "X", "Y y"])),
            Some(a(&["1", "5", "X, Y y"]))
        );
        assert_eq!(assign_arguments(&fs, &a(&[])), None);
        let fs = f(&[("b", "RATE")]);
        assert_eq!(assign_arguments(&fs, &a(&["BURST 5"])), None);
    }

    #[test]
    fn distance() {
        assert_eq!(edit_distance("Counter", "Countr"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
