//! Click's command-line conventions (its CLP library): clustered short
//! options (`-qo-`, `-qh H`), long options with unambiguous prefixes,
//! `--opt=value` or `--opt value`, optional values only with `=`, `--no-`
//! negation, and options anywhere among the arguments.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    None,
    Required,
    /// Only given as `--opt=value`.
    Optional,
}

/// One option the program accepts.
#[derive(Clone, Copy, Debug)]
pub struct OptSpec {
    pub long: Option<&'static str>,
    pub short: Option<char>,
    pub id: &'static str,
    pub value: ValueKind,
    pub negatable: bool,
}

/// One parsed argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    Opt {
        id: &'static str,
        value: Option<String>,
        negated: bool,
    },
    Positional(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptError(pub String);

impl fmt::Display for OptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn find_long<'a>(specs: &'a [OptSpec], name: &str) -> Result<(&'a OptSpec, bool), OptError> {
    // Exact names win, then unique prefixes; `no-X` negates negatable X.
    let candidates = |n: &str| -> Vec<&'a OptSpec> {
        if let Some(s) = specs.iter().find(|s| s.long == Some(n)) {
            return vec![s];
        }
        specs
            .iter()
            .filter(|s| s.long.is_some_and(|l| l.starts_with(n)))
            .collect()
    };
    let direct = candidates(name);
    if direct.len() == 1 {
        return Ok((direct[0], false));
    }
    if let Some(rest) = name.strip_prefix("no-") {
        let neg: Vec<&OptSpec> = candidates(rest)
            .into_iter()
            .filter(|s| s.negatable)
            .collect();
        if neg.len() == 1 && direct.is_empty() {
            return Ok((neg[0], true));
        }
    }
    if direct.len() > 1 {
        let names: Vec<String> = direct
            .iter()
            .filter_map(|s| s.long)
            .map(|l| format!("'--{l}'"))
            .collect();
        return Err(OptError(format!(
            "option '--{name}' is ambiguous (could be {})",
            names.join(", ")
        )));
    }
    Err(OptError(format!("unrecognized option '--{name}'")))
}

/// Parses `args` (without the program name).
pub fn parse(specs: &[OptSpec], args: &[String]) -> Result<Vec<Arg>, OptError> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut only_positional = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_positional || a == "-" || !a.starts_with('-') {
            out.push(Arg::Positional(a.clone()));
            continue;
        }
        if a == "--" {
            only_positional = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let (spec, negated) = find_long(specs, name)?;
            let display = spec.long.unwrap_or(name);
            let value = match (spec.value, inline, negated) {
                (_, Some(_), true) => {
                    return Err(OptError(format!("'--no-{display}' takes no value")))
                }
                (ValueKind::None, Some(_), _) => {
                    return Err(OptError(format!("'--{display}' takes no value")))
                }
                (ValueKind::None, None, _) | (ValueKind::Optional, None, _) | (_, None, true) => {
                    None
                }
                (_, Some(v), false) => Some(v),
                (ValueKind::Required, None, false) => {
                    let Some(v) = args.get(i) else {
                        return Err(OptError(format!("'--{display}' requires a value")));
                    };
                    i += 1;
                    Some(v.clone())
                }
            };
            out.push(Arg::Opt {
                id: spec.id,
                value,
                negated,
            });
            continue;
        }
        // A cluster of short options.
        let cluster: Vec<char> = a[1..].chars().collect();
        let mut k = 0;
        while k < cluster.len() {
            let c = cluster[k];
            k += 1;
            let Some(spec) = specs.iter().find(|s| s.short == Some(c)) else {
                return Err(OptError(format!("unrecognized option '-{c}'")));
            };
            match spec.value {
                ValueKind::None | ValueKind::Optional => out.push(Arg::Opt {
                    id: spec.id,
                    value: None,
                    negated: false,
                }),
                ValueKind::Required => {
                    let value = if k < cluster.len() {
                        let v: String = cluster[k..].iter().collect();
                        k = cluster.len();
                        v
                    } else {
                        let Some(v) = args.get(i) else {
                            return Err(OptError(format!("'-{c}' requires a value")));
                        };
                        i += 1;
                        v.clone()
                    };
                    out.push(Arg::Opt {
                        id: spec.id,
                        value: Some(value),
                        negated: false,
                    });
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[OptSpec] = &[
        OptSpec {
            long: Some("quit"),
            short: Some('q'),
            id: "quit",
            value: ValueKind::None,
            negatable: false,
        },
        OptSpec {
            long: Some("output"),
            short: Some('o'),
            id: "output",
            value: ValueKind::Required,
            negatable: false,
        },
        OptSpec {
            long: Some("handler"),
            short: Some('h'),
            id: "handler",
            value: ValueKind::Required,
            negatable: false,
        },
        OptSpec {
            long: Some("help"),
            short: None,
            id: "help",
            value: ValueKind::None,
            negatable: false,
        },
        OptSpec {
            long: Some("simtime"),
            short: None,
            id: "simtime",
            value: ValueKind::Optional,
            negatable: false,
        },
        OptSpec {
            long: Some("simulation-time"),
            short: None,
            id: "simtime",
            value: ValueKind::Optional,
            negatable: false,
        },
        OptSpec {
            long: Some("warnings"),
            short: None,
            id: "warnings",
            value: ValueKind::None,
            negatable: true,
        },
    ];

    fn p(args: &[&str]) -> Result<Vec<Arg>, OptError> {
        parse(
            SPECS,
            &args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    }

    fn opt(id: &'static str, v: Option<&str>) -> Arg {
        Arg::Opt {
            id,
            value: v.map(str::to_string),
            negated: false,
        }
    }

    #[test]
    fn clusters() {
        assert_eq!(
            p(&["-qo-"]).unwrap(),
            vec![opt("quit", None), opt("output", Some("-"))]
        );
        assert_eq!(
            p(&["-qh", "c.count", "f"]).unwrap(),
            vec![
                opt("quit", None),
                opt("handler", Some("c.count")),
                Arg::Positional("f".into())
            ]
        );
    }

    #[test]
    fn long_forms() {
        assert_eq!(p(&["--out=x"]).unwrap(), vec![opt("output", Some("x"))]);
        assert_eq!(
            p(&["--output", "x"]).unwrap(),
            vec![opt("output", Some("x"))]
        );
        assert_eq!(p(&["--simtime"]).unwrap(), vec![opt("simtime", None)]);
        assert_eq!(
            p(&["--simtime=5", "file"]).unwrap(),
            vec![opt("simtime", Some("5")), Arg::Positional("file".into())]
        );
        assert_eq!(
            p(&["--no-warnings"]).unwrap(),
            vec![Arg::Opt {
                id: "warnings",
                value: None,
                negated: true
            }]
        );
        assert!(p(&["--h"]).unwrap_err().0.contains("ambiguous"));
        assert!(p(&["--bogus"]).is_err());
        assert!(p(&["-z"]).is_err());
        assert!(p(&["-o"]).is_err());
    }

    #[test]
    fn positionals_and_dash() {
        assert_eq!(
            p(&["-", "A=1", "--", "-q"]).unwrap(),
            vec![
                Arg::Positional("-".into()),
                Arg::Positional("A=1".into()),
                Arg::Positional("-q".into())
            ]
        );
    }
}
