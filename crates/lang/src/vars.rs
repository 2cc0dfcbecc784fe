//! Configuration variables: lexical environments and `$a`, `${a}`,
//! `${a[N]}`, `${a-default}` expansion.

use std::rc::Rc;

use crate::args::{
    escape_in_double_quotes, is_space, skip_backslash, skip_comment, skip_single_quote, split_words,
};

/// Deepest nesting of variable references inside values or braces.
const MAX_EXPAND_DEPTH: usize = 16;
/// Largest expansion result, so self-doubling definitions can't eat memory.
pub(crate) const MAX_EXPANSION: usize = 1 << 20;
/// Most bytes variable expansion may produce or scan while parsing one
/// configuration, counting the intermediate values of nested references:
/// a cap on each result alone still let self-referential definitions do
/// quadratic work (a fuzzer found a 346-byte configuration that took 25 s),
/// and a cap per configuration string let many strings multiply it.
const EXPANSION_WORK_BUDGET: usize = 16 << 20;

thread_local! {
    static WORK_LEFT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Starts a new parse's expansion budget.
pub(crate) fn reset_work_budget() {
    WORK_LEFT.with(|w| w.set(EXPANSION_WORK_BUDGET));
}

/// Charges `n` bytes of work to the current parse.
fn charge(n: usize) -> Result<(), TooLarge> {
    WORK_LEFT.with(|w| {
        let left = w.get();
        if n > left {
            w.set(0);
            Err(TooLarge)
        } else {
            w.set(left - n);
            Ok(())
        }
    })
}

/// One variable binding.
#[derive(Clone, Debug)]
pub(crate) struct Var {
    pub name: String,
    pub value: String,
    /// `define` values may themselves mention variables, which are expanded
    /// where the variable is used; arguments and command-line values are
    /// final.
    pub expand: bool,
}

/// A lexical variable environment: a frame per compound instantiation,
/// chained to the environment the compound class was defined in.
#[derive(Debug)]
pub(crate) struct Env {
    pub vars: Vec<Var>,
    pub parent: Option<Rc<Env>>,
    pub depth: usize,
}

impl Env {
    pub fn root(vars: Vec<Var>) -> Rc<Env> {
        Rc::new(Env {
            vars,
            parent: None,
            depth: 0,
        })
    }

    /// The innermost enclosing environment shallower than `depth`: where a
    /// class defined at nesting `depth` looks up free variables.
    pub fn parent_of(self: &Rc<Env>, depth: usize) -> Option<Rc<Env>> {
        let mut e = Some(self.clone());
        while let Some(x) = &e {
            if x.depth < depth {
                break;
            }
            e = x.parent.clone();
        }
        e
    }

    fn lookup(&self, name: &str) -> Option<&Var> {
        let mut e = Some(self);
        while let Some(x) = e {
            if let Some(v) = x.vars.iter().rev().find(|v| v.name == name) {
                return Some(v);
            }
            e = x.parent.as_deref();
        }
        None
    }
}

/// Raised when an expansion would exceed [`MAX_EXPANSION`] bytes.
#[derive(Debug)]
pub(crate) struct TooLarge;

/// Expand variable references in `text`. Single-quoted text and comments
/// are left alone; inside double quotes values are inserted escaped.
/// Undefined variables and `$(...)`, `$$`, `$?`, `$#` are left as text.
pub(crate) fn expand(text: &str, env: &Env) -> Result<String, TooLarge> {
    if !text.contains('$') {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    expand_into(text, env, 0, &mut out)?;
    Ok(out)
}

fn expand_into(text: &str, env: &Env, depth: usize, out: &mut String) -> Result<(), TooLarge> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_dq = false;
    let mut seg = 0;
    while i < b.len() {
        let c = b[i];
        if in_dq {
            match c {
                b'\\' => i = skip_backslash(b, i),
                b'"' => {
                    in_dq = false;
                    i += 1;
                }
                b'$' => {
                    out.push_str(&text[seg..i]);
                    i = variable(text, i, env, depth, true, out)?;
                    seg = i;
                }
                _ => i += 1,
            }
        } else {
            match c {
                b'"' => {
                    in_dq = true;
                    i += 1;
                }
                b'\'' => i = skip_single_quote(b, i),
                b'\\' if b.get(i + 1) == Some(&b'<') => i = skip_backslash(b, i),
                b'/' if matches!(b.get(i + 1), Some(b'/' | b'*')) => i = skip_comment(b, i),
                b'$' => {
                    out.push_str(&text[seg..i]);
                    i = variable(text, i, env, depth, false, out)?;
                    seg = i;
                }
                _ => i += 1,
            }
        }
        if out.len() > MAX_EXPANSION {
            return Err(TooLarge);
        }
    }
    out.push_str(&text[seg..]);
    if out.len() > MAX_EXPANSION {
        return Err(TooLarge);
    }
    Ok(())
}

/// Expand the reference starting at `text[i] == '$'`; appends to `out` and
/// returns the position after it.
fn variable(
    text: &str,
    i: usize,
    env: &Env,
    depth: usize,
    quoted: bool,
    out: &mut String,
) -> Result<usize, TooLarge> {
    let b = text.as_bytes();
    let literal = |end: usize, out: &mut String| {
        out.push_str(&text[i..end]);
        Ok(end)
    };
    if b.get(i + 1) == Some(&b'{') {
        // Find the matching close brace.
        let mut level = 0usize;
        let mut j = i + 1;
        let mut close = None;
        while j < b.len() {
            match b[j] {
                b'{' => level += 1,
                b'}' => {
                    level -= 1;
                    if level == 0 {
                        close = Some(j);
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let Some(close) = close else {
            return literal(i + 1, out);
        };
        if depth >= MAX_EXPAND_DEPTH {
            return literal(close + 1, out);
        }
        let mut inner = String::new();
        expand_into(&text[i + 2..close], env, depth + 1, &mut inner)?;
        let ib = inner.as_bytes();
        let mut s = skip_spaces(ib, 0);
        let name_start = s;
        while s < ib.len() && (ib[s].is_ascii_alphanumeric() || ib[s] == b'_') {
            s += 1;
        }
        let name = &inner[name_start..s];
        s = skip_spaces(ib, s);
        let mut index = None;
        if s < ib.len() && ib[s] == b'[' {
            let ns = skip_spaces(ib, s + 1);
            let mut ne = ns;
            while ne < ib.len() && ib[ne].is_ascii_digit() {
                ne += 1;
            }
            let ne2 = skip_spaces(ib, ne);
            if ne > ns && ne2 < ib.len() && ib[ne2] == b']' {
                index = inner[ns..ne].parse::<usize>().ok().or(Some(usize::MAX));
                s = skip_spaces(ib, ne2 + 1);
            }
        }
        let default = if s < ib.len() && ib[s] == b'-' {
            Some(&inner[s + 1..])
        } else {
            None
        };
        if default.is_none() && s != ib.len() {
            return literal(close + 1, out);
        }
        let value = match env.lookup(name) {
            Some(v) if !name.is_empty() => Some(value_of(v, env, depth)?),
            _ => default.map(|d| d.to_string()),
        };
        let Some(mut value) = value else {
            return literal(close + 1, out);
        };
        if let Some(n) = index {
            charge(value.len())?;
            value = split_words(&value).into_iter().nth(n).unwrap_or_default();
        }
        charge(value.len())?;
        push_value(out, &value, quoted);
        Ok(close + 1)
    } else {
        let mut j = i + 1;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        if j == i + 1 {
            return literal(i + 1, out);
        }
        match env.lookup(&text[i + 1..j]) {
            Some(v) => {
                let value = value_of(v, env, depth)?;
                charge(value.len())?;
                push_value(out, &value, quoted);
                Ok(j)
            }
            None => literal(j, out),
        }
    }
}

fn value_of(v: &Var, env: &Env, depth: usize) -> Result<String, TooLarge> {
    charge(v.value.len())?;
    if v.expand && depth < MAX_EXPAND_DEPTH && v.value.contains('$') {
        let mut s = String::new();
        expand_into(&v.value, env, depth + 1, &mut s)?;
        Ok(s)
    } else {
        Ok(v.value.clone())
    }
}

fn push_value(out: &mut String, value: &str, quoted: bool) {
    if quoted {
        out.push_str(&escape_in_double_quotes(value));
    } else {
        out.push_str(value);
    }
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    /// `expand` with a fresh budget, as `parse_router` starts one.
    fn expand_fresh(text: &str, env: &Env) -> Result<String, TooLarge> {
        reset_work_budget();
        expand(text, env)
    }

    use super::*;

    fn env(v: &[(&str, &str)]) -> Rc<Env> {
        Env::root(
            v.iter()
                .map(|(n, x)| Var {
                    name: n.to_string(),
                    value: x.to_string(),
                    expand: true,
                })
                .collect(),
        )
    }

    #[test]
    fn forms() {
        let e = env(&[("a", "1"), ("w", "x y  z"), ("n", "2"), ("q", "say \"hi\"")]);
        let x = |s: &str| expand_fresh(s, &e).unwrap();
        assert_eq!(x("$a"), "1");
        assert_eq!(x("${a}b"), "1b");
        assert_eq!(x("$ab"), "$ab");
        assert_eq!(x("${w[1]}"), "y");
        assert_eq!(x("${w[7]}"), "");
        assert_eq!(x("${w[$n]}"), "z");
        assert_eq!(x("${zz-dflt}"), "dflt");
        assert_eq!(x("${a-dflt}"), "1");
        assert_eq!(x("$zz $(x) $$ $? $#"), "$zz $(x) $$ $? $#");
        assert_eq!(x("'$a' \"$a\""), "'$a' \"1\"");
        assert_eq!(x("\"$q\""), "\"say \\\"hi\\\"\"");
        assert_eq!(x("\"\\$a\""), "\"\\$a\"");
        assert_eq!(x("// $a\n$a"), "// $a\n1");
    }

    #[test]
    fn recursion_and_blowup_bounded() {
        let e = env(&[("a", "$a$a")]);
        // Self-doubling: either a bounded result or the work budget's error.
        if let Ok(s) = expand_fresh("$a", &e) {
            assert!(s.len() <= MAX_EXPANSION);
        }
        let mut vars = vec![Var {
            name: "v0".into(),
            value: "xxxxxxxxxxxxxxxx".into(),
            expand: true,
        }];
        for k in 1..40 {
            vars.push(Var {
                name: format!("v{k}"),
                value: format!("$v{0}$v{0}", k - 1),
                expand: true,
            });
        }
        let e = Env::root(vars);
        if let Ok(s) = expand_fresh("$v39", &e) {
            assert!(s.len() <= MAX_EXPANSION);
        }
        let e = Env::root(vec![
            Var {
                name: "a".into(),
                value: "x".repeat(1000),
                expand: true,
            },
            Var {
                name: "b".into(),
                value: "$a".repeat(2000),
                expand: true,
            },
        ]);
        assert!(expand_fresh("$b", &e).is_err());
    }
}
