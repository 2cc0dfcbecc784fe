//! The pattern language of IPClassifier and IPFilter: tokenizing, parsing
//! the tcpdump-like syntax into primitives (with Click's qualifier
//! inheritance, `src port 80 or 81`), lowering them to a boolean
//! expression over *atoms* (a masked header word lies in a range), and
//! compiling the rule list into a fast classifier.
//!
//! # Atoms
//! An atom reads the big-endian 32-bit word at `offset` bytes from the IP
//! header ([`Base::Ip`]), from the transport header ([`Base::Transp`]) or
//! from the Ethernet header before the IP header ([`Base::Ether`]), ANDs it
//! with `mask`, and matches when the result lies in `lo..=hi`. A
//! packet too short to hold the last masked byte fails the atom (so a
//! negated atom matches it), as Click's length-checked program does.
//! Transport primitives (`port`, `tcp opt`, `icmp type`, `tcp win`,
//! `tcp[...]`, `transp[...]`) are lowered with Click's guards: first
//! fragment (`ip[6:2] & 0x1fff == 0`) and the transport protocol.
//! Ethernet primitives (`ether src`, `ether dst`, `ether host`) test the
//! 14 bytes before the IP header; a packet without them (see
//! [`packet_ether_header`]) fails those atoms, like a too-short packet.
//!
//! # Compiled form
//! Rules are split into segments evaluated in order; the first segment
//! that decides (a match, to an output or to drop) ends the search:
//! - a *decision program*: steps `(base, offset, mask, lo, hi) yes/no`
//!   with forward jumps, built without duplication from the expression
//!   trees (continuation passing, identical steps shared), then optimized
//!   by carrying what each path proves about header fields (value ranges
//!   and available length) and redirecting branches past steps whose
//!   outcome is already known, as Click's optimizer does. The walk is
//!   Classifier's ([`Facts`] with range knowledge), and the program runs
//!   on Classifier's matcher ([`run`]): the three classifiers run one
//!   program form;
//! - a *box segment*, for long runs of rules that are conjunctions of
//!   per-field range sets (typical ACL rules such as the ClassBench sets):
//!   per field, the value's elementary interval is found through an index
//!   on the value's top bits (comparing a few interval starts, or a binary
//!   search in a crowded bucket) and gives a bit vector of the rules it
//!   satisfies; the vectors are ANDed word by word and the first set bit
//!   is the first matching rule (Lakshman-Stiliadis bit-vector search with
//!   early exit). Vectors
//!   are stored compressed (a summary bit per word, then the nonzero
//!   words: aggregated bit vectors) where that saves half the words. A
//!   segment's words are budgeted in proportion to its rules
//!   ([`CompileOptions::box_words_per_rule`]); a run over budget is split
//!   in halves, so memory stays linear in the rules where one vector per
//!   elementary interval and rule was quadratic (3.45 GB for 100,000
//!   host rules).
//!
//! The decision-program optimizer forgets what a path proved about a
//! field once that takes more than `KNOW_RANGES` (32) ranges, so compiling
//! a long chain of rules on one field takes linear time.
//!
//! Matching reads header words in place and allocates nothing.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::Ipv4Addr;

use rclick_core::conf::{parse_ether, parse_ipv4, parse_ipv4_prefix, parse_u32};
use rclick_core::wire::{ether, icmp, ipv4, tcp, Ipv4Header};

pub use super::ipfilter_click::Program as ClickProgram;
use super::ipfilter_click::{
    action_target as click_target, Builder as ClickBuilder, Comb, OFFSET_MAC, OFFSET_NET,
    OFFSET_TRANSP,
};
use crate::standard::classifier_program::{
    branch_by_yes_no, propagate, reachable, read_partial, renumber, run, Facts, Test, DROP,
};

// ------------------------------------------------------------------ atoms

/// Which header an atom's offset is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    Ip = 0,
    Transp = 1,
    /// The 14-byte Ethernet header before the IP header.
    Ether = 2,
}

/// Header data indexed by [`Base`]: `[ip, transp, ether]`.
pub type HeaderData<'a> = [&'a [u8]; 3];

/// A masked header word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Field {
    pub base: Base,
    /// Byte offset of the word from the header start.
    pub offset: u16,
    /// Mask applied to the big-endian word (never zero).
    pub mask: u32,
}

impl Field {
    /// Bytes the header must hold for the field to be readable: up to the
    /// last masked byte.
    pub fn required(&self) -> usize {
        self.offset as usize + 4 - (self.mask.trailing_zeros() / 8) as usize
    }

    /// The field's value in `data` (the header and what follows), or
    /// `None` when the data is too short.
    #[inline]
    pub fn read(&self, data: &[u8]) -> Option<u32> {
        let o = self.offset as usize;
        if let Some(b) = data.get(o..o + 4) {
            return Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & self.mask);
        }
        read_partial(data, o, self.required()).map(|b| u32::from_be_bytes(b) & self.mask)
    }
}

/// `(word & field.mask)` in `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Atom {
    pub field: Field,
    pub lo: u32,
    pub hi: u32,
}

impl Atom {
    /// Evaluates the atom on the header data (`[ip, transp, ether]`).
    #[inline]
    pub fn eval(&self, data: HeaderData) -> bool {
        match self.field.read(data[self.field.base as usize]) {
            Some(v) => v >= self.lo && v <= self.hi,
            None => false,
        }
    }
}

/// A pattern after parsing: a boolean expression over atoms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Const(bool),
    Atom(Atom),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    /// `COND ? THEN : ELSE`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Direct interpretation (the reference semantics) on the header data
    /// (`[ip, transp, ether]`).
    pub fn eval(&self, data: HeaderData) -> bool {
        match self {
            Expr::Const(b) => *b,
            Expr::Atom(a) => a.eval(data),
            Expr::Not(e) => !e.eval(data),
            Expr::And(v) => v.iter().all(|e| e.eval(data)),
            Expr::Or(v) => v.iter().any(|e| e.eval(data)),
            Expr::If(c, a, b) => {
                if c.eval(data) {
                    a.eval(data)
                } else {
                    b.eval(data)
                }
            }
        }
    }

    fn not(self) -> Expr {
        match self {
            Expr::Const(b) => Expr::Const(!b),
            Expr::Not(e) => *e,
            e => Expr::Not(Box::new(e)),
        }
    }

    fn and(mut v: Vec<Expr>) -> Expr {
        if v.len() == 1 {
            v.pop().unwrap_or(Expr::Const(true))
        } else {
            Expr::And(v)
        }
    }

    fn or(mut v: Vec<Expr>) -> Expr {
        if v.len() == 1 {
            v.pop().unwrap_or(Expr::Const(false))
        } else {
            Expr::Or(v)
        }
    }
}

/// What a matching rule does with the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Output(usize),
    Drop,
}

/// One pattern with its action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub action: Action,
    pub expr: Expr,
}

/// Ethernet-based fields count from two bytes before the 14-byte
/// Ethernet header (Click's program aligns its words so); `pad_ether`
/// places a header in such a buffer (empty when there is none).
#[inline]
pub fn pad_ether<'a>(ether: &[u8], buf: &'a mut [u8; ETHER_PADDED]) -> &'a [u8] {
    match ether.len().checked_sub(ether::HEADER_LEN) {
        Some(skip) => {
            buf[2..].copy_from_slice(&ether[skip..]);
            &buf[..]
        }
        None => &[],
    }
}

/// Length of the padded Ethernet header data (see [`pad_ether`]).
pub const ETHER_PADDED: usize = ether::HEADER_LEN + 2;

/// First-match interpretation of a rule list (the reference semantics):
/// the output, or `None` to drop. The packet has no Ethernet header.
pub fn reference_classify(rules: &[Rule], ip: &[u8], transp: &[u8]) -> Option<usize> {
    reference_classify_ether(rules, &[], ip, transp)
}

/// [`reference_classify`] with the Ethernet header before the IP header
/// (empty when there is none).
pub fn reference_classify_ether(
    rules: &[Rule],
    ether: &[u8],
    ip: &[u8],
    transp: &[u8],
) -> Option<usize> {
    let mut buf = [0u8; ETHER_PADDED];
    let ether = pad_ether(ether, &mut buf);
    for r in rules {
        if r.expr.eval([ip, transp, ether]) {
            return match r.action {
                Action::Output(o) => Some(o),
                Action::Drop => None,
            };
        }
    }
    None
}

// ------------------------------------------------------------------ names

/// Name resolution for addresses and ports (AddressInfo, PortInfo).
pub trait Names {
    /// An IP address: dotted quad or a name.
    fn ipv4(&self, s: &str) -> Option<Ipv4Addr>;
    /// An IP prefix `ADDR/LEN`, `ADDR/MASK`, or a name: (address, mask).
    fn prefix(&self, s: &str) -> Option<(u32, u32)>;
    /// A port *name* (not a number) for protocol 6 or 17.
    fn port(&self, s: &str, proto: u8) -> Option<u16>;
    /// An Ethernet address: `00:01:02:03:04:05`, `00-01-02-03-04-05`, or a
    /// name.
    fn ether(&self, s: &str) -> Option<[u8; 6]> {
        parse_ether(s).ok().map(|e| e.0)
    }
}

/// Only literal addresses and Click's built-in port names.
pub struct StaticNames;

impl Names for StaticNames {
    fn ipv4(&self, s: &str) -> Option<Ipv4Addr> {
        parse_ipv4(s).ok()
    }
    fn prefix(&self, s: &str) -> Option<(u32, u32)> {
        let p = parse_ipv4_prefix(s).ok()?;
        Some((u32::from(p.addr), u32::from(p.mask)))
    }
    fn port(&self, s: &str, _proto: u8) -> Option<u16> {
        if s.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        super::address::parse_known_port(s).ok()
    }
}

/// Click's ICMP type names.
const ICMP_TYPES: &[(&str, u8)] = &[
    ("echo-reply", icmp::ICMP_ECHOREPLY),
    ("unreachable", icmp::ICMP_UNREACH),
    ("sourcequench", icmp::ICMP_SOURCEQUENCH),
    ("redirect", icmp::ICMP_REDIRECT),
    ("echo", icmp::ICMP_ECHO),
    ("routeradvert", icmp::ICMP_ROUTERADVERT),
    ("routersolicit", icmp::ICMP_ROUTERSOLICIT),
    ("timeexceeded", icmp::ICMP_TIMXCEED),
    ("parameterproblem", icmp::ICMP_PARAMPROB),
    ("timestamp", icmp::ICMP_TSTAMP),
    ("timestamp-reply", icmp::ICMP_TSTAMPREPLY),
    ("inforeq", icmp::ICMP_IREQ),
    ("inforeq-reply", icmp::ICMP_IREQREPLY),
    ("maskreq", icmp::ICMP_MASKREQ),
    ("maskreq-reply", icmp::ICMP_MASKREPLY),
];

/// TCP flag names (`tcp opt`).
const TCP_OPTS: &[(&str, u16)] = &[
    ("fin", tcp::TCP_FIN),
    ("syn", tcp::TCP_SYN),
    ("rst", tcp::TCP_RST),
    ("psh", tcp::TCP_PSH),
    ("ack", tcp::TCP_ACK),
    ("urg", tcp::TCP_URG),
];

const ICMP: u32 = ipv4::PROTO_ICMP as u32;
const TCP: u32 = ipv4::PROTO_TCP as u32;
const UDP: u32 = ipv4::PROTO_UDP as u32;

fn ip_proto_name(s: &str) -> Option<u32> {
    if s.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    super::address::parse_ip_proto(s).ok().map(u32::from)
}

// ------------------------------------------------------------- tokenizer

/// Splits a pattern into words as Click does: `&&`, `||`, `==`, `!=`,
/// `<=`, `>=` and single punctuation are words of their own; other words
/// run over letters, digits and `-./@_:`.
pub fn tokenize(text: &str) -> Vec<String> {
    let s: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let next = s.get(i + 1).copied();
        let two = match c {
            '&' | '|' => next == Some(c),
            '<' | '>' | '!' | '=' => next == Some('='),
            _ => false,
        };
        if two {
            out.push(s[i..i + 2].iter().collect());
            i += 2;
            continue;
        }
        let is_word =
            |c: char| c.is_alphanumeric() || matches!(c, '-' | '.' | '/' | '@' | '_' | ':');
        if is_word(c) {
            let start = i;
            while i < s.len() && is_word(s[i]) {
                i += 1;
            }
            out.push(s[start..i].iter().collect());
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

// ------------------------------------------------------------ primitives

/// Transport protocol qualifier of a primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proto {
    Unknown,
    Num(u32),
    TcpOrUdp,
    /// `transp[...]`: any protocol.
    Transp,
}

/// A header field named by the syntax: bit position and width, and
/// whether it lives in the transport header (with its protocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FieldSpec {
    transp: Option<Proto>,
    bit_offset: u32,
    nbits: u32,
    name: &'static str,
}

const fn ip_field(bit_offset: u32, nbits: u32, name: &'static str) -> FieldSpec {
    FieldSpec {
        transp: None,
        bit_offset,
        nbits,
        name,
    }
}

const F_VERS: FieldSpec = ip_field(0, 4, "ip vers");
const F_HL: FieldSpec = ip_field(4, 4, "ip hl");
const F_TOS: FieldSpec = ip_field(8, 8, "ip tos");
const F_DSCP: FieldSpec = ip_field(8, 6, "ip dscp");
const F_LEN: FieldSpec = ip_field(16, 16, "ip len");
const F_ID: FieldSpec = ip_field(32, 16, "ip id");
const F_TTL: FieldSpec = ip_field(64, 8, "ip ttl");
const F_TCP_WIN: FieldSpec = FieldSpec {
    transp: Some(Proto::Num(TCP)),
    ..ip_field(112, 16, "tcp win")
};
const F_ICMP_TYPE: FieldSpec = FieldSpec {
    transp: Some(Proto::Num(ICMP)),
    ..ip_field(0, 8, "icmp type")
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    None,
    Host,
    Net,
    Proto,
    Port,
    TcpOpt,
    Frag,
    Unfrag,
    Ect,
    Ce,
    /// `ether host`: an Ethernet address before the IP header.
    Ether,
    Field(FieldSpec),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Data {
    None,
    Int(u32),
    Host(u32),
    Net(u32, u32),
    Proto(u32),
    Port(u32),
    TcpOpt(u32),
    Field(FieldSpec, u32),
    Ether([u8; 6]),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SrcDst {
    None,
    Src,
    Dst,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Gt,
    Lt,
}

#[derive(Clone, Copy, Debug)]
struct Prim {
    ty: Ty,
    data: Data,
    srcdst: SrcDst,
    /// `src`/`dst` as written (before a default or an inherited one), for
    /// messages that name the directive as Click does.
    written_srcdst: SrcDst,
    proto: Proto,
    op: Op,
    op_neg: bool,
}

impl Default for Prim {
    fn default() -> Self {
        Prim {
            ty: Ty::None,
            data: Data::None,
            srcdst: SrcDst::None,
            written_srcdst: SrcDst::None,
            proto: Proto::Unknown,
            op: Op::Eq,
            op_neg: false,
        }
    }
}

fn type_word(w: &str) -> Option<Ty> {
    Some(match w {
        "ce" => Ty::Ce,
        "dscp" => Ty::Field(F_DSCP),
        "ect" => Ty::Ect,
        "frag" => Ty::Frag,
        "hl" => Ty::Field(F_HL),
        "host" => Ty::Host,
        "id" => Ty::Field(F_ID),
        "len" => Ty::Field(F_LEN),
        "net" => Ty::Net,
        "opt" => Ty::TcpOpt,
        "port" => Ty::Port,
        "proto" => Ty::Proto,
        "tos" => Ty::Field(F_TOS),
        "ttl" => Ty::Field(F_TTL),
        "type" => Ty::Field(F_ICMP_TYPE),
        "unfrag" => Ty::Unfrag,
        "vers" => Ty::Field(F_VERS),
        "win" => Ty::Field(F_TCP_WIN),
        _ => return None,
    })
}

fn proto_text(p: Proto) -> String {
    match p {
        Proto::Unknown => String::new(),
        Proto::Num(ICMP) => "icmp".into(),
        Proto::Num(TCP) => "tcp".into(),
        Proto::Num(UDP) => "udp".into(),
        Proto::Num(n) => format!("ip proto {n}"),
        Proto::TcpOrUdp => "tcpudp".into(),
        Proto::Transp => "transp".into(),
    }
}

/// A warning-collecting parse of one pattern.
struct Parser<'a> {
    toks: &'a [String],
    pos: usize,
    names: &'a dyn Names,
    prev: Option<Prim>,
    warnings: Vec<String>,
    /// Open parentheses and ternaries around the current position.
    depth: usize,
    /// Click's program for the pattern, built as Click builds it while
    /// parsing (for the `program` handler only).
    click: ClickBuilder,
}

type PResult<T> = Result<T, String>;

/// How deeply a pattern may nest parentheses and `? :`. The parser and
/// the compiler recurse once per level; a pattern nested 10,000 deep
/// overflowed the stack and killed the process (a live router too, when
/// sent as `hotconfig`). Real patterns nest a handful of levels.
pub const MAX_PATTERN_DEPTH: usize = 256;

fn is_stop(w: &str) -> bool {
    matches!(w, ")" | "||" | "or" | "?" | ":")
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.toks.get(self.pos).map(|s| s.as_str())
    }

    fn peek_at(&self, k: usize) -> Option<&'a str> {
        self.toks.get(self.pos + k).map(|s| s.as_str())
    }

    /// expr ::= orexpr [ '?' expr ':' expr ], at most
    /// [`MAX_PATTERN_DEPTH`] deep.
    fn expr(&mut self) -> PResult<Expr> {
        if self.depth >= MAX_PATTERN_DEPTH {
            return Err(format!(
                "pattern nested too deeply (more than {MAX_PATTERN_DEPTH} levels)"
            ));
        }
        self.depth += 1;
        let e = self.expr_at_depth();
        self.depth -= 1;
        e
    }

    fn expr_at_depth(&mut self) -> PResult<Expr> {
        self.click.start();
        let c = self.orexpr()?;
        if self.peek() != Some("?") {
            self.click.finish(Comb::Ternary);
            return Ok(c);
        }
        self.pos += 1;
        let a = self.expr()?;
        if self.peek() != Some(":") {
            return Err(match self.peek() {
                Some(w) => format!("':' missing in ternary expression at '{w}'"),
                None => "':' missing in ternary expression".into(),
            });
        }
        self.pos += 1;
        let b = self.expr()?;
        self.click.finish(Comb::Ternary);
        Ok(Expr::If(Box::new(c), Box::new(a), Box::new(b)))
    }

    /// orexpr ::= term { ('or' | '||') term }
    fn orexpr(&mut self) -> PResult<Expr> {
        self.click.start();
        let mut v = vec![self.term()?];
        while matches!(self.peek(), Some("or") | Some("||")) {
            self.pos += 1;
            v.push(self.term()?);
        }
        self.click.finish(Comb::Or);
        Ok(Expr::or(v))
    }

    /// term ::= factor { ['and' | '&&'] factor }
    fn term(&mut self) -> PResult<Expr> {
        self.click.start();
        let mut v = Vec::new();
        loop {
            match self.factor(false)? {
                Some(e) => v.push(e),
                None => {
                    return Err(match (v.is_empty(), self.peek()) {
                        (true, Some(w)) => format!("missing term before '{w}'"),
                        (false, Some(w)) => format!("missing term after 'and' before '{w}'"),
                        (_, None) => "missing term at end of pattern".into(),
                    });
                }
            }
            if matches!(self.peek(), Some("and") | Some("&&")) {
                self.pos += 1;
                continue;
            }
            match self.peek() {
                None => break,
                Some(w) if is_stop(w) => break,
                _ => {}
            }
        }
        self.click.finish(Comb::And);
        Ok(Expr::and(v))
    }

    /// A factor, or `None` when none starts here.
    fn factor(&mut self, negated: bool) -> PResult<Option<Expr>> {
        let Some(w) = self.peek() else {
            return Ok(None);
        };
        if is_stop(w) || w == "and" || w == "&&" {
            return Ok(None);
        }
        let e = match w {
            "true" | "false" => {
                self.pos += 1;
                // Click: an always-true test, negated for `false`.
                self.click.add(0, 0, 0);
                if negated == (w == "true") {
                    self.click.negate(false);
                }
                Expr::Const(w == "true")
            }
            "not" | "!" => {
                // A run of negations is counted, not recursed into: any
                // number of them costs no stack.
                let mut negated = negated;
                let mut last = w;
                while let Some(n @ ("not" | "!")) = self.peek() {
                    self.pos += 1;
                    negated = !negated;
                    last = n;
                }
                return match self.factor(negated)? {
                    Some(e) => Ok(Some(e)),
                    None => Err(format!("missing factor after '{last}'")),
                };
            }
            "(" => {
                self.pos += 1;
                if self.peek() == Some(")") || self.peek().is_none() {
                    return Err("missing expression after '('".into());
                }
                let e = self.expr()?;
                match self.peek() {
                    Some(")") => self.pos += 1,
                    Some(w) => return Err(format!("missing ')' before '{w}'")),
                    None => return Err("missing ')'".into()),
                }
                if negated {
                    self.click.negate(false);
                }
                e
            }
            _ => return self.primitive(negated).map(Some),
        };
        Ok(Some(if negated { e.not() } else { e }))
    }

    /// quals [ '[' POS[:LEN] ']' ] [ '&' MASK ] [ RELOP ] [ DATA ]
    fn primitive(&mut self, mut negated: bool) -> PResult<Expr> {
        let first = self.pos;
        let mut prim = Prim::default();
        let mut ether = false;
        // Qualifiers.
        while let Some(w) = self.peek() {
            if w == "ether" {
                if ether {
                    return Err("'ether' specified twice".into());
                }
                ether = true;
            } else if let Some(t) = type_word(w) {
                if prim.ty != Ty::None {
                    return Err(format!("type specified twice at '{w}'"));
                }
                prim.ty = t;
                if let Ty::Field(f) = t {
                    if let Some(p) = f.transp {
                        set_proto(&mut prim, p, w)?;
                    }
                }
            } else if let Some(p) = ip_proto_name(w) {
                set_proto(&mut prim, Proto::Num(p), w)?;
            } else if w == "transp" {
                set_proto(&mut prim, Proto::Transp, w)?;
            } else if w == "tcpudp" {
                set_proto(&mut prim, Proto::TcpOrUdp, w)?;
            } else if w == "src" {
                let sd = match (self.peek_at(1), self.peek_at(2)) {
                    (Some("and") | Some("&&"), Some("dst") | Some("dest")) => {
                        self.pos += 2;
                        SrcDst::And
                    }
                    (Some("or") | Some("||"), Some("dst") | Some("dest")) => {
                        self.pos += 2;
                        SrcDst::Or
                    }
                    _ => SrcDst::Src,
                };
                set_srcdst(&mut prim, sd)?;
            } else if w == "dst" || w == "dest" {
                set_srcdst(&mut prim, SrcDst::Dst)?;
            } else if w == "ip" {
                // nothing
            } else if w == "not" || w == "!" {
                negated = !negated;
            } else {
                break;
            }
            self.pos += 1;
        }
        if self.pos != first {
            self.prev = None;
        }
        if ether {
            // `[SRCORDST] ether host ETH`, also `ether src ETH`, `ether dst
            // host ETH` (tcpdump's order) and `ether ETH`.
            if prim.proto != Proto::Unknown || !matches!(prim.ty, Ty::None | Ty::Host) {
                return Err("'ether' takes only 'src', 'dst' and 'host' qualifiers".into());
            }
            prim.ty = Ty::Ether;
        }
        // The optional parts look ahead only when a word follows.
        let has_next = |p: &Parser| p.pos + 1 < p.toks.len();
        if self.peek() == Some("[") && self.pos > first && prim.ty == Ty::None {
            self.brackets(&mut prim)?;
        }
        let mut provided_mask = 0u32;
        if self.peek() == Some("&") && has_next(self) {
            // The mask is a number or, for addresses, an IP address
            // (`src & 255.0.0.0 = 10.0.0.0`).
            let mw = &self.toks[self.pos + 1];
            if let Some(m) = parse_u32(mw)
                .ok()
                .or_else(|| self.names.ipv4(mw).map(u32::from))
            {
                self.pos += 2;
                if m == 0 {
                    return Err("bitmask of 0 ignored".into());
                }
                provided_mask = m;
            }
        }
        let mut op_word = None;
        if has_next(self) {
            let w = self.peek().unwrap_or("");
            let op = match w {
                "=" | "==" => Some((Op::Eq, false)),
                "!=" => Some((Op::Eq, true)),
                ">" => Some((Op::Gt, false)),
                "<" => Some((Op::Lt, false)),
                ">=" => Some((Op::Lt, true)),
                "<=" => Some((Op::Gt, true)),
                _ => None,
            };
            if let Some((op, neg)) = op {
                prim.op = op;
                prim.op_neg = neg;
                op_word = Some(w);
                self.pos += 1;
            }
        }
        // Data.
        let after_ether = self.prev.is_some_and(|p| p.ty == Ty::Ether);
        if prim.ty == Ty::Ether {
            match self.peek() {
                Some(w) if !is_stop(w) && w != "and" && w != "&&" => match self.names.ether(w) {
                    Some(e) => {
                        prim.data = Data::Ether(e);
                        self.pos += 1;
                    }
                    None => {
                        return Err(format!(
                            "bad Ethernet address '{w}' in 'ether host' directive"
                        ))
                    }
                },
                _ => return Err("Ethernet address missing in 'ether host' directive".into()),
            }
        } else if let Some(e) = self
            .peek()
            .filter(|_| after_ether && prim.ty == Ty::None)
            .and_then(|w| self.names.ether(w))
        {
            // `ether host A or B`: B inherits the Ethernet test.
            prim.data = Data::Ether(e);
            self.pos += 1;
        } else if let Some(e) = self
            .peek()
            .filter(|_| matches!(prim.ty, Ty::None | Ty::Host))
            .and_then(|w| parse_ether(w).ok())
        {
            // An Ethernet address where an IP address could be: `src
            // 0:1:2:3:4:5`, `host 9:A:B:C:D:E` test the Ethernet header.
            prim.ty = Ty::Ether;
            prim.data = Data::Ether(e.0);
            self.pos += 1;
        } else if let Some(w) = self.peek() {
            match self.lookup_data(w, &prim)? {
                Some(d) => {
                    prim.data = d;
                    self.pos += 1;
                }
                None => {
                    if let Ok(n) = parse_u32(w) {
                        prim.data = Data::Int(n);
                        self.pos += 1;
                    } else if let Some(a) = self.names.ipv4(w) {
                        self.pos += 1;
                        let a = u32::from(a);
                        let masked = match (self.peek(), self.peek_at(1)) {
                            (Some("mask"), Some(m)) => self.names.ipv4(m).map(u32::from),
                            _ => None,
                        };
                        if let Some(m) = masked {
                            self.pos += 2;
                            prim.data = Data::Net(a, m);
                        } else if prim.ty == Ty::Net {
                            prim.data = Data::Net(a, u32::MAX);
                        } else {
                            prim.data = Data::Host(a);
                        }
                    } else if let Some((a, m)) = self.names.prefix(w) {
                        self.pos += 1;
                        prim.data = Data::Net(a, m);
                    } else if let Some(op) = op_word {
                        return Err(format!("dangling operator '{op}' near '{w}'"));
                    }
                }
            }
        }
        if self.pos == first {
            return Err(match self.peek() {
                Some(w) => format!("unknown word '{w}'"),
                None => "empty term".into(),
            });
        }
        let data_missing = prim.data == Data::None;
        let warnings_before = self.warnings.len();
        let prim = match self.check(prim, provided_mask) {
            Ok(p) => p,
            Err(e) => {
                return Err(match self.peek() {
                    Some(w) if data_missing && !is_stop(w) && w != "and" && w != "&&" => {
                        format!("{e} near '{w}'")
                    }
                    _ => e,
                })
            }
        };
        if let Some(w) = check_value_range(&prim, provided_mask, op_word.unwrap_or("="))? {
            // Click finds the relation while reading the value, before it
            // checks the directive.
            self.warnings.insert(warnings_before, w);
        }
        self.prev = Some(prim);
        let e = lower(&prim, provided_mask)?;
        click_primitive(&mut self.click, &prim, provided_mask);
        if negated {
            self.click.negate(false);
        }
        Ok(if negated { e.not() } else { e })
    }

    fn brackets(&mut self, prim: &mut Prim) -> PResult<()> {
        self.pos += 1;
        let mut comb = String::new();
        loop {
            match self.peek() {
                None => return Err("missing ']'".into()),
                Some("]") => {
                    self.pos += 1;
                    break;
                }
                Some(w) => {
                    comb.push_str(w);
                    self.pos += 1;
                }
            }
        }
        let parsed = match comb.split_once(':') {
            Some((a, b)) => parse_u32(a).ok().zip(parse_u32(b).ok()),
            None => parse_u32(&comb).ok().map(|p| (p, 1)),
        };
        let Some((pos, len)) = parsed else {
            return Err(format!(
                "syntax error after '[' at '{comb}', expected '[POS]' or '[POS:LEN]'"
            ));
        };
        if !(1..=4).contains(&len) {
            return Err(format!(
                "LEN in '[{comb}]' out of range, should be between 1 and 4"
            ));
        }
        if pos > 0xFFFF || (pos & !3) != ((pos + len - 1) & !3) {
            return Err(format!("field [{pos}:{len}] does not fit in a single word"));
        }
        let transp = match prim.proto {
            Proto::Unknown => None,
            p => Some(p),
        };
        prim.ty = Ty::Field(FieldSpec {
            transp,
            bit_offset: pos * 8,
            nbits: len * 8,
            name: if transp.is_some() {
                "transp[...]"
            } else {
                "ip[...]"
            },
        });
        Ok(())
    }

    /// Named data: protocols, ports, TCP flags, ICMP types, filtered by
    /// the primitive's type and protocol. `Ok(None)` when the word names
    /// none of them.
    fn lookup_data(&self, w: &str, prim: &Prim) -> PResult<Option<Data>> {
        if prim.ty == Ty::None && type_word(w).is_some() {
            return Ok(None);
        }
        let ty = prim.ty;
        let pr = prim.proto;
        let tcp_ok = matches!(pr, Proto::Unknown | Proto::Num(TCP) | Proto::TcpOrUdp);
        let udp_ok = matches!(pr, Proto::Unknown | Proto::Num(UDP) | Proto::TcpOrUdp);
        let proto = ip_proto_name(w);
        let tport = self.names.port(w, ipv4::PROTO_TCP);
        let uport = self.names.port(w, ipv4::PROTO_UDP);
        let opt = TCP_OPTS.iter().find(|e| e.0 == w).map(|e| u32::from(e.1));
        let icmp = ICMP_TYPES.iter().find(|e| e.0 == w).map(|e| u32::from(e.1));
        if proto.is_none() && tport.is_none() && uport.is_none() && opt.is_none() && icmp.is_none()
        {
            return Ok(None);
        }
        let mut found: Vec<(Data, String)> = Vec::new();
        let mut all: Vec<String> = Vec::new();
        if let Some(p) = proto {
            all.push(format!("proto {w}"));
            if matches!(ty, Ty::None | Ty::Proto) {
                found.push((Data::Proto(p), String::new()));
            }
        }
        let port_ty = matches!(ty, Ty::None | Ty::Port);
        if let Some(p) = tport {
            all.push(format!("tcp port {w}"));
            if port_ty && tcp_ok {
                found.push((Data::Port(p as u32), String::new()));
            }
        }
        if let Some(p) = uport {
            all.push(format!("udp port {w}"));
            if port_ty && udp_ok && !(tport == uport && tcp_ok) {
                found.push((Data::Port(p as u32), String::new()));
            }
        }
        if let Some(o) = opt {
            all.push(format!("tcp opt {w}"));
            if matches!(ty, Ty::None | Ty::TcpOpt) && tcp_ok {
                found.push((Data::TcpOpt(o), String::new()));
            }
        }
        if let Some(t) = icmp {
            all.push(format!("icmp type {w}"));
            let ty_ok = match ty {
                Ty::None => true,
                Ty::Field(f) => f == F_ICMP_TYPE,
                _ => false,
            };
            if ty_ok && matches!(pr, Proto::Unknown | Proto::Num(ICMP)) {
                found.push((Data::Field(F_ICMP_TYPE, t), String::new()));
            }
        }
        if found.len() == 1 {
            return Ok(Some(found[0].0));
        }
        let what = if found.len() > 1 {
            "ambiguous"
        } else {
            "meaningless"
        };
        let tries: Vec<String> = all.iter().map(|s| format!("'{s}'")).collect();
        Err(format!("'{w}' is {what} here; try {}", tries.join(", ")))
    }

    /// Fills in the type from the data and the previous primitive, and
    /// checks that they agree (Click's `Primitive::check`).
    fn check(&mut self, mut p: Prim, provided_mask: u32) -> PResult<Prim> {
        let old_srcdst = p.srcdst;
        let prev = self.prev.unwrap_or_default();
        if p.ty == Ty::None {
            let mut data = p.data;
            loop {
                match data {
                    Data::Host(_) => p.ty = Ty::Host,
                    Data::Net(..) => p.ty = Ty::Net,
                    Data::Ether(_) => p.ty = Ty::Ether,
                    Data::TcpOpt(_) => p.ty = Ty::TcpOpt,
                    Data::Proto(_) => p.ty = Ty::Proto,
                    Data::Port(_) => {
                        p.ty = Ty::Port;
                        if p.proto == Proto::Unknown {
                            p.proto = prev.proto;
                        }
                    }
                    Data::Field(f, _) => {
                        p.ty = Ty::Field(f);
                        if p.proto == Proto::Unknown {
                            if let Some(tp) = f.transp {
                                p.proto = tp;
                            }
                        }
                    }
                    Data::Int(_) => {
                        // `src port 80 or 81`: the previous primitive's type.
                        data = match prev.ty {
                            Ty::Field(f) => Data::Field(f, 0),
                            Ty::Proto => Data::Proto(0),
                            Ty::Port => Data::Port(0),
                            _ => return Err("specify header field or 'port'".into()),
                        };
                        continue;
                    }
                    Data::None => {
                        if p.proto != Proto::Unknown {
                            p.ty = Ty::Proto;
                        } else {
                            return Err("partial directive".into());
                        }
                    }
                }
                break;
            }
            if matches!(p.ty, Ty::Host | Ty::Net | Ty::TcpOpt | Ty::Port | Ty::Ether)
                && p.srcdst == SrcDst::None
            {
                p.srcdst = prev.srcdst;
            }
            if let Ty::Field(f) = p.ty {
                if p.proto == Proto::Unknown {
                    if let Some(tp) = f.transp {
                        p.proto = tp;
                    }
                }
            }
        }
        let int = |d: Data| match d {
            Data::Int(n) | Data::Proto(n) | Data::Port(n) | Data::TcpOpt(n) => Some(n),
            Data::Field(_, n) => Some(n),
            _ => None,
        };
        match p.ty {
            Ty::Host => {
                if !matches!(p.data, Data::Host(_)) {
                    return Err("IP address missing in 'host' directive".into());
                }
                if p.op != Op::Eq {
                    return Err("can't use relational operators with 'host'".into());
                }
            }
            Ty::Ether => {
                if !matches!(p.data, Data::Ether(_)) {
                    return Err("Ethernet address missing in 'ether host' directive".into());
                }
                if p.op != Op::Eq {
                    return Err("can't use relational operators with 'ether host'".into());
                }
                if provided_mask != 0 {
                    return Err("can't use masks with 'ether host'".into());
                }
            }
            Ty::Net => {
                if !matches!(p.data, Data::Net(..)) {
                    return Err("IP prefix missing in 'net' directive".into());
                }
                if p.op != Op::Eq {
                    return Err("can't use relational operators with 'net'".into());
                }
            }
            Ty::Proto => {
                let v = match p.data {
                    Data::Int(n) | Data::Proto(n) => {
                        if let Proto::Num(q) = p.proto {
                            if q != n {
                                return Err("transport protocol specified twice".into());
                            }
                        }
                        n
                    }
                    Data::None => match p.proto {
                        Proto::Num(n) => n,
                        Proto::Transp => 256,
                        _ => return Err("IP protocol missing in 'proto' directive".into()),
                    },
                    _ => return Err("IP protocol missing in 'proto' directive".into()),
                };
                if v >= 256 && (p.op != Op::Eq || provided_mask != 0) {
                    let what = match p.proto {
                        Proto::Unknown => proto_text(Proto::Num(v)),
                        named => proto_text(named),
                    };
                    return Err(format!("'{what}': operator or mask not supported"));
                }
                p.data = Data::Int(v);
            }
            Ty::Port => {
                let Some(n) =
                    int(p.data).filter(|_| matches!(p.data, Data::Int(_) | Data::Port(_)))
                else {
                    return Err("port number missing in 'port' directive".into());
                };
                p.data = Data::Int(n);
                match p.proto {
                    Proto::Unknown => p.proto = Proto::TcpOrUdp,
                    Proto::Num(TCP) | Proto::Num(UDP) | Proto::TcpOrUdp => {}
                    other => {
                        return Err(format!(
                            "bad protocol '{}' for 'port' directive",
                            proto_text(other)
                        ))
                    }
                }
            }
            Ty::TcpOpt => {
                let Some(n) =
                    int(p.data).filter(|_| matches!(p.data, Data::Int(_) | Data::TcpOpt(_)))
                else {
                    return Err("TCP options missing in 'tcp opt' directive".into());
                };
                match p.proto {
                    Proto::Unknown => p.proto = Proto::Num(TCP),
                    Proto::Num(TCP) => {}
                    other => {
                        return Err(format!(
                            "bad protocol '{}' for 'tcp opt' directive",
                            proto_text(other)
                        ))
                    }
                }
                if p.op != Op::Eq || p.op_neg || provided_mask != 0 {
                    return Err("can't use relational operators or masks with 'tcp opt'".into());
                }
                if n > 255 {
                    return Err(format!("'tcp opt': value {n} out of range"));
                }
                p.data = Data::Int(n);
            }
            Ty::Ect => match p.data {
                Data::None | Data::Int(_) => {}
                _ => return Err("weird data given to 'ip ect' directive".into()),
            },
            Ty::Ce | Ty::Frag | Ty::Unfrag => {
                if p.data != Data::None {
                    let name = match p.ty {
                        Ty::Ce => "ip ce",
                        Ty::Frag => "ip frag",
                        _ => "ip unfrag",
                    };
                    return Err(format!("'{name}' directive takes no data"));
                }
            }
            Ty::Field(f) => {
                let ok = match p.data {
                    Data::Int(_) => true,
                    Data::Field(g, _) => g == f,
                    _ => false,
                };
                let Some(n) = int(p.data).filter(|_| ok) else {
                    return Err(format!("value missing in '{}' directive", f.name));
                };
                p.data = Data::Int(n);
            }
            Ty::None => return Err("partial directive".into()),
        }
        if matches!(p.ty, Ty::Host | Ty::Net | Ty::Port | Ty::Ether) {
            if p.srcdst == SrcDst::None {
                p.srcdst = SrcDst::Or;
            }
        } else if old_srcdst != SrcDst::None {
            self.warnings
                .push(format!("'{}': 'src' or 'dst' ignored", directive_name(&p)));
        }
        Ok(p)
    }
}

/// A directive's name as Click's messages print it (`src ip ttl`, `port`,
/// `tcp[...]`): the `src`/`dst` words as written, then the type.
fn directive_name(p: &Prim) -> String {
    let srcdst = match p.written_srcdst {
        SrcDst::None => "",
        SrcDst::Src => "src ",
        SrcDst::Dst => "dst ",
        SrcDst::And => "src and dst ",
        SrcDst::Or => "src or dst ",
    };
    let ty = match p.ty {
        Ty::None => String::new(),
        Ty::Host => "host".into(),
        Ty::Net => "net".into(),
        Ty::Proto => "proto".into(),
        Ty::Port => "port".into(),
        Ty::TcpOpt => "tcp opt".into(),
        Ty::Frag => "ip frag".into(),
        Ty::Unfrag => "ip unfrag".into(),
        Ty::Ect => "ip ect".into(),
        Ty::Ce => "ip ce".into(),
        Ty::Ether => "ether host".into(),
        Ty::Field(f) => field_name(f),
    };
    format!("{srcdst}{ty}")
}

/// The named fields, for naming a bracketed field that is one of them.
const NAMED_FIELDS: [FieldSpec; 9] = [
    F_VERS,
    F_HL,
    F_TOS,
    F_DSCP,
    F_LEN,
    F_ID,
    F_TTL,
    F_TCP_WIN,
    F_ICMP_TYPE,
];

/// A field's name: `ip[8]` is `ip ttl` to Click, as `tcp[14:2]` is `tcp
/// win`; a bracketed field that is no named one is `ip[...]`, `tcp[...]`.
fn field_name(f: FieldSpec) -> String {
    if !f.name.ends_with("[...]") {
        return f.name.into();
    }
    let same =
        |g: &&FieldSpec| g.transp == f.transp && g.bit_offset == f.bit_offset && g.nbits == f.nbits;
    match NAMED_FIELDS.iter().find(same) {
        Some(g) => g.name.into(),
        None => match f.transp {
            None => "ip[...]".into(),
            Some(p) => format!("{}[...]", proto_text(p)),
        },
    }
}

/// Checks a numeric directive's value against its field's range, as Click
/// does while reading it: an `==` value that cannot fit is an error
/// (`'ip ttl': out of range, bound 255`); a relation that every value or
/// none satisfies is returned as a warning (`relation '> 255' is always
/// false (range 0-255)`).
fn check_value_range(p: &Prim, provided_mask: u32, op_word: &str) -> PResult<Option<String>> {
    let full = match p.ty {
        Ty::Field(f) if f.nbits >= 32 => u32::MAX,
        Ty::Field(f) => (1u32 << f.nbits) - 1,
        Ty::Port => 0xFFFF,
        Ty::Proto => 0xFF,
        _ => return Ok(None),
    };
    let Data::Int(v) = p.data else {
        return Ok(None);
    };
    if provided_mask & !full != 0 {
        // The mask's own error comes when the test is built.
        return Ok(None);
    }
    let range = if provided_mask != 0 {
        provided_mask
    } else {
        full
    };
    match p.op {
        // A protocol number past 255 is one of the names (`transp`).
        Op::Eq if p.ty == Ty::Proto => Ok(None),
        Op::Eq if v > full => Err(format!(
            "'{}': out of range, bound {full}",
            directive_name(p)
        )),
        Op::Eq => Ok(None),
        Op::Gt | Op::Lt => {
            let always = match p.op {
                Op::Lt if v == 0 => Some(false),
                Op::Lt if v > range => Some(true),
                Op::Gt if v >= range => Some(false),
                _ => None,
            };
            Ok(always.map(|b| {
                format!(
                    "relation '{op_word} {v}' is always {} (range 0-{range})",
                    b != p.op_neg
                )
            }))
        }
    }
}

fn set_proto(p: &mut Prim, x: Proto, w: &str) -> PResult<()> {
    if p.proto != Proto::Unknown && p.proto != x {
        return Err(format!("transport protocol specified twice at '{w}'"));
    }
    p.proto = x;
    Ok(())
}

fn set_srcdst(p: &mut Prim, x: SrcDst) -> PResult<()> {
    if p.srcdst != SrcDst::None {
        return Err("'src' or 'dst' specified twice".into());
    }
    p.srcdst = x;
    p.written_srcdst = x;
    Ok(())
}

// --------------------------------------------------------------- lowering

fn atom(base: Base, offset: u32, mask: u32, lo: u32, hi: u32) -> Expr {
    if mask == 0 {
        return Expr::Const(lo == 0);
    }
    Expr::Atom(Atom {
        field: Field {
            base,
            offset: offset as u16,
            mask,
        },
        lo,
        hi,
    })
}

/// `(word >> shift) & this_mask` compared with `v`: the relation without
/// its negation (for host/port, negation wraps the src/dst combination).
/// Returns the expression and whether it must still be negated.
#[allow(clippy::too_many_arguments)]
fn comparison(
    base: Base,
    offset: u32,
    shift: u32,
    full_mask: u32,
    provided: u32,
    op: Op,
    op_neg: bool,
    v: u32,
) -> PResult<(Expr, bool)> {
    let m = if provided != 0 { provided } else { full_mask };
    if m & !full_mask != 0 {
        return Err(format!(
            "mask 0x{provided:X} out of range (0-0x{full_mask:X})"
        ));
    }
    let wm = m << shift;
    match op {
        Op::Eq => {
            if v > full_mask {
                return Err(format!("value {v} out of range (0-{full_mask})"));
            }
            let x = (v & m) << shift;
            Ok((atom(base, offset, wm, x, x), op_neg))
        }
        Op::Gt | Op::Lt => {
            // Values of (field & m) lie in 0..=m.
            let always = match op {
                Op::Lt if v == 0 => Some(false),
                Op::Lt if v > m => Some(true),
                Op::Gt if v >= m => Some(false),
                _ => None,
            };
            if let Some(b) = always {
                return Ok((Expr::Const(b != op_neg), false));
            }
            // x < v  ==  !(x > v - 1)
            let (gt, neg) = match op {
                Op::Lt => (v - 1, !op_neg),
                _ => (v, op_neg),
            };
            Ok((atom(base, offset, wm, (gt + 1) << shift, m << shift), neg))
        }
    }
}

/// The fragment word bits that are zero in an unfragmented packet.
const FRAGMENT_BITS: u32 = (ipv4::IP_MF | ipv4::IP_OFFMASK) as u32;

fn frag_ok() -> Expr {
    atom(Base::Ip, 4, u32::from(ipv4::IP_OFFMASK), 0, 0)
}

fn proto_is(p: u32) -> Expr {
    atom(Base::Ip, 8, 0x00FF_0000, p << 16, p << 16)
}

fn host_side(offset: u32, a: u32, m: u32) -> Expr {
    let v = a & m;
    if m.leading_ones() + m.trailing_zeros() == 32 {
        // A prefix: a range of whole addresses (shares the field with
        // every other prefix test of that address).
        atom(Base::Ip, offset, u32::MAX, v, v | !m)
    } else {
        atom(Base::Ip, offset, m, v, v)
    }
}

fn combine(sd: SrcDst, s: Expr, d: Expr) -> Expr {
    match sd {
        SrcDst::Src => s,
        SrcDst::Dst => d,
        SrcDst::And => Expr::And(vec![s, d]),
        _ => Expr::Or(vec![s, d]),
    }
}

/// The relation's negation (`!=`, `<` as not-greater, ...): unlike a
/// `not` in the pattern, it holds only when the packet holds the fields,
/// so a packet too short for them matches neither `port 80` nor `port !=
/// 80` (Click 2.1 behaves so; `not port 80` does match it).
fn negate_if(e: Expr, neg: bool) -> Expr {
    if !neg {
        return e;
    }
    let mut fields = Vec::new();
    collect_fields(&e, &mut fields);
    // One length test per header: the field reaching farthest.
    let all = fields.clone();
    fields.retain(|f| {
        !all.iter()
            .any(|g| g.base == f.base && (g.required(), *g) > (f.required(), *f))
    });
    let mut parts: Vec<Expr> = fields
        .into_iter()
        .map(|field| {
            Expr::Atom(Atom {
                field,
                lo: 0,
                hi: u32::MAX,
            })
        })
        .collect();
    parts.push(e.not());
    Expr::and(parts)
}

/// The fields an expression's atoms read, each once.
fn collect_fields(e: &Expr, out: &mut Vec<Field>) {
    match e {
        Expr::Atom(a) => {
            if !out.contains(&a.field) {
                out.push(a.field);
            }
        }
        Expr::Not(x) => collect_fields(x, out),
        Expr::And(v) | Expr::Or(v) => v.iter().for_each(|x| collect_fields(x, out)),
        Expr::If(c, a, b) => {
            collect_fields(c, out);
            collect_fields(a, out);
            collect_fields(b, out);
        }
        Expr::Const(_) => {}
    }
}

/// Lowers a checked primitive to an expression (Click's `add_exprs`).
fn lower(p: &Prim, provided: u32) -> PResult<Expr> {
    let transport = match p.ty {
        Ty::Port | Ty::TcpOpt => true,
        Ty::Field(f) => f.transp.is_some(),
        _ => false,
    };
    // The protocol test, then the first-fragment test, in Click's order.
    let mut parts = Vec::new();
    match p.proto {
        Proto::Num(n) if p.ty != Ty::Proto || transport => parts.push(proto_is(n)),
        Proto::TcpOrUdp => parts.push(Expr::Or(vec![proto_is(TCP), proto_is(UDP)])),
        _ => {}
    }
    if transport {
        parts.push(frag_ok());
    }
    let v = match p.data {
        Data::Int(n) => n,
        _ => 0,
    };
    let body = match p.ty {
        Ty::Host | Ty::Net => {
            let (a, m) = match p.data {
                Data::Host(a) => (a, if provided != 0 { provided } else { u32::MAX }),
                Data::Net(a, m) => (a, if provided != 0 { provided } else { m }),
                _ => (0, 0),
            };
            let e = combine(p.srcdst, host_side(12, a, m), host_side(16, a, m));
            negate_if(e, p.op_neg)
        }
        Ty::Proto => {
            if v >= 256 {
                Expr::Const(!p.op_neg)
            } else {
                let (e, neg) = comparison(Base::Ip, 8, 16, 0xFF, provided, p.op, p.op_neg, v)?;
                negate_if(e, neg)
            }
        }
        Ty::Port => {
            let (s, n1) = comparison(Base::Transp, 0, 16, 0xFFFF, provided, p.op, p.op_neg, v)?;
            let (d, _) = comparison(Base::Transp, 0, 0, 0xFFFF, provided, p.op, p.op_neg, v)?;
            negate_if(combine(p.srcdst, s, d), n1)
        }
        Ty::Ether => {
            let e = match p.data {
                Data::Ether(e) => e,
                _ => [0; 6],
            };
            let word = |b: [u8; 4]| u32::from_be_bytes(b);
            // Ether offsets count from two bytes before the header (see
            // [`pad_ether`]), so that the words align as in Click's
            // program: the destination (header bytes 0-5) at 2-7, the
            // source at 8-13.
            let d0 = word([0, 0, e[0], e[1]]);
            let d1 = word([e[2], e[3], e[4], e[5]]);
            let s0 = word([e[0], e[1], e[2], e[3]]);
            let s1 = word([e[4], e[5], 0, 0]);
            let dst = Expr::And(vec![
                atom(Base::Ether, 0, 0x0000_FFFF, d0, d0),
                atom(Base::Ether, 4, u32::MAX, d1, d1),
            ]);
            let src = Expr::And(vec![
                atom(Base::Ether, 8, u32::MAX, s0, s0),
                atom(Base::Ether, 12, 0xFFFF_0000, s1, s1),
            ]);
            negate_if(combine(p.srcdst, src, dst), p.op_neg)
        }
        Ty::TcpOpt => atom(Base::Transp, 12, v << 16, v << 16, v << 16),
        Ty::Frag => atom(Base::Ip, 4, FRAGMENT_BITS, 0, 0).not(),
        Ty::Unfrag => atom(Base::Ip, 4, FRAGMENT_BITS, 0, 0),
        Ty::Ce => atom(Base::Ip, 0, 0x0003_0000, 0x0003_0000, 0x0003_0000),
        Ty::Ect => {
            if p.data == Data::None {
                atom(Base::Ip, 0, 0x0003_0000, 0, 0).not()
            } else {
                let (e, neg) = comparison(Base::Ip, 0, 16, 3, provided, p.op, p.op_neg, v)?;
                negate_if(e, neg)
            }
        }
        Ty::Field(f) => {
            let base = if f.transp.is_some() {
                Base::Transp
            } else {
                Base::Ip
            };
            let word = (f.bit_offset / 8) & !3;
            let shift = 32 - ((f.bit_offset & 31) + f.nbits);
            let full = if f.nbits == 32 {
                u32::MAX
            } else {
                (1u32 << f.nbits) - 1
            };
            let (e, neg) = comparison(base, word, shift, full, provided, p.op, p.op_neg, v)?;
            negate_if(e, neg)
        }
        Ty::None => Expr::Const(false),
    };
    parts.push(body);
    Ok(Expr::and(parts))
}

/// A relation's value and mask as Click's `Primitive::set_mask` leaves
/// them: `(u, mask, greater_than, negated)`. `<` becomes a negated `>`,
/// and a relation that is always true or false an equality on no bits.
fn click_relation(p: &Prim, full_mask: u32, provided: u32, data: u32) -> (u32, u32, bool, bool) {
    let this_mask = if provided != 0 { provided } else { full_mask };
    let mut neg = p.op_neg;
    if p.op == Op::Eq {
        return (data, this_mask, false, neg);
    }
    let lt = p.op == Op::Lt;
    if (lt && (data == 0 || data > this_mask)) || (!lt && data >= this_mask) {
        let will_be = if lt && data > this_mask { !neg } else { neg };
        return (0, 0, false, !will_be);
    }
    let mut u = data;
    if lt {
        u -= 1;
        neg = !neg;
    }
    let mask = this_mask;
    if u & mask != u {
        let missing = (u & mask) ^ (u & full_mask);
        if missing != 0 {
            // Every bit below the highest missing one.
            let add = u32::MAX
                .checked_shr(missing.leading_zeros() + 1)
                .unwrap_or(0);
            u = (u | add) & mask;
        }
    }
    (u, mask, true, neg)
}

/// Emits a checked primitive into Click's program as Click's
/// `Primitive::compile` does (for the `program` handler only).
fn click_primitive(b: &mut ClickBuilder, p: &Prim, provided: u32) {
    let v = match p.data {
        Data::Int(n) => n,
        _ => 0,
    };
    b.start();
    // The transport protocol Click's check leaves on the primitive.
    let proto = match p.ty {
        Ty::Proto => {
            let m = if v >= 256 || provided == 0 {
                0xFF
            } else {
                provided
            };
            (p.op == Op::Eq && m == 0xFF && !p.op_neg).then_some(Proto::Num(v))
        }
        _ => (p.proto != Proto::Unknown).then_some(p.proto),
    };
    match proto {
        Some(Proto::TcpOrUdp) => {
            b.start();
            b.add(OFFSET_NET + 8, TCP << 16, 0x00FF_0000);
            b.add(OFFSET_NET + 8, UDP << 16, 0x00FF_0000);
            b.finish(Comb::Or);
        }
        Some(Proto::Num(n)) if n < 256 => b.add(OFFSET_NET + 8, n << 16, 0x00FF_0000),
        _ => {}
    }
    let transport = match p.ty {
        Ty::Port | Ty::TcpOpt => true,
        Ty::Field(f) => f.transp.is_some(),
        _ => false,
    };
    if transport {
        b.add(OFFSET_NET + 4, 0, 0x0000_1FFF);
    }
    let srcdst = |b: &mut ClickBuilder,
                  src: &dyn Fn(&mut ClickBuilder),
                  dst: &dyn Fn(&mut ClickBuilder),
                  neg: bool| {
        b.start();
        if matches!(p.srcdst, SrcDst::Src | SrcDst::And | SrcDst::Or) {
            src(b);
        }
        if matches!(p.srcdst, SrcDst::Dst | SrcDst::And | SrcDst::Or) {
            dst(b);
        }
        b.finish(if p.srcdst == SrcDst::Or {
            Comb::Or
        } else {
            Comb::And
        });
        if neg {
            b.negate(true);
        }
    };
    match p.ty {
        Ty::Host | Ty::Net => {
            let (a, m) = match p.data {
                Data::Host(a) => (a, if provided != 0 { provided } else { u32::MAX }),
                Data::Net(a, m) => (a, if provided != 0 { provided } else { m }),
                _ => (0, 0),
            };
            srcdst(
                b,
                &|b| b.add(OFFSET_NET + 12, a & m, m),
                &|b| b.add(OFFSET_NET + 16, a & m, m),
                p.op_neg,
            );
        }
        Ty::Ether => {
            let e = match p.data {
                Data::Ether(e) => e,
                _ => [0; 6],
            };
            let word = |x: [u8; 4]| u32::from_be_bytes(x);
            srcdst(
                b,
                &|b| {
                    b.start();
                    b.add(OFFSET_MAC + 8, word([e[0], e[1], e[2], e[3]]), u32::MAX);
                    b.add(OFFSET_MAC + 12, word([e[4], e[5], 0, 0]), 0xFFFF_0000);
                    b.finish(Comb::And);
                },
                &|b| {
                    b.start();
                    b.add(OFFSET_MAC, word([0, 0, e[0], e[1]]), 0x0000_FFFF);
                    b.add(OFFSET_MAC + 4, word([e[2], e[3], e[4], e[5]]), u32::MAX);
                    b.finish(Comb::And);
                },
                p.op_neg,
            );
        }
        Ty::Proto => {
            if !matches!(proto, Some(Proto::Num(n)) if n >= 256) {
                let (u, m, gt, neg) = click_relation(p, 0xFF, provided, v & 0xFF);
                b.comparison(OFFSET_NET + 8, 16, m, u, gt, neg);
            }
        }
        Ty::Frag | Ty::Unfrag => {
            b.add(OFFSET_NET + 4, 0, 0x0000_3FFF);
            if p.ty == Ty::Frag {
                b.negate(true);
            }
        }
        Ty::Port => {
            let (u, m, gt, neg) = click_relation(p, 0xFFFF, provided, v);
            srcdst(
                b,
                &|b| b.comparison(OFFSET_TRANSP, 16, m, u, gt, false),
                &|b| b.comparison(OFFSET_TRANSP, 0, m, u, gt, false),
                neg,
            );
        }
        Ty::TcpOpt => b.add(OFFSET_TRANSP + 12, v << 16, v << 16),
        Ty::Ce => b.add(OFFSET_NET, 3 << 16, 3 << 16),
        Ty::Ect if p.data == Data::None => b.comparison(OFFSET_NET, 16, 3, 0, false, true),
        Ty::Ect | Ty::Field(_) => {
            let f = match p.ty {
                Ty::Field(f) => f,
                _ => F_TOS,
            };
            let full = if p.ty == Ty::Ect {
                3
            } else if f.nbits == 32 {
                u32::MAX
            } else {
                (1u32 << f.nbits) - 1
            };
            let (u, m, gt, neg) = click_relation(p, full, provided, v);
            let base = if f.transp.is_some() {
                OFFSET_TRANSP
            } else {
                OFFSET_NET
            };
            let word = (f.bit_offset >> 3) & !3;
            let shift = 32 - ((f.bit_offset & 31) + f.nbits);
            b.comparison(base + word, shift, m, u, gt, neg);
        }
        Ty::None => {}
    }
    b.finish(Comb::And);
}

// ----------------------------------------------------------- rule parsing

/// Parsed rules with the warnings met on the way.
#[derive(Debug, Default)]
pub struct Parsed {
    pub rules: Vec<Rule>,
    /// Each warning with the index of the pattern it is about.
    pub warnings: Vec<(usize, String)>,
    /// Each rule's program as Click builds it, for the `program` handler
    /// ([`click_listing`]); empty when `click_unlisted`.
    pub click: Vec<ClickProgram>,
    /// Click's programs for the rules hold more than
    /// [`CLICK_LISTING_MAX_TESTS`] tests: not built, no listing.
    pub click_unlisted: bool,
}

/// The most tests (Click's instructions before optimizing, summed over
/// the rules) whose Click program IPFilter keeps for its `program`
/// handler. Listing runs Click's optimizer, whose time and memory grow
/// with the square of the tests on a path (one rule `src host A or src
/// host B or ...` of 20,000 hosts took 800 MB; 9,999 rules of `src host
/// X and dst port P`, 1.4 GB): this bound keeps a listing within tens of
/// megabytes and a fraction of a second, whatever the rules' shape.
pub const CLICK_LISTING_MAX_TESTS: usize = 5_000;

/// Click's `program` handler text for parsed rules: Click's own program
/// (not rclick's compiled form), byte for byte.
pub fn click_listing(click: &[ClickProgram]) -> String {
    super::ipfilter_click::listing(click.to_vec())
}

/// Which of `noutputs` outputs Click's program for the rules can reach.
pub fn click_reachable_outputs(click: &[ClickProgram], noutputs: usize) -> Vec<bool> {
    super::ipfilter_click::reachable_outputs(click.to_vec(), noutputs)
}

fn parse_pattern_words(
    toks: &[String],
    names: &dyn Names,
    warnings: &mut Vec<String>,
    click: &mut ClickBuilder,
) -> PResult<Expr> {
    if toks.is_empty() || (toks.len() == 1 && matches!(toks[0].as_str(), "-" | "any" | "all")) {
        click.add(0, 0, 0);
        return Ok(Expr::Const(true));
    }
    let mut p = Parser {
        toks,
        pos: 0,
        names,
        prev: None,
        warnings: Vec::new(),
        depth: 0,
        click: std::mem::take(click),
    };
    let e = p.expr();
    *click = std::mem::take(&mut p.click);
    let e = e?;
    if let Some(w) = p.peek() {
        return Err(format!("garbage after expression at '{w}'"));
    }
    warnings.append(&mut p.warnings);
    Ok(e)
}

/// Parses IPClassifier patterns: pattern `i` sends to output `i`.
pub fn parse_classifier(patterns: &[String], names: &dyn Names) -> Result<Parsed, Vec<String>> {
    parse_rules(patterns, names, |i, _| Ok((Action::Output(i), 0)))
}

/// Parses IPFilter `ACTION PATTERN` arguments for an element with
/// `noutputs` outputs.
pub fn parse_filter(
    args: &[String],
    noutputs: usize,
    names: &dyn Names,
) -> Result<Parsed, Vec<String>> {
    parse_rules(args, names, |i, toks| {
        let Some(first) = toks.first() else {
            return Err(format!("empty pattern {i}"));
        };
        let action = match first.as_str() {
            "allow" if noutputs == 0 => {
                return Err(format!(
                    "pattern {i}: 'allow' is meaningless, element has zero outputs"
                ))
            }
            "allow" => Action::Output(0),
            // Click 2.1 takes `deny` as `drop` without a warning.
            "deny" => Action::Drop,
            "drop" => Action::Drop,
            w => match parse_u32(w) {
                Ok(n) if (n as usize) < noutputs => Action::Output(n as usize),
                Ok(n) => return Err(format!("pattern {i}: slot '{n}' out of range")),
                Err(_) => return Err(format!("pattern {i}: unknown slot ID '{w}'")),
            },
        };
        Ok((action, 1))
    })
}

/// Parses rule arguments: `action` gives argument `i`'s action and how many
/// of its words it took (or the error that rejects the argument), and the
/// rest is the pattern.
fn parse_rules(
    args: &[String],
    names: &dyn Names,
    mut action: impl FnMut(usize, &[String]) -> Result<(Action, usize), String>,
) -> Result<Parsed, Vec<String>> {
    let mut out = Parsed::default();
    let mut failed = false;
    // Errors and warnings in the order met: when a pattern fails, Click's
    // messages keep the other patterns' warnings among the errors.
    let mut messages = Vec::new();
    let mut click_tests = 0;
    for (i, arg) in args.iter().enumerate() {
        let toks = tokenize(arg);
        let (act, taken) = match action(i, &toks) {
            Ok(a) => a,
            Err(e) => {
                messages.push(e);
                failed = true;
                continue;
            }
        };
        let mut w = Vec::new();
        let mut click = if out.click_unlisted {
            ClickBuilder::disabled()
        } else {
            ClickBuilder::default()
        };
        click.start();
        match parse_pattern_words(&toks[taken..], names, &mut w, &mut click) {
            Ok(expr) => {
                let target = click_target(match act {
                    Action::Output(n) => Some(n),
                    Action::Drop => None,
                });
                if !out.click_unlisted {
                    click_tests += click.tests();
                    if click_tests > CLICK_LISTING_MAX_TESTS {
                        // Past the bound: no listing, and no more
                        // building (it costs at configure time).
                        out.click_unlisted = true;
                        out.click = Vec::new();
                    } else {
                        out.click.push(click.into_program(target));
                    }
                }
                out.rules.push(Rule { action: act, expr });
            }
            Err(e) => {
                messages.push(format!("pattern {i}: {e}"));
                failed = true;
            }
        }
        messages.extend(w.iter().map(|m| format!("pattern {i}: warning: {m}")));
        out.warnings.extend(w.into_iter().map(|m| (i, m)));
    }
    if failed {
        Err(messages)
    } else {
        Ok(out)
    }
}

// ------------------------------------------------------------- range sets

/// A set of u32 values as sorted, disjoint, non-adjacent inclusive ranges.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RangeSet(pub Vec<(u32, u32)>);

impl RangeSet {
    fn one(lo: u32, hi: u32) -> RangeSet {
        if lo <= hi {
            RangeSet(vec![(lo, hi)])
        } else {
            RangeSet(Vec::new())
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn intersect(&self, o: &RangeSet) -> RangeSet {
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < self.0.len() && j < o.0.len() {
            let (a, b) = self.0[i];
            let (c, d) = o.0[j];
            let lo = a.max(c);
            let hi = b.min(d);
            if lo <= hi {
                out.push((lo, hi));
            }
            if b < d {
                i += 1;
            } else {
                j += 1;
            }
        }
        RangeSet(out)
    }

    fn complement(&self) -> RangeSet {
        let mut out = Vec::new();
        let mut next: Option<u32> = Some(0);
        for &(a, b) in &self.0 {
            if let Some(n) = next {
                if a > n {
                    out.push((n, a - 1));
                }
            }
            next = b.checked_add(1);
        }
        if let Some(n) = next {
            out.push((n, u32::MAX));
        }
        RangeSet(out)
    }

    fn union(&self, o: &RangeSet) -> RangeSet {
        self.complement().intersect(&o.complement()).complement()
    }

    fn subset_of(&self, o: &RangeSet) -> bool {
        self.intersect(o) == *self
    }
}

// ----------------------------------------------------- decision programs

/// Jump target: drop the packet.
const T_DROP: i32 = i32::MIN;
/// Jump target: no rule of this segment matched; try the next segment. It
/// is what the matcher returns when no pattern matched (Click's `j_never`).
const T_NEXT: i32 = DROP;

/// Encodes an action as a (non-positive) jump target.
fn action_target(a: Action) -> i32 {
    match a {
        Action::Output(o) => -(o.min(i32::MAX as usize - 2) as i32),
        Action::Drop => T_DROP,
    }
}

/// One step of a decision program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    pub atom_field: Field,
    pub lo: u32,
    pub hi: u32,
    /// Targets: `> 0` a step index (always forward), `<= 0` an output
    /// (`-target`), or drop / next segment.
    pub yes: i32,
    pub no: i32,
}

#[derive(Clone, Debug)]
struct LinearProgram {
    steps: Vec<Step>,
    eval: Vec<Test>,
    /// Where evaluation starts when there are no steps, or `None`.
    constant: Option<i32>,
}

/// Builds the unoptimized DAG by continuation passing. Nodes are
/// hash-consed; node ids grow as nodes are created, and every node jumps to
/// older nodes only.
struct Builder {
    nodes: Vec<Step>,
    index: HashMap<(Atom, i32, i32), i32>,
}

/// Node ids in the builder are encoded as `1 + id` (positive), targets as
/// in [`Step`].
impl Builder {
    fn node(&mut self, a: Atom, yes: i32, no: i32) -> i32 {
        if yes == no {
            return yes;
        }
        if let Some(&t) = self.index.get(&(a, yes, no)) {
            return t;
        }
        self.nodes.push(Step {
            atom_field: a.field,
            lo: a.lo,
            hi: a.hi,
            yes,
            no,
        });
        let t = self.nodes.len() as i32;
        self.index.insert((a, yes, no), t);
        t
    }

    fn expr(&mut self, e: &Expr, yes: i32, no: i32) -> i32 {
        match e {
            Expr::Const(true) => yes,
            Expr::Const(false) => no,
            Expr::Atom(a) => self.node(*a, yes, no),
            Expr::Not(x) => self.expr(x, no, yes),
            Expr::And(v) => {
                let mut t = yes;
                for x in v.iter().rev() {
                    t = self.expr(x, t, no);
                }
                t
            }
            Expr::Or(v) => {
                let mut t = no;
                for x in v.iter().rev() {
                    t = self.expr(x, yes, t);
                }
                t
            }
            Expr::If(c, a, b) => {
                let ta = self.expr(a, yes, no);
                let tb = self.expr(b, yes, no);
                self.expr(c, ta, tb)
            }
        }
    }
}

/// What is known about a packet on a program edge: value sets of fields
/// (only recorded when the field was readable) and readable lengths.
#[derive(Clone, Debug, Default)]
struct Know {
    vals: Vec<(Field, RangeSet)>,
    /// Per field, a range whose tests are known to fail (the value lies
    /// outside it, or the field is unreadable).
    fails: Vec<(Field, RangeSet)>,
    avail: [usize; 3],
}

impl Facts for Know {
    type Step = Step;
    const DRIFT_LIMIT: usize = DRIFT_LIMIT;

    fn decide(&self, s: &Step) -> Option<bool> {
        let r = RangeSet::one(s.lo, s.hi);
        if let Some((_, f)) = self.fails.iter().find(|v| v.0 == s.atom_field) {
            if r.subset_of(f) {
                return Some(false);
            }
        }
        if let Some(known) = self.vals.iter().find(|v| v.0 == s.atom_field) {
            if known.1.subset_of(&r) {
                return Some(true);
            } else if known.1.intersect(&r).is_empty() {
                return Some(false);
            }
        }
        // A word known exactly under a wider mask decides a test of some
        // of its bits (`src 10.0.0.0 && src & 8.0.0.0 == 8.0.0.0`), as
        // Click's optimizer does.
        let f = s.atom_field;
        self.vals.iter().find_map(|(g, set)| {
            let exact = match set.0.as_slice() {
                [(lo, hi)] if lo == hi => *lo,
                _ => return None,
            };
            (g.base == f.base && g.offset == f.offset && g.mask & f.mask == f.mask && *g != f).then(
                || {
                    let v = exact & f.mask;
                    v >= s.lo && v <= s.hi
                },
            )
        })
    }

    fn with(&self, s: &Step, outcome: bool) -> Know {
        let mut k = self.clone();
        let f = s.atom_field;
        let b = f.base as usize;
        let r = RangeSet::one(s.lo, s.hi);
        if !outcome {
            match k.fails.iter_mut().find(|v| v.0 == f) {
                Some(v) => v.1 = v.1.union(&r),
                None => k.fails.push((f, r.clone())),
            }
        }
        let set = if outcome {
            k.avail[b] = k.avail[b].max(f.required());
            r
        } else if k.avail[b] >= f.required() {
            r.complement()
        } else {
            // Only `fails` grew; a chain of failed tests on a field not
            // yet known readable (`dst port N or src port M`, repeated)
            // grows it without end, so it is bounded here too, more
            // loosely: what it still decides is worth keeping.
            k.fails.retain(|v| v.1 .0.len() <= KNOW_FAIL_RANGES);
            return k;
        };
        match k.vals.iter_mut().find(|v| v.0 == f) {
            Some(v) => v.1 = v.1.intersect(&set),
            None => k.vals.push((f, set)),
        }
        k.forget_large();
        k
    }

    fn meet(&self, o: &Know) -> Know {
        let mut vals = Vec::new();
        for (f, s) in &self.vals {
            if let Some((_, t)) = o.vals.iter().find(|v| v.0 == *f) {
                vals.push((*f, s.union(t)));
            }
        }
        let mut fails = Vec::new();
        for (f, s) in &self.fails {
            if let Some((_, t)) = o.fails.iter().find(|v| v.0 == *f) {
                let both = s.intersect(t);
                if !both.is_empty() {
                    fails.push((*f, both));
                }
            }
        }
        let mut k = Know {
            vals,
            fails,
            avail: [
                self.avail[0].min(o.avail[0]),
                self.avail[1].min(o.avail[1]),
                self.avail[2].min(o.avail[2]),
            ],
        };
        k.forget_large();
        k
    }
}

/// Most ranges a field's knowledge may hold: past it the field's
/// knowledge is forgotten (knowing less only leaves steps undecided).
/// Without the bound, a chain of N rules testing one field (`src host
/// X1`, `src host X2`, ...) carried an N-range set along the chain and
/// copied it at every step: compiling took time quadratic in N (100,000
/// such rules took minutes).
const KNOW_RANGES: usize = 32;

impl Know {
    fn forget_large(&mut self) {
        self.vals.retain(|v| v.1 .0.len() <= KNOW_RANGES);
        self.fails.retain(|v| v.1 .0.len() <= KNOW_RANGES);
    }
}

/// Bound on the ranges of a field's failed tests kept along a path whose
/// field is not known readable (see `Know::with`).
const KNOW_FAIL_RANGES: usize = 4 * KNOW_RANGES;

/// How far a drift may follow decided steps before giving up.
const DRIFT_LIMIT: usize = 64;

impl LinearProgram {
    fn compile(rules: &[Rule], optimize: bool) -> LinearProgram {
        let mut b = Builder {
            nodes: Vec::new(),
            index: HashMap::new(),
        };
        let mut entry = T_NEXT;
        for r in rules.iter().rev() {
            entry = b.expr(&r.expr, action_target(r.action), entry);
        }
        if entry <= 0 {
            return LinearProgram {
                steps: Vec::new(),
                eval: Vec::new(),
                constant: Some(entry),
            };
        }
        // Renumber so the entry is step 0 and jumps go forward: newest
        // builder node first.
        let n = b.nodes.len();
        let map = |t: i32| if t > 0 { (n as i32) - t } else { t };
        let mut steps: Vec<Step> = b
            .nodes
            .iter()
            .rev()
            .map(|s| Step {
                yes: map(s.yes),
                no: map(s.no),
                ..*s
            })
            .collect();
        let mut entry = map(entry) as usize;
        // A step whose branches meet decides nothing: jump past it, and
        // propagate again (its meeting point lost what either branch
        // knew), a few rounds while that changes the program.
        for _ in 0..if optimize { 4 } else { 0 } {
            let before: Vec<(i32, i32)> = steps.iter().map(|s| (s.yes, s.no)).collect();
            let before_entry = entry;
            propagate::<Know>(&mut steps, entry);
            let skip = |steps: &[Step], mut t: i32| {
                while let Some(s) = usize::try_from(t).ok().and_then(|i| steps.get(i)) {
                    if t == 0 || s.yes != s.no {
                        break;
                    }
                    t = s.yes;
                }
                t
            };
            for i in 0..steps.len() {
                let (y, n) = (skip(&steps, steps[i].yes), skip(&steps, steps[i].no));
                steps[i].yes = y;
                steps[i].no = n;
            }
            while steps[entry].yes == steps[entry].no {
                let t = steps[entry].yes;
                if t <= 0 {
                    return LinearProgram {
                        steps: Vec::new(),
                        eval: Vec::new(),
                        constant: Some(t),
                    };
                }
                entry = t as usize;
            }
            if entry == before_entry
                && steps
                    .iter()
                    .map(|s| (s.yes, s.no))
                    .eq(before.iter().copied())
            {
                break;
            }
        }
        let steps = compact(&steps, entry);
        LinearProgram::from_steps(steps)
    }

    fn from_steps(steps: Vec<Step>) -> LinearProgram {
        if steps.is_empty() {
            return LinearProgram {
                steps,
                eval: Vec::new(),
                constant: Some(T_NEXT),
            };
        }
        let eval = steps
            .iter()
            .map(|s| Test {
                base: s.atom_field.base as u8,
                offset: u32::from(s.atom_field.offset),
                required: s.atom_field.required() as u32,
                mask: s.atom_field.mask,
                lo: s.lo,
                span: s.hi.wrapping_sub(s.lo),
                j: [s.no, s.yes],
            })
            .collect();
        LinearProgram {
            steps,
            eval,
            constant: None,
        }
    }

    #[inline]
    fn run(&self, data: HeaderData) -> i32 {
        match self.constant {
            Some(c) => c,
            None => run(&self.eval, data),
        }
    }
}

/// Keeps the steps reachable from `entry`, renumbered in order (entry
/// first).
fn compact(steps: &[Step], entry: usize) -> Vec<Step> {
    renumber(steps, &reachable(steps, entry))
}

branch_by_yes_no!(Step);

// ------------------------------------------------------------ box rules

/// A rule that is a conjunction of per-field constraints: a field is
/// satisfied when readable and its value is in `set`, or unreadable and
/// `missing_ok`.
#[derive(Clone, Debug)]
struct BoxRule {
    never: bool,
    cons: Vec<(Field, RangeSet, bool)>,
}

impl BoxRule {
    fn always() -> BoxRule {
        BoxRule {
            never: false,
            cons: Vec::new(),
        }
    }
    fn never() -> BoxRule {
        BoxRule {
            never: true,
            cons: Vec::new(),
        }
    }
}

/// The box form of an expression, when it has one.
fn as_box(e: &Expr) -> Option<BoxRule> {
    match e {
        Expr::Const(true) => Some(BoxRule::always()),
        Expr::Const(false) => Some(BoxRule::never()),
        Expr::Atom(a) => Some(BoxRule {
            never: false,
            cons: vec![(a.field, RangeSet::one(a.lo, a.hi), false)],
        }),
        Expr::And(v) => {
            let mut acc = BoxRule::always();
            for x in v {
                let b = as_box(x)?;
                if b.never {
                    acc.never = true;
                }
                for (f, s, m) in b.cons {
                    match acc.cons.iter_mut().find(|c| c.0 == f) {
                        Some(c) => {
                            c.1 = c.1.intersect(&s);
                            c.2 &= m;
                        }
                        None => acc.cons.push((f, s, m)),
                    }
                }
            }
            Some(acc)
        }
        Expr::Or(v) => {
            let mut acc: Option<(Field, RangeSet, bool)> = None;
            for x in v {
                let b = as_box(x)?;
                if b.never {
                    continue;
                }
                if b.cons.is_empty() {
                    return Some(BoxRule::always());
                }
                if b.cons.len() != 1 {
                    return None;
                }
                let (f, s, m) = b.cons.into_iter().next()?;
                acc = Some(match acc {
                    None => (f, s, m),
                    Some((g, t, n)) if g == f => (f, t.union(&s), n || m),
                    Some(_) => return None,
                });
            }
            Some(match acc {
                None => BoxRule::never(),
                Some(c) => BoxRule {
                    never: false,
                    cons: vec![c],
                },
            })
        }
        Expr::Not(x) => {
            let b = as_box(x)?;
            if b.never {
                return Some(BoxRule::always());
            }
            match b.cons.len() {
                0 => Some(BoxRule::never()),
                1 => {
                    let (f, s, m) = b.cons.into_iter().next()?;
                    Some(BoxRule {
                        never: false,
                        cons: vec![(f, s.complement(), !m)],
                    })
                }
                _ => None,
            }
        }
        Expr::If(..) => None,
    }
}

/// Per-field lookup of a box segment.
#[derive(Clone, Debug)]
struct BoxField {
    field: Field,
    /// Each elementary interval's start (the first is 0) and the word
    /// offset into `BoxSet::bits` of its bit vector (in the compressed form
    /// described at [`BoxSet`]), after [`PAD`] entries `(0, 0)`: interval
    /// `i` is `entries[PAD + i]`.
    entries: Vec<(u32, u32)>,
    /// Bit vector for packets too short to read the field.
    missing: u32,
    /// A first-level index by the value's top `key_bits` masked bits (its
    /// key): `index[k + 1]` counts the intervals starting below
    /// `(k + 1) << index_shift`, the end of key `k`'s bucket, with
    /// [`CROWDED`] set when more than [`WINDOW`] of them start in the
    /// bucket; `index[0]` is 0. Every field has one, with up to twice as
    /// many buckets as intervals (at most 256).
    index: Box<[u32]>,
    index_shift: u32,
}

/// Most key bits of a field's first-level index.
const INDEX_KEY_BITS: u32 = 8;

/// A bucket of at most this many interval starts is searched by comparing
/// the value with this many starts below the bucket's end at once.
const WINDOW: usize = 8;

/// Padding entries before a field's intervals: a bucket's window and the
/// entry below it are always in the entries.
const PAD: usize = WINDOW + 1;

/// Flag of an index entry whose bucket holds more than [`WINDOW`] starts.
const CROWDED: u32 = 1 << 31;

impl BoxField {
    fn new(field: Field, bounds: Vec<u32>, sets: Vec<u32>, missing: u32) -> BoxField {
        // Values are masked, so they are below 2^(highest mask bit + 1):
        // the top bits of those, as a key, are monotone in the value.
        let top = 32 - field.mask.leading_zeros();
        let key_bits = (usize::BITS - bounds.len().leading_zeros() + 1)
            .min(INDEX_KEY_BITS)
            .min(top);
        let index_shift = top - key_bits;
        // Bounds below k << shift, for k up to the number of keys.
        let below: Vec<u32> = (0..=1u64 << key_bits)
            .map(|k| bounds.partition_point(|&b| (b as u64) < k << index_shift) as u32)
            .collect();
        let index = std::iter::once(0)
            .chain(below.windows(2).map(|w| {
                let crowded = (w[1] - w[0]) as usize > WINDOW;
                w[1] | if crowded { CROWDED } else { 0 }
            }))
            .collect();
        let mut entries = vec![(0, 0); PAD];
        entries.extend(bounds.iter().copied().zip(sets));
        BoxField {
            field,
            entries,
            missing,
            index,
            index_shift,
        }
    }

    /// Number of elementary intervals.
    fn intervals(&self) -> usize {
        self.entries.len() - PAD
    }

    /// The bit-vector offset for the field's value in `data`.
    // Always inlined, like the other steps of a packet's classification:
    // with IP6Filter calling the same code, the compiler's heuristics
    // stopped inlining it (ipfilter100 BURST 32: 613 -> 726
    // instructions/packet).
    #[inline(always)]
    fn lookup(&self, data: HeaderData) -> u32 {
        match self.field.read(data[self.field.base as usize]) {
            Some(v) => self.set_of(v),
            None => self.missing,
        }
    }

    /// The bit-vector offset of the interval holding `v`, the last one
    /// starting at or below `v`.
    #[inline]
    fn set_of(&self, v: u32) -> u32 {
        let k = (v >> self.index_shift) as usize;
        let Some(&end) = self.index.get(k + 1) else {
            return self.missing;
        };
        // Intervals `hi` on start at or above (k + 1) << shift > v; those
        // below the bucket start below k << shift <= v. So the intervals
        // starting at or below `v` number `hi` less the bucket's starts
        // above `v`.
        let hi = (end & !CROWDED) as usize;
        if end & CROWDED == 0 {
            // The bucket's starts are among the WINDOW below `hi`; with
            // the one below them (or padding, at or below any value) they
            // are `entries[hi..=hi + WINDOW]`. Counting from the top those
            // above `v` finds the last one at or below it.
            if let Some(w) = self.entries.get(hi..=hi + WINDOW) {
                let above = w[1..].iter().rev().take_while(|e| e.0 > v).count();
                if let Some(e) = w.get(WINDOW - above) {
                    return e.1;
                }
            }
            return self.missing;
        }
        let lo = (self.index[k] & !CROWDED) as usize;
        let Some(bucket) = self.entries.get(PAD + lo..PAD + hi) else {
            return self.missing;
        };
        // The first interval starts at 0, so at least one starts <= v.
        let at_or_below = lo + bucket.partition_point(|e| e.0 <= v);
        match self.entries.get(PAD - 1 + at_or_below) {
            Some(e) => e.1,
            None => self.missing,
        }
    }
}

/// Dense segments of at most this many words per vector (256 rules) are
/// matched with a fixed-size accumulator.
const NARROW_WORDS: usize = 4;

/// Most fields a box segment combines.
const MAX_BOX_FIELDS: usize = 16;

/// Building a box segment may take this many word operations per word of
/// its budget before the run is split instead.
const BOX_WORK_FACTOR: usize = 8;

/// Bit-vector classifier over a run of box rules.
///
/// A rule vector of `words` 64-bit words is stored compressed, as an
/// aggregated bit vector: `summary` words whose bit `w` says whether word
/// `w` has any rule bit set, followed by the nonzero words only, in order.
/// Matching ANDs the fields' summaries first and reads only the words set
/// in all of them; a vector with few rules (one host's) takes a few words
/// instead of one per 64 rules.
#[derive(Clone, Debug)]
struct BoxSet {
    fields: Vec<BoxField>,
    words: usize,
    /// Summary words of each vector: `words.div_ceil(64)`.
    summary: usize,
    /// The vectors are stored uncompressed (`words` words each), which
    /// matches faster when most words are nonzero anyway.
    dense: bool,
    bits: Vec<u64>,
    /// Jump target of each rule.
    targets: Vec<i32>,
    /// Index of the segment's first rule in the whole rule list.
    first_rule: usize,
    /// Bit vector of rules with no constraint at all (used when the
    /// segment has no fields).
    all: Vec<u64>,
}

impl BoxSet {
    /// Builds the bit vectors of a run of box rules, or `None` when they
    /// would take more than `budget` words, or building them more than
    /// [`BOX_WORK_FACTOR`] times as many word operations (then the caller
    /// splits the run). Each field's elementary intervals number up to
    /// twice the rules' ranges, and each holds a vector of one bit per
    /// rule: unsplit, N host rules took N²/64 words.
    fn build(rules: &[(BoxRule, Action)], first_rule: usize, budget: usize) -> Option<BoxSet> {
        let n = rules.len();
        let words = n.div_ceil(64).max(1);
        let mut work_left = budget.saturating_mul(BOX_WORK_FACTOR);
        let mut fields: Vec<Field> = Vec::new();
        for (r, _) in rules {
            for c in &r.cons {
                if !fields.contains(&c.0) {
                    fields.push(c.0);
                }
            }
        }
        fields.sort();
        let mut all = vec![0u64; words];
        for (i, (r, _)) in rules.iter().enumerate() {
            if !r.never {
                all[i / 64] |= 1 << (i % 64);
            }
        }
        let summary = words.div_ceil(64);
        let mut bits: Vec<u64> = Vec::new();
        // Vectors by hash; a collision only stores a second copy.
        let mut dedup: HashMap<u64, u32> = HashMap::new();
        let mut enc: Vec<u64> = Vec::new();
        // Stores a vector given densely (`v`) with its summary (`sum`).
        let mut intern = |v: &[u64], sum: &[u64], bits: &mut Vec<u64>| -> Option<u32> {
            enc.clear();
            enc.extend_from_slice(sum);
            for (j, &sw) in sum.iter().enumerate() {
                let mut x = sw;
                while x != 0 {
                    enc.push(v[j * 64 + x.trailing_zeros() as usize]);
                    x &= x - 1;
                }
            }
            work_left = work_left.checked_sub(enc.len())?;
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash_slice(&enc, &mut h);
            let h = std::hash::Hasher::finish(&h);
            if let Some(&o) = dedup.get(&h) {
                if bits.get(o as usize..o as usize + enc.len()) == Some(&enc[..]) {
                    return Some(o);
                }
            }
            if bits.len() + enc.len() > budget || bits.len() + enc.len() > u32::MAX as usize {
                return None;
            }
            let o = bits.len() as u32;
            bits.extend_from_slice(&enc);
            dedup.entry(h).or_insert(o);
            Some(o)
        };
        let summary_of = |v: &[u64]| -> Vec<u64> {
            let mut sum = vec![0u64; summary];
            for (w, &x) in v.iter().enumerate() {
                if x != 0 {
                    sum[w / 64] |= 1 << (w % 64);
                }
            }
            sum
        };
        let mut out_fields = Vec::new();
        for f in fields {
            // Rules without a constraint on f accept every value.
            let mut base = all.clone();
            let mut missing = all.clone();
            let mut events: Vec<(u32, bool, usize)> = Vec::new();
            let mut bset: Vec<u32> = vec![0];
            for (i, (r, _)) in rules.iter().enumerate() {
                if r.never {
                    continue;
                }
                if let Some(c) = r.cons.iter().find(|c| c.0 == f) {
                    base[i / 64] &= !(1 << (i % 64));
                    if !c.2 {
                        missing[i / 64] &= !(1 << (i % 64));
                    }
                    for &(lo, hi) in &c.1 .0 {
                        events.push((lo, true, i));
                        bset.push(lo);
                        if let Some(e) = hi.checked_add(1) {
                            events.push((e, false, i));
                            bset.push(e);
                        }
                    }
                }
            }
            bset.sort_unstable();
            bset.dedup();
            // Removals before additions at the same point.
            events.sort_unstable_by_key(|&(p, add, i)| (p, add, i));
            let mut cur = base;
            let mut sum = summary_of(&cur);
            let mut sets = Vec::with_capacity(bset.len());
            let mut ev = 0;
            for &b in &bset {
                while ev < events.len() && events[ev].0 == b {
                    let (_, add, i) = events[ev];
                    let w = i / 64;
                    if add {
                        cur[w] |= 1 << (i % 64);
                    } else {
                        cur[w] &= !(1 << (i % 64));
                    }
                    if cur[w] != 0 {
                        sum[w / 64] |= 1 << (w % 64);
                    } else {
                        sum[w / 64] &= !(1 << (w % 64));
                    }
                    ev += 1;
                }
                sets.push(intern(&cur, &sum, &mut bits)?);
            }
            let missing = intern(&missing, &summary_of(&missing), &mut bits)?;
            out_fields.push(BoxField::new(f, bset, sets, missing));
        }
        Some(BoxSet {
            fields: out_fields,
            words,
            summary,
            dense: false,
            bits,
            targets: rules.iter().map(|(_, a)| action_target(*a)).collect(),
            first_rule,
            all,
        })
    }

    /// Box segments for a run of box rules, split in halves until each
    /// fits its budget: [`CompileOptions::box_words_floor`] plus
    /// [`CompileOptions::box_words_per_rule`] words per rule, so the
    /// bit vectors take memory proportional to the rules. A single rule
    /// always fits.
    fn build_split(
        rules: &[(BoxRule, Action)],
        first_rule: usize,
        opts: &CompileOptions,
        out: &mut Vec<Segment>,
    ) {
        let budget = if rules.len() <= 1 {
            usize::MAX / BOX_WORK_FACTOR
        } else {
            opts.box_words_floor
                .saturating_add(opts.box_words_per_rule.saturating_mul(rules.len()))
        };
        match BoxSet::build(rules, first_rule, budget) {
            Some(mut b) => {
                b.choose_form(opts.box_vectors);
                out.push(Segment::Boxes(b))
            }
            None => {
                let mid = rules.len() / 2;
                BoxSet::build_split(&rules[..mid], first_rule, opts, out);
                BoxSet::build_split(&rules[mid..], first_rule + mid, opts, out);
            }
        }
    }

    /// Stores the vectors uncompressed when `form` says so, or (`Auto`)
    /// when compression saves less than half.
    fn choose_form(&mut self, form: VectorForm) {
        let mut offsets: Vec<u32> = self
            .fields
            .iter()
            .flat_map(|f| f.entries[PAD..].iter().map(|e| e.1).chain([f.missing]))
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let dense_len = offsets.len().saturating_mul(self.words);
        let dense = match form {
            VectorForm::Dense => true,
            VectorForm::Compressed => false,
            VectorForm::Auto => dense_len <= 2 * self.bits.len(),
        };
        // Offsets are u32.
        if !dense || dense_len > u32::MAX as usize {
            return;
        }
        let ns = self.summary;
        let mut bits = Vec::with_capacity(dense_len);
        for &o in &offsets {
            let o = o as usize;
            let start = bits.len();
            bits.resize(start + self.words, 0);
            let mut r = o + ns;
            for j in 0..ns {
                let mut x = self.bits[o + j];
                while x != 0 {
                    bits[start + j * 64 + x.trailing_zeros() as usize] = self.bits[r];
                    r += 1;
                    x &= x - 1;
                }
            }
        }
        let remap = |o: u32| offsets.binary_search(&o).unwrap_or(0) as u32 * self.words as u32;
        for f in &mut self.fields {
            for e in &mut f.entries[PAD..] {
                e.1 = remap(e.1);
            }
            f.missing = remap(f.missing);
        }
        // Narrow segments read NARROW_WORDS words from every vector's
        // start (see `run`): the last vector is followed by zeros.
        if self.words <= NARROW_WORDS {
            bits.resize(bits.len() + NARROW_WORDS - self.words, 0);
        }
        self.bits = bits;
        self.dense = true;
    }

    /// Heap bytes the segment holds.
    fn heap_bytes(&self) -> usize {
        self.bits.len() * 8
            + self.all.len() * 8
            + self.targets.len() * 4
            + self
                .fields
                .iter()
                .map(|f| f.entries.len() * 8 + f.index.len() * 4)
                .sum::<usize>()
    }

    #[inline(always)]
    fn run(&self, data: HeaderData) -> i32 {
        let nf = self.fields.len();
        if nf == 0 {
            return match self.all.iter().position(|&w| w != 0) {
                Some(w) => self.targets[w * 64 + self.all[w].trailing_zeros() as usize],
                None => T_NEXT,
            };
        }
        if self.dense && self.words <= NARROW_WORDS {
            // Up to NARROW_WORDS * 64 rules: each field's vector is ANDed
            // in as soon as it is known, a fixed number of words (the
            // words past a segment's own are padding, never matched).
            let mut acc = [!0u64; NARROW_WORDS];
            for bf in &self.fields {
                let o = bf.lookup(data) as usize;
                match self.bits.get(o..o + NARROW_WORDS) {
                    Some(v) => {
                        for (a, &x) in acc.iter_mut().zip(v) {
                            *a &= x;
                        }
                    }
                    None => return T_NEXT,
                }
            }
            for (w, &x) in acc.iter().enumerate().take(self.words) {
                if x != 0 {
                    let r = w * 64 + x.trailing_zeros() as usize;
                    return self.targets.get(r).copied().unwrap_or(T_NEXT);
                }
            }
            return T_NEXT;
        }
        let mut offs = [0u32; MAX_BOX_FIELDS];
        for (o, bf) in offs.iter_mut().zip(&self.fields) {
            *o = bf.lookup(data);
        }
        let offs = &offs[..nf.min(MAX_BOX_FIELDS)];
        if self.dense {
            for w in 0..self.words {
                let mut x = !0u64;
                for &o in offs {
                    x &= self.bits[o as usize + w];
                }
                if x != 0 {
                    let r = w * 64 + x.trailing_zeros() as usize;
                    return self.targets.get(r).copied().unwrap_or(T_NEXT);
                }
            }
            return T_NEXT;
        }
        // Per field, how many stored words precede summary word j.
        let mut rank = [0u32; MAX_BOX_FIELDS];
        let bits = &self.bits[..];
        let ns = self.summary;
        for j in 0..ns {
            let mut x = !0u64;
            for &o in offs {
                x &= bits[o as usize + j];
            }
            while x != 0 {
                let b = x.trailing_zeros();
                let below = (1u64 << b) - 1;
                let mut y = !0u64;
                for (k, &o) in offs.iter().enumerate() {
                    let o = o as usize;
                    let r = rank[k] + (bits[o + j] & below).count_ones();
                    y &= bits[o + ns + r as usize];
                }
                if y != 0 {
                    let r = (j * 64 + b as usize) * 64 + y.trailing_zeros() as usize;
                    return self.targets.get(r).copied().unwrap_or(T_NEXT);
                }
                x &= x - 1;
            }
            for (k, &o) in offs.iter().enumerate() {
                rank[k] += bits[o as usize + j].count_ones();
            }
        }
        T_NEXT
    }
}

// ------------------------------------------------------------- segments

#[derive(Clone, Debug)]
enum Segment {
    Linear(LinearProgram),
    Boxes(BoxSet),
}

/// Compilation choices (tests use them to exercise both segment kinds).
#[derive(Clone, Copy, Debug)]
pub struct CompileOptions {
    /// Runs of at least this many box-form rules become a bit-vector
    /// segment; `usize::MAX` disables bit-vector segments.
    pub box_threshold: usize,
    /// Optimize decision programs.
    pub optimize: bool,
    /// A bit-vector segment may take this many 64-bit words per rule
    /// (beyond [`box_words_floor`](Self::box_words_floor)); a run that
    /// needs more is split into segments that fit. The budget counts the
    /// compressed form; [`VectorForm::Auto`] stores a segment uncompressed
    /// only when that takes at most twice as many words.
    pub box_words_per_rule: usize,
    /// Words any bit-vector segment may take whatever its rule count.
    pub box_words_floor: usize,
    /// How bit-vector segments store their vectors.
    pub box_vectors: VectorForm,
}

/// How a bit-vector segment stores its rule vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorForm {
    /// Compressed when that saves at least half the words.
    Auto,
    /// One bit per rule.
    Dense,
    /// A summary bit per word of rules, then the nonzero words.
    Compressed,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            box_threshold: 32,
            optimize: true,
            box_words_per_rule: BOX_WORDS_PER_RULE,
            box_words_floor: BOX_WORDS_FLOOR,
            box_vectors: VectorForm::Auto,
        }
    }
}

/// Default [`CompileOptions::box_words_per_rule`]: 512 bytes per rule.
pub const BOX_WORDS_PER_RULE: usize = 64;
/// Default [`CompileOptions::box_words_floor`]: 1 MiB.
pub const BOX_WORDS_FLOOR: usize = 1 << 17;

/// A compiled rule list. The default, an unconfigured element's, drops
/// every packet.
#[derive(Clone, Debug, Default)]
pub struct Compiled {
    segments: Vec<Segment>,
    /// Some rule reads the Ethernet header.
    uses_ether: bool,
}

/// Offsets of the IP and transport headers: the packet's annotations
/// (transport defaults to the IP header length when unset).
#[inline]
pub fn packet_headers(p: &rclick_core::Packet) -> (&[u8], &[u8]) {
    let Some((ip, tp)) = p.network_and_transport_headers() else {
        return (&[], &[]);
    };
    let tp = match tp {
        Some(t) => t,
        None => {
            // Also for a truncated or damaged header: its length field
            // says where the transport header would be.
            let hl = if ip.is_empty() {
                0
            } else {
                Ipv4Header::new_unchecked(ip).header_len()
            };
            ip.get(hl..).unwrap_or(&[])
        }
    };
    (ip, tp)
}

/// The Ethernet header: the 14 bytes before the packet's IP header, when
/// they are part of its frame (empty otherwise, so Ethernet tests fail).
#[inline]
pub fn packet_ether_header(p: &rclick_core::Packet) -> &[u8] {
    p.bytes_before_network_header(ether::HEADER_LEN)
        .unwrap_or(&[])
}

impl Compiled {
    pub fn new(rules: &[Rule], opts: CompileOptions) -> Compiled {
        let mut segments = Vec::new();
        let mut boxes: Vec<Option<BoxRule>> = rules
            .iter()
            .map(|r| {
                if opts.box_threshold == usize::MAX {
                    None
                } else {
                    as_box(&r.expr).filter(|b| b.cons.len() <= MAX_BOX_FIELDS)
                }
            })
            .collect();
        let mut i = 0;
        let mut linear_start = 0;
        while i < rules.len() {
            // Length of the box run starting at i.
            let mut j = i;
            while j < rules.len() && boxes[j].is_some() {
                j += 1;
            }
            if j - i >= opts.box_threshold.max(1) {
                if linear_start < i {
                    segments.push(Segment::Linear(LinearProgram::compile(
                        &rules[linear_start..i],
                        opts.optimize,
                    )));
                }
                // Split the run where the field count would overflow.
                let mut k = i;
                while k < j {
                    let mut fields: Vec<Field> = Vec::new();
                    let mut end = k;
                    while end < j {
                        let b = boxes[end].as_ref();
                        let mut extra: Vec<Field> = Vec::new();
                        for c in b.map(|b| b.cons.as_slice()).unwrap_or(&[]) {
                            if !fields.contains(&c.0) && !extra.contains(&c.0) {
                                extra.push(c.0);
                            }
                        }
                        if fields.len() + extra.len() > MAX_BOX_FIELDS {
                            break;
                        }
                        fields.extend(extra);
                        end += 1;
                    }
                    let run: Vec<(BoxRule, Action)> = (k..end)
                        .map(|r| {
                            (
                                // Taken: the scan has passed these rules.
                                boxes[r].take().unwrap_or_else(BoxRule::never),
                                rules[r].action,
                            )
                        })
                        .collect();
                    BoxSet::build_split(&run, k, &opts, &mut segments);
                    k = end;
                }
                linear_start = j;
                i = j;
            } else {
                i = j.max(i + 1);
            }
        }
        if linear_start < rules.len() || segments.is_empty() {
            segments.push(Segment::Linear(LinearProgram::compile(
                &rules[linear_start..],
                opts.optimize,
            )));
        }
        let mut fields = Vec::new();
        for r in rules {
            collect_fields(&r.expr, &mut fields);
        }
        Compiled {
            segments,
            uses_ether: fields.iter().any(|f| f.base == Base::Ether),
        }
    }

    /// Classifies by the IP header data and the transport header data of
    /// a packet without an Ethernet header: the output, or `None` to drop.
    #[inline]
    pub fn classify(&self, ip: &[u8], transp: &[u8]) -> Option<usize> {
        self.classify_ether(&[], ip, transp)
    }

    /// [`classify`](Self::classify) with the Ethernet header before the IP
    /// header (empty when there is none).
    #[inline(always)]
    pub fn classify_ether(&self, ether: &[u8], ip: &[u8], transp: &[u8]) -> Option<usize> {
        let mut buf = [0u8; ETHER_PADDED];
        let ether = if self.uses_ether {
            pad_ether(ether, &mut buf)
        } else {
            &[]
        };
        let data = [ip, transp, ether];
        for s in &self.segments {
            let t = match s {
                Segment::Linear(p) => p.run(data),
                Segment::Boxes(b) => b.run(data),
            };
            if t == T_NEXT {
                continue;
            }
            return if t == T_DROP {
                None
            } else {
                Some((-t) as usize)
            };
        }
        None
    }

    /// Classifies a packet by its header annotations.
    #[inline]
    pub fn classify_packet(&self, p: &rclick_core::Packet) -> Option<usize> {
        let (ip, tp) = packet_headers(p);
        // Only filters with an `ether` primitive look before the IP header.
        let ether = if ip.is_empty() || !self.uses_ether {
            &[]
        } else {
            packet_ether_header(p)
        };
        self.classify_ether(ether, ip, tp)
    }

    /// The output every packet goes to, when the first rule matches all.
    pub fn constant(&self) -> Option<Option<usize>> {
        match self.segments.first() {
            Some(Segment::Linear(LinearProgram {
                constant: Some(t), ..
            })) if *t != T_NEXT => Some(if *t == T_DROP {
                None
            } else {
                Some((-*t) as usize)
            }),
            _ => None,
        }
    }

    /// Heap bytes the compiled structure holds (steps, tests, bit
    /// vectors and interval tables), for tests and benchmarks.
    #[doc(hidden)]
    pub fn heap_bytes(&self) -> usize {
        self.segments
            .iter()
            .map(|s| match s {
                Segment::Linear(p) => {
                    p.steps.len() * std::mem::size_of::<Step>()
                        + p.eval.len() * std::mem::size_of::<Test>()
                }
                Segment::Boxes(b) => b.heap_bytes(),
            })
            .sum::<usize>()
            + self.segments.len() * std::mem::size_of::<Segment>()
    }

    /// Number of segments (for tests).
    pub fn segment_kinds(&self) -> Vec<&'static str> {
        self.segments
            .iter()
            .map(|s| match s {
                Segment::Linear(_) => "program",
                Segment::Boxes(_) => "bitvector",
            })
            .collect()
    }

    /// The `program` handler text, in Click's form: one line per step,
    /// `N OFFSET/VALUE%MASK  yes->T  no->T`, where OFFSET counts in
    /// Click's coordinates (the IP header at 256, the transport header at
    /// 512, the Ethernet header at 2), T is `step N`, `[OUTPUT]` or `[X]`
    /// (drop); `all->[OUTPUT]` when every packet goes one way (Click 2.1
    /// prints a drop there as `[2147483647]`); then the safe length (the
    /// coordinate just past the last byte any step reads) and the
    /// alignment offset (always 0). rclick's own forms: a step testing a
    /// range prints `VALUE-VALUE`; a bit-vector segment (long runs of ACL
    /// rules) prints a summary line per field; several segments are
    /// introduced by `segment N:` lines.
    pub fn unparse(&self) -> String {
        fn target(t: i32, last: bool) -> String {
            match t {
                T_DROP => "[X]".into(),
                T_NEXT if last => "[X]".into(),
                T_NEXT => "next".into(),
                t if t <= 0 => format!("[{}]", -t),
                t => format!("step {t}"),
            }
        }
        fn coord(f: &Field) -> usize {
            let base = match f.base {
                Base::Ip => 256,
                Base::Transp => 512,
                Base::Ether => 0,
            };
            base + f.offset as usize
        }
        let mut s = String::new();
        let mut safe = 0usize;
        let nseg = self.segments.len();
        for (si, seg) in self.segments.iter().enumerate() {
            let last = si + 1 == nseg;
            if nseg > 1 {
                let _ = writeln!(s, "segment {si}:");
            }
            match seg {
                Segment::Linear(p) => {
                    if let Some(c) = p.constant {
                        let t = if c == T_DROP || (c == T_NEXT && last) {
                            "[2147483647]".to_string()
                        } else {
                            target(c, last)
                        };
                        let _ = writeln!(s, "all->{t}");
                    }
                    for (i, st) in p.steps.iter().enumerate() {
                        let f = &st.atom_field;
                        safe = safe.max(coord(f) - f.offset as usize + f.required());
                        // A range that is a prefix of the masked word
                        // (`net 10.0.0.0/8`) prints as Click's masked
                        // equality.
                        let span = st.hi.wrapping_sub(st.lo);
                        let aligned = span.wrapping_add(1) & span == 0
                            && st.lo & span == 0
                            && f.mask & span == span;
                        let (value, mask) = if st.lo == st.hi || aligned {
                            (format!("{:08x}", st.lo), f.mask & !span)
                        } else {
                            (format!("{:08x}-{:08x}", st.lo, st.hi), f.mask)
                        };
                        let _ = writeln!(
                            s,
                            "{i:>2} {:>3}/{value}%{mask:08x}  yes->{}  no->{}",
                            coord(f),
                            target(st.yes, last),
                            target(st.no, last)
                        );
                    }
                }
                Segment::Boxes(b) => {
                    let _ = writeln!(
                        s,
                        "rules {}-{}: bit-vector match on {} fields, first match wins{}",
                        b.first_rule,
                        b.first_rule + b.targets.len() - 1,
                        b.fields.len(),
                        if last { ", else [X]" } else { ", else next" }
                    );
                    for bf in &b.fields {
                        let f = &bf.field;
                        safe = safe.max(coord(f) - f.offset as usize + f.required());
                        let _ = writeln!(
                            s,
                            "  {:>3}%{:08x}: {} intervals",
                            coord(f),
                            f.mask,
                            bf.intervals()
                        );
                    }
                }
            }
        }
        let _ = writeln!(s, "safe length {safe}");
        let _ = writeln!(s, "alignment offset 0");
        s
    }
}

// --------------------------------------------------------- element glue

/// Names as seen from a configuring element: AddressInfo and PortInfo
/// first, then literals and Click's built-in names.
pub struct CtxNames<'a, 'b>(pub &'a rclick_core::InitCtx<'b>);

impl Names for CtxNames<'_, '_> {
    fn ipv4(&self, s: &str) -> Option<Ipv4Addr> {
        super::address::parse_ipv4_arg(s, self.0).ok()
    }
    fn prefix(&self, s: &str) -> Option<(u32, u32)> {
        let p = super::address::parse_ipv4_prefix_arg(s, self.0).ok()?;
        Some((u32::from(p.addr), u32::from(p.mask)))
    }
    fn port(&self, s: &str, proto: u8) -> Option<u16> {
        if s.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        super::address::parse_port_arg(s, proto, self.0).ok()
    }
    fn ether(&self, s: &str) -> Option<[u8; 6]> {
        super::address::parse_ether_arg(s, self.0).ok().map(|e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interval lookup of a bit-vector field agrees with a plain
    /// search over its bounds: spread and clustered starts, buckets with
    /// up to and more than WINDOW starts, narrow and full-width masks,
    /// values at, just below and just above every start and at the ends.
    #[test]
    fn box_field_interval_lookup() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let masks = [
            0xffff_ffffu32,
            0x0000_ffff,
            0xffff_0000,
            0x00ff_0000,
            0x1fff,
            0xf,
        ];
        let mut checked = 0;
        for &mask in &masks {
            let top = 32 - mask.leading_zeros();
            let max = if top == 32 {
                u32::MAX
            } else {
                (1u32 << top) - 1
            };
            for n in [0usize, 1, 2, 3, 7, 8, 9, 15, 16, 17, 40, 91, 300, 2000] {
                // Half the starts in a few clusters of adjacent values
                // (hosts of one subnet), half spread out.
                let mut b: Vec<u32> = vec![0];
                let centres: Vec<u32> = (0..3).map(|_| (next() as u32) & max).collect();
                for i in 0..n {
                    let v = if i % 2 == 0 {
                        centres[i % 3].wrapping_add((next() % 24) as u32) & max
                    } else {
                        next() as u32 & max
                    };
                    b.push(v);
                }
                b.sort_unstable();
                b.dedup();
                let sets: Vec<u32> = (0..b.len() as u32).map(|i| i * 3 + 1).collect();
                let f = BoxField::new(
                    Field {
                        base: Base::Ip,
                        offset: 0,
                        mask,
                    },
                    b.clone(),
                    sets.clone(),
                    u32::MAX,
                );
                assert_eq!(f.intervals(), b.len());
                let mut probes = vec![0, 1, max, max - 1, max / 2];
                for &x in &b {
                    probes.extend([x, x.saturating_sub(1), x.saturating_add(1) & max]);
                }
                probes.extend((0..200).map(|_| next() as u32 & max));
                for v in probes {
                    let want = sets[b.partition_point(|&x| x <= v) - 1];
                    assert_eq!(
                        f.set_of(v),
                        want,
                        "mask {mask:#x}, {} starts, value {v:#x}",
                        b.len()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000);
    }
}
