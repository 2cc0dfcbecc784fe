//! The Click-compatible driver: reads a configuration, reports every
//! error, installs the router, runs it, and prints handlers afterwards.

use std::io::{IsTerminal, Read, Write};
use std::sync::atomic::Ordering;

use rclick_core::time::{Timestamp, DEFAULT_SIMTIME_START};
use rclick_core::{Registry, Router, RouterOptions, StopReason};
use rclick_lang::{Diagnostic, ParseOptions, RouterSpec};

use crate::options::{self, Arg, OptSpec, ValueKind};

/// What the driver was asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Run,
    Flatten,
    Check,
    Dot,
}

const fn opt(
    long: &'static str,
    short: Option<char>,
    id: &'static str,
    value: ValueKind,
    negatable: bool,
) -> OptSpec {
    OptSpec {
        long: Some(long),
        short,
        id,
        value,
        negatable,
    }
}

/// Click's driver options (userlevel/click.cc), same names and letters.
const CLICK_OPTIONS: &[OptSpec] = &[
    opt(
        "allow-reconfigure",
        Some('R'),
        "reconfigure",
        ValueKind::None,
        true,
    ),
    opt(
        "clickpath",
        Some('C'),
        "clickpath",
        ValueKind::Required,
        false,
    ),
    opt(
        "expression",
        Some('e'),
        "expression",
        ValueKind::Required,
        false,
    ),
    opt("file", Some('f'), "file", ValueKind::Required, false),
    opt("handler", Some('h'), "handler", ValueKind::Required, false),
    opt("help", None, "help", ValueKind::None, false),
    opt("http", None, "http", ValueKind::Required, false),
    opt("http-token", None, "http-token", ValueKind::Optional, false),
    opt(
        "control-secret",
        None,
        "control-secret",
        ValueKind::Required,
        false,
    ),
    opt("output", Some('o'), "output", ValueKind::Required, false),
    opt("socket", None, "socket", ValueKind::Required, false),
    opt("port", Some('p'), "port", ValueKind::Required, false),
    opt("quit", Some('q'), "quit", ValueKind::None, false),
    opt("simtime", None, "simtime", ValueKind::Optional, false),
    opt(
        "simulation-time",
        None,
        "simtime",
        ValueKind::Optional,
        false,
    ),
    opt("threads", Some('j'), "threads", ValueKind::Required, false),
    opt("affinity", Some('a'), "affinity", ValueKind::None, false),
    opt("time", Some('t'), "time", ValueKind::None, false),
    opt(
        "unix-socket",
        Some('u'),
        "unix-socket",
        ValueKind::Required,
        false,
    ),
    opt("version", Some('v'), "version", ValueKind::None, false),
    opt("warnings", None, "warnings", ValueKind::None, true),
    opt(
        "exit-handler",
        Some('x'),
        "exit-handler",
        ValueKind::Required,
        false,
    ),
    OptSpec {
        long: None,
        short: Some('w'),
        id: "no-warnings",
        value: ValueKind::None,
        negatable: false,
    },
];

#[derive(Default)]
struct Settings {
    file: Option<String>,
    expression: Option<String>,
    quit: bool,
    handlers: Vec<String>,
    output: Option<String>,
    simtime: Option<Timestamp>,
    hotswap: bool,
    ports: Vec<String>,
    unix_sockets: Vec<String>,
    http: Vec<String>,
    /// `--http-token[=FILE]`: the file the HTTP write token goes to.
    http_token: Option<String>,
    /// `--control-secret FILE`: `-p` sockets require `AUTH`.
    control_secret: Option<String>,
    threads: usize,
    affinity: bool,
    time: bool,
    warnings: bool,
    exit_handler: Option<String>,
    clickpath: Vec<String>,
    /// Whether `-C` was given: it replaces CLICKPATH, as in Click.
    clickpath_given: bool,
    variables: Vec<(String, String)>,
}

/// Errors from the driver itself (not the configuration) are prefixed
/// with the program name, as Click's are.
struct Reporter {
    prog: String,
    rich: bool,
}

impl Reporter {
    fn error(&self, msg: &str) {
        eprintln!("{}: {msg}", self.prog);
    }

    fn diagnostics(&self, diags: &[Diagnostic], warnings: bool) {
        let mut err = std::io::stderr().lock();
        for d in diags {
            if !d.is_error() && !warnings {
                continue;
            }
            let text = if self.rich { d.render() } else { d.to_string() };
            let _ = writeln!(err, "{text}");
        }
    }
}

fn usage(prog: &str, cmd: Command) -> String {
    match cmd {
        Command::Flatten => format!(
            "'{prog}' reads a Click router configuration and writes an equivalent\n\
             configuration with all compound elements expanded.\n\n\
             Usage: {prog} [OPTION]... [ROUTERFILE]\n\n\
             Options:\n  -f, --file FILE          Read router configuration from FILE.\n  \
             -e, --expression EXPR    Use EXPR as router configuration.\n  \
             -o, --output FILE        Write flattened configuration to FILE.\n  \
             -C, --clickpath PATH     Search PATH for library files.\n      --help               Print this message and exit.\n  \
             -v, --version            Print version number and exit.\n"
        ),
        _ => format!(
            "'{prog}' runs a Click router configuration at user level. It installs the\n\
             configuration, reporting any errors to standard error, and then generally runs\n\
             until interrupted.\n\n\
             Usage: {prog} [OPTION]... [ROUTERFILE] [PARAM=VALUE]...\n\
             {extra}\n\
             Options:\n  \
             -f, --file FILE               Read router configuration from FILE.\n  \
             -e, --expression EXPR         Use EXPR as router configuration.\n  \
             -p, --port PORT[+]            Listen for control connections on TCP port.\n  \
             -u, --unix-socket FILE        Listen for control connections on Unix socket.\n      \
             --http [HOST:]PORT        Serve the live view and handler API over HTTP\n                                \
             (read-only unless --http-token).\n      \
             --http-token[=FILE]       Allow HTTP writes with a token made at start,\n                                \
             written to FILE (mode 0600) and printed in the URL.\n      \
             --control-secret FILE     -p sockets require 'AUTH SECRET' (FILE's first line).\n  \
             -R, --allow-reconfigure       Provide a writable 'hotconfig' handler.\n  \
             -h, --handler ELEMENT.H       Call ELEMENT's read handler H after running\n                                \
             driver and print result to standard output.\n  \
             -x, --exit-handler ELEMENT.H  Use handler ELEMENT.H value for exit status.\n  \
             -o, --output FILE             Write flat configuration to FILE.\n  \
             -q, --quit                    Do not run driver.\n  \
             -t, --time                    Print information on how long driver took.\n  \
             -w, --no-warnings             Do not print warnings.\n  \
             -j, --threads N               Start N threads (default 1).\n  \
             -a, --affinity                Pin threads to CPUs.\n      \
             --simtime[=TIME]          Run in simulated time starting at TIME.\n  \
             -C, --clickpath PATH          Use PATH for CLICKPATH.\n      \
             --help                    Print this message and exit.\n  \
             -v, --version                 Print version number and exit.\n",
            extra = if prog.starts_with("click") {
                String::new()
            } else {
                format!(
                    "       {prog} flatten|check|dot [OPTION]... [ROUTERFILE]\n       \
                     {prog} call [ADDRESS] ELEMENT.HANDLER [VALUE]\n\n\
                     Subcommands:\n  flatten   print the flattened configuration (like click-flatten)\n  \
                     check     parse and initialize the configuration, then exit\n  \
                     dot       print the element graph for Graphviz (push ports black, pull white)\n  \
                     call      call a handler of a running router through its control socket\n            \
                     ({prog} call --help)\n"
                )
            }
        ),
    }
}

fn parse_settings(
    prog: &str,
    cmd: Command,
    args: &[String],
    rep: &Reporter,
) -> Result<Settings, u8> {
    let parsed = match options::parse(CLICK_OPTIONS, args) {
        Ok(p) => p,
        Err(e) => {
            rep.error(&e.0);
            eprintln!(
                "Usage: {prog} [OPTION]... [ROUTERFILE]\nTry '{prog} --help' for more information."
            );
            return Err(1);
        }
    };
    let mut s = Settings {
        threads: 1,
        affinity: false,
        warnings: true,
        ..Default::default()
    };
    let mut seen_vars: Vec<String> = Vec::new();
    let set_router =
        |s: &mut Settings, file: Option<String>, expr: Option<String>| -> Result<(), u8> {
            if s.file.is_some() || s.expression.is_some() {
                rep.error("router configuration specified twice");
                return Err(1);
            }
            s.file = file;
            s.expression = expr;
            Ok(())
        };
    for a in parsed {
        match a {
            Arg::Positional(p) => {
                if let Some((name, value)) = p.split_once('=').filter(|(n, _)| is_variable_name(n))
                {
                    if seen_vars.iter().any(|v| v == name) {
                        rep.error(&format!("parameter '{name}' multiply defined"));
                        return Err(1);
                    }
                    seen_vars.push(name.to_string());
                    s.variables.push((name.to_string(), value.to_string()));
                } else {
                    set_router(&mut s, Some(p), None)?;
                }
            }
            Arg::Opt { id, value, negated } => {
                let v = value.unwrap_or_default();
                match id {
                    "help" => {
                        print!("{}", usage(prog, cmd));
                        return Err(0);
                    }
                    "version" => {
                        println!("{prog} (rclick) {}", rclick_core::VERSION);
                        println!("A Rust implementation of the Click modular router, compatible with Click 2.1.");
                        return Err(0);
                    }
                    "reconfigure" => s.hotswap = !negated,
                    "clickpath" => {
                        s.clickpath_given = true;
                        s.clickpath
                            .extend(v.split(':').filter(|x| !x.is_empty()).map(str::to_string))
                    }
                    "expression" => set_router(&mut s, None, Some(v))?,
                    "file" => set_router(&mut s, Some(v), None)?,
                    "handler" => s.handlers.push(v),
                    "output" => s.output = Some(v),
                    "port" => s.ports.push(v),
                    "http" => s.http.push(v),
                    "http-token" => s.http_token = Some(v),
                    "control-secret" => s.control_secret = Some(v),
                    "socket" => {
                        rep.error("'--socket' is not supported by rclick");
                        return Err(1);
                    }
                    "quit" => s.quit = true,
                    "simtime" => {
                        s.simtime = Some(if v.is_empty() {
                            DEFAULT_SIMTIME_START
                        } else {
                            match v.parse::<f64>() {
                                Ok(x) if x.is_finite() && x >= 0.0 => Timestamp::from_secs_f64(x),
                                _ => {
                                    rep.error(&format!(
                                        "'--simtime' expects a real number, not '{v}'"
                                    ));
                                    return Err(1);
                                }
                            }
                        })
                    }
                    "threads" => match v.parse::<usize>() {
                        Ok(n) if n >= 1 => s.threads = n,
                        _ => {
                            rep.error(&format!(
                                "'--threads' expects a positive integer, not '{v}'"
                            ));
                            return Err(1);
                        }
                    },
                    "affinity" => s.affinity = !negated,
                    "time" => s.time = true,
                    "unix-socket" => s.unix_sockets.push(v),
                    "warnings" => s.warnings = !negated,
                    "no-warnings" => s.warnings = false,
                    "exit-handler" => s.exit_handler = Some(v),
                    _ => {}
                }
            }
        }
    }
    // Click's `-C PATH` stands for CLICKPATH (set_clickpath): the
    // environment's is used only without it.
    if let (false, Ok(cp)) = (s.clickpath_given, std::env::var("CLICKPATH")) {
        s.clickpath
            .extend(cp.split(':').filter(|x| !x.is_empty()).map(str::to_string));
    }
    Ok(s)
}

fn is_variable_name(n: &str) -> bool {
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Reads the configuration text and its landmark name.
fn read_config(s: &Settings, rep: &Reporter) -> Result<(String, String), u8> {
    if let Some(e) = &s.expression {
        return Ok((e.clone(), "config".into()));
    }
    match s.file.as_deref() {
        None | Some("-") => {
            let mut text = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                rep.error(&format!("<stdin>: {e}"));
                return Err(1);
            }
            Ok((text, "<stdin>".into()))
        }
        Some(f) => match std::fs::read(f) {
            Ok(bytes) => Ok((String::from_utf8_lossy(&bytes).into_owned(), f.to_string())),
            Err(e) => {
                rep.error(&format!("{f}: {}", io_reason(&e)));
                Err(1)
            }
        },
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

fn parse_options(s: &Settings) -> ParseOptions {
    ParseOptions {
        variables: s.variables.clone(),
        library_path: s.clickpath.iter().map(Into::into).collect(),
        provided: Vec::new(),
        tool: false,
    }
}

/// `tool`: read as Click's tools do (`click-flatten`): unknown class
/// names are classes, not errors (see [`ParseOptions::tool`]).
fn parse_config(
    s: &Settings,
    text: &str,
    landmark: &str,
    registry: &Registry,
    rep: &Reporter,
    tool: bool,
) -> Result<RouterSpec, u8> {
    let opts = ParseOptions {
        tool,
        ..parse_options(s)
    };
    let outcome = rclick_lang::parse_router(text, landmark, registry, &opts);
    rep.diagnostics(&outcome.diagnostics, s.warnings);
    match outcome.spec {
        Some(spec) if !outcome.has_errors() => Ok(spec),
        _ => Err(1),
    }
}

fn write_output(path: &str, text: &str, rep: &Reporter) -> Result<(), u8> {
    let r = if path == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())
    } else {
        std::fs::write(path, text)
    };
    r.map_err(|e| {
        rep.error(&format!("{path}: {}", io_reason(&e)));
        1
    })
}

/// The driver's entry point. Returns the process exit status.
pub fn main(prog: &str, cmd: Command, args: &[String]) -> u8 {
    let rich = std::env::var("RCLICK_DIAGNOSTICS")
        .map(|v| v == "rich")
        .unwrap_or_else(|_| std::io::stderr().is_terminal());
    let rep = Reporter {
        prog: prog.to_string(),
        rich,
    };
    let s = match parse_settings(prog, cmd, args, &rep) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // Element packages (`require(package NAME)`, `load_package`) are
    // searched on CLICKPATH.
    let packages = rclick_core::package::PackageSet::new(
        s.clickpath.iter().map(std::path::PathBuf::from).collect(),
    );
    let registry = rclick_elements::registry().with_packages(packages);
    let (text, landmark) = match read_config(&s, &rep) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let spec = match parse_config(
        &s,
        &text,
        &landmark,
        &registry,
        &rep,
        cmd == Command::Flatten,
    ) {
        Ok(spec) => spec,
        Err(code) => return code,
    };

    if cmd == Command::Flatten {
        let flat = rclick_lang::flatten(&spec);
        return match write_output(s.output.as_deref().unwrap_or("-"), &flat, &rep) {
            Ok(()) => 0,
            Err(c) => c,
        };
    }
    if let Some(out) = &s.output {
        if let Err(c) = write_output(out, &rclick_lang::flatten(&spec), &rep) {
            return c;
        }
    }
    // `-p` and `-u` add ControlSocket elements, as Click's driver does; hot
    // swaps add them to each new configuration too.
    let mut control_sockets = control_socket_decls(&s);
    control_sockets.extend(http_server_decls(&s));
    let mut spec = spec;
    spec.elements.extend(control_sockets.iter().cloned());
    if s.threads > 1 && s.simtime.is_some() {
        // Simulated time jumps to the next timer when the router is idle;
        // threads each with their own timers cannot agree on that jump.
        rep.error("'--simtime' runs on one thread; leave out '-j'");
        return 1;
    }

    let ropts = RouterOptions {
        simtime: s.simtime,
        hotswap: s.hotswap,
        capture_chatter: false,
        parse: parse_options(&s),
        successor: false,
        extra_elements: control_sockets,
        threads: s.threads,
        affinity: s.affinity,
    };
    let ropts_extra = ropts.extra_elements.len();
    let started = std::time::Instant::now();
    let mut router = match Router::new(spec, &text, &registry, &ropts) {
        Ok(r) => r,
        Err(diags) => {
            rep.diagnostics(&diags, s.warnings);
            return 1;
        }
    };
    // Click prints element configuration warnings even with `-w`.
    rep.diagnostics(&router.take_warnings(), true);

    match cmd {
        Command::Check => {
            if s.warnings {
                eprintln!(
                    "{landmark}: configuration OK ({} elements)",
                    router.nelements()
                );
            }
            return 0;
        }
        Command::Dot => {
            let graph = crate::dot::render(&router);
            return match write_output("-", &graph, &rep) {
                Ok(()) => 0,
                Err(c) => c,
            };
        }
        _ => {}
    }

    if !s.quit && rep.rich {
        announce_searched_ports(&s, &mut router, &rep);
    }

    let mut reason = None;
    // Like Click: a configuration without elements (not counting the
    // driver's control sockets) says so and does not run.
    let empty = router.nelements() == ropts_extra;
    if empty && !s.quit && s.warnings {
        eprintln!("warning: {landmark}: configuration has no elements, exiting");
    }
    if !s.quit && !empty {
        let flag = router.stop_flag();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // A Script(TYPE SIGNAL ...) that wants the signal handles it.
            if !rclick_elements::standard::script::signal_claimed(sig) {
                let _ = signal_hook::flag::register(sig, flag.clone());
            }
        }
        reason = Some(router.run());
        flag.store(false, Ordering::Relaxed);
    }
    if s.time {
        let t = started.elapsed();
        eprintln!("{}.{:03}s real", t.as_secs(), t.subsec_millis());
    }
    let _ = reason == Some(StopReason::Signalled);

    let mut status = print_handlers(&mut router, &s.handlers);
    if let Some(h) = &s.exit_handler {
        match router.read_handler(h, None) {
            Ok(v) => {
                let v = v.trim();
                status = match v.parse::<i64>() {
                    Ok(n) => (n & 0xff) as u8,
                    Err(_) => match v {
                        "true" => 0,
                        "false" => 1,
                        _ => {
                            rep.error(&format!(
                                "exit handler '{h}' value '{v}' is not an integer or boolean"
                            ));
                            1
                        }
                    },
                };
            }
            Err(e) => {
                rep.error(&e);
                status = 1;
            }
        }
    }
    router.cleanup();
    status
}

/// The ControlSocket elements for `-p PORT[+]` and `-u PATH`, named as
/// Click's driver names them: TCP ports first, then Unix sockets.
fn control_socket_decls(s: &Settings) -> Vec<rclick_lang::ElementDecl> {
    let configs = s
        .ports
        .iter()
        .map(|p| match &s.control_secret {
            Some(f) => format!("TCP, {}, SECRET_FILE {}", quote_arg(p), quote_arg(f)),
            None => format!("TCP, {}", quote_arg(p)),
        })
        .chain(
            s.unix_sockets
                .iter()
                .map(|u| format!("UNIX, {}", quote_arg(u))),
        );
    configs
        .enumerate()
        .map(|(i, config)| rclick_lang::ElementDecl {
            name: if i == 0 {
                "click_driver@@ControlSocket".to_string()
            } else {
                format!("click_driver@@ControlSocket@{i}")
            },
            class: "ControlSocket".to_string(),
            config,
            landmark: rclick_lang::Landmark::new("click", 0),
        })
        .collect()
}

/// `-p PORT+` binds the first free port at or above PORT, so the user
/// cannot know which one it took: say it on standard error when it is a
/// terminal (or `RCLICK_DIAGNOSTICS=rich`). Scripts that compare stderr
/// with Click's see Click's silence and can read the `port` handler.
fn announce_searched_ports(s: &Settings, router: &mut Router, rep: &Reporter) {
    for (i, requested) in s.ports.iter().enumerate() {
        if !requested.ends_with('+') {
            continue;
        }
        let element = if i == 0 {
            "click_driver@@ControlSocket".to_string()
        } else {
            format!("click_driver@@ControlSocket@{i}")
        };
        if let Ok(port) = router.read_handler(&format!("{element}.port"), None) {
            rep.error(&format!(
                "control socket listening on TCP port {}",
                port.trim()
            ));
        }
    }
}

/// The HTTPServer elements for `--http [HOST:]PORT` (the live view).
fn http_server_decls(s: &Settings) -> Vec<rclick_lang::ElementDecl> {
    s.http
        .iter()
        .enumerate()
        .map(|(i, addr)| rclick_lang::ElementDecl {
            name: if i == 0 {
                "click_driver@@HTTPServer".to_string()
            } else {
                format!("click_driver@@HTTPServer@{i}")
            },
            class: "HTTPServer".to_string(),
            config: match http_token_file(s, i) {
                Some(f) => format!(
                    "{}, VERBOSE true, TOKEN_FILE {}",
                    quote_arg(addr),
                    quote_arg(&f)
                ),
                None => format!("{}, VERBOSE true", quote_arg(addr)),
            },
            landmark: rclick_lang::Landmark::new("click", 0),
        })
        .collect()
}

/// The token file of the `i`th `--http` server: `--http-token=FILE`
/// (`FILE.i` after the first), or with a bare `--http-token`,
/// `rclick-http-PID.token` in `$XDG_RUNTIME_DIR` (else the temporary
/// directory).
fn http_token_file(s: &Settings, i: usize) -> Option<String> {
    let given = s.http_token.as_ref()?;
    let base = if given.is_empty() {
        let dir = std::env::var_os("XDG_RUNTIME_DIR")
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        dir.join(format!("rclick-http-{}.token", std::process::id()))
            .display()
            .to_string()
    } else {
        given.clone()
    };
    Some(if i == 0 { base } else { format!("{base}.{i}") })
}

/// Quotes a configuration argument unless it is a plain word.
fn quote_arg(a: &str) -> String {
    let plain = !a.is_empty()
        && !a.contains("//")
        && !a.contains("/*")
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@~".contains(c));
    if plain {
        a.to_string()
    } else if !a.contains('\'') {
        format!("'{a}'")
    } else {
        format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Expands one `-h` pattern into concrete `elem.handler` names: an exact
/// element, a class name (every element of that class), or a glob.
fn expand_handler_pattern(router: &Router, pattern: &str) -> Result<(Vec<String>, bool), String> {
    let Some((elem, handler)) = pattern.split_once('.') else {
        return Ok((vec![pattern.to_string()], false));
    };
    if elem.is_empty() {
        return Ok((vec![pattern.to_string()], false));
    }
    if let Some(i) = router.find_element(elem) {
        // Like Click, a missing handler is reported here, in the order of
        // the -h options, before any handler is called.
        if !router.element_handlers(i).iter().any(|h| h.name == handler) {
            return Err(format!("no '{pattern}' handler"));
        }
        return Ok((vec![pattern.to_string()], false));
    }
    let mut names = Vec::new();
    let is_glob = elem.contains(['*', '?', '[']);
    for i in 0..router.nelements() {
        let name = router.element_name(i).unwrap_or_default();
        let class = router.element_class(i).unwrap_or_default();
        let matches = class == elem || (is_glob && glob_match(elem, name));
        // A glob skips elements without the handler; a class name does not.
        if matches && (!is_glob || router.element_handlers(i).iter().any(|h| h.name == handler)) {
            names.push(format!("{name}.{handler}"));
        }
    }
    if names.is_empty() {
        // Click's wording: a plain name that matches nothing is "no
        // element"; a pattern, "no element matching".
        return Err(if is_glob {
            format!("no element matching '{elem}'")
        } else {
            format!("no element '{elem}'")
        });
    }
    Ok((names, true))
}

fn glob_match(pat: &str, s: &str) -> bool {
    fn go(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len()).any(|k| go(&p[1..], &s[k..])),
            Some('?') => !s.is_empty() && go(&p[1..], &s[1..]),
            Some('[') => {
                let Some(close) = p.iter().position(|&c| c == ']') else {
                    return !s.is_empty() && s[0] == '[' && go(&p[1..], &s[1..]);
                };
                let set = &p[1..close];
                let (neg, set) = if set.first() == Some(&'^') || set.first() == Some(&'!') {
                    (true, &set[1..])
                } else {
                    (false, set)
                };
                let Some(&c) = s.first() else { return false };
                let mut hit = false;
                let mut k = 0;
                while k < set.len() {
                    if k + 2 < set.len() && set[k + 1] == '-' {
                        hit |= set[k] <= c && c <= set[k + 2];
                        k += 3;
                    } else {
                        hit |= set[k] == c;
                        k += 1;
                    }
                }
                hit != neg && go(&p[close + 1..], &s[1..])
            }
            Some(&c) => s.first() == Some(&c) && go(&p[1..], &s[1..]),
        }
    }
    let p: Vec<char> = pat.chars().collect();
    let s: Vec<char> = s.chars().collect();
    go(&p, &s)
}

/// Prints `-h` handlers after the run, Click style. Returns the exit status.
fn print_handlers(router: &mut Router, patterns: &[String]) -> u8 {
    let mut status = 0;
    let mut calls: Vec<String> = Vec::new();
    let mut labelled = patterns.len() > 1;
    for p in patterns {
        match expand_handler_pattern(router, p) {
            Ok((names, multi)) => {
                labelled |= multi;
                calls.extend(names);
            }
            Err(e) => {
                eprintln!("{e}");
                status = 1;
            }
        }
    }
    let mut out = std::io::stdout().lock();
    for h in calls {
        match router.read_handler(&h, None) {
            Ok(mut v) => {
                if !v.is_empty() && !v.ends_with('\n') {
                    v.push('\n');
                }
                if labelled {
                    let _ = write!(out, "{h}:\n{v}\n");
                } else {
                    let _ = write!(out, "{v}");
                }
            }
            Err(e) => {
                eprintln!("{e}");
                status = 1;
            }
        }
    }
    let _ = out.flush();
    status
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("*", "abc"));
        assert!(glob_match("c*", "counter1"));
        assert!(!glob_match("c*", "xc"));
        assert!(glob_match("q?", "q1"));
        assert!(glob_match("q[0-9]", "q7"));
        assert!(!glob_match("q[!0-9]", "q7"));
        assert!(glob_match("a/*", "a/b"));
    }
}
