//! The element-package handlers and the plugin control path (Router
//! Plugins' terms): `load_package`, `unload_package`, `packages`,
//! `package_fingerprint`; `create_instance`, `free_instance`,
//! `register_instance`, `deregister_instance`, `instances`.
//!
//! Creating and freeing an instance edit a copy of the running router's
//! flat configuration (its `RouterSpec`) and hot swap to it: every other
//! element keeps its name, so elements that hand on their state
//! (`take_state`: queues keep their packets, counters their counts) carry
//! it into the new router, and the switch happens between driver
//! iterations, when no packet is between elements. Registering an
//! instance for a filter writes the `add_filter` handler of the gate it
//! hangs off with the gate output that leads to it; no swap is needed.
//! See docs/packages.md for the syntax.

use rclick_lang::{Connection, ElementDecl, Landmark, RouterSpec};

use super::RouterCore;
use crate::ctx::Ctx;

/// The control path's write handlers.
pub(crate) const CONTROL_WRITES: &[&str] = &[
    "create_instance",
    "free_instance",
    "register_instance",
    "deregister_instance",
];

/// An instance registered for a filter of its gate.
#[derive(Clone, Debug)]
pub(crate) struct Binding {
    pub instance: String,
    pub gate: String,
    pub port: usize,
    pub filter: String,
}

/// `ELEMENT[PORT]` or `ELEMENT` (port 0); also `ELEMENT [PORT]`, given as
/// two words joined by the caller.
fn parse_port_ref(s: &str) -> Result<(String, usize), String> {
    let s = s.trim();
    match s.find('[') {
        None => Ok((s.to_string(), 0)),
        Some(i) => {
            let name = s[..i].trim();
            let rest = s[i + 1..].trim();
            let Some(num) = rest.strip_suffix(']') else {
                return Err(format!("expected ELEMENT[PORT], not '{s}'"));
            };
            let port = num
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("bad port in '{s}'"))?;
            if name.is_empty() {
                return Err(format!("expected ELEMENT[PORT], not '{s}'"));
            }
            Ok((name.to_string(), port))
        }
    }
}

/// Whether `s` can name an element in a configuration, as the lexer reads
/// names: words of letters, digits, `_` and `@` joined by single `/`, and
/// not a keyword. Anything else would make the router's flattened
/// configuration (its `config` handler, what later hot swaps start from)
/// unreadable, and its handlers unreachable.
fn is_element_name(s: &str) -> bool {
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'@')
    };
    s.split('/').all(word) && !matches!(s, "elementclass" | "require" | "provide" | "define")
}

/// A parsed `create_instance` value.
#[derive(Debug, PartialEq, Eq)]
struct CreateSpec {
    name: String,
    class: String,
    config: String,
    from: (String, usize),
    to: Option<(String, usize)>,
}

/// `NAME CLASS[(CONFIG)] FROM GATE[PORT] [TO TARGET[PORT]]`.
fn parse_create(v: &str) -> Result<CreateSpec, String> {
    const USAGE: &str = "expected 'NAME CLASS[(CONFIG)] FROM GATE[PORT] [TO TARGET[PORT]]'";
    let v = v.trim();
    let (name, rest) = v.split_once(char::is_whitespace).ok_or(USAGE)?;
    let rest = rest.trim_start();
    let class_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '@' || c == '/'))
        .unwrap_or(rest.len());
    let class = &rest[..class_end];
    let mut rest = rest[class_end..].trim_start();
    let mut config = String::new();
    if rest.starts_with('(') {
        // Up to the matching parenthesis, outside quotes.
        let mut depth = 0usize;
        let mut quote: Option<char> = None;
        let mut end = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            if let Some(q) = quote {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
                continue;
            }
            match c {
                '"' | '\'' => quote = Some(c),
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end.ok_or("unbalanced parentheses in the configuration")?;
        config = rest[1..end].trim().to_string();
        rest = rest[end + 1..].trim_start();
    }
    if name.is_empty() || class.is_empty() {
        return Err(USAGE.into());
    }
    if !is_element_name(name) {
        return Err(format!(
            "'{name}' is not an element name (letters, digits, '_' and '@', \
             in parts joined by single '/')"
        ));
    }
    // FROM GATE[PORT] [TO TARGET[PORT]], keywords in any case.
    let upper = rest.to_ascii_uppercase();
    let Some(after_from) = upper.strip_prefix("FROM") else {
        return Err(USAGE.into());
    };
    let after_from = &rest[rest.len() - after_from.len()..];
    let upper_af = after_from.to_ascii_uppercase();
    let (from, to) = match upper_af.find(" TO ") {
        Some(i) => (&after_from[..i], Some(&after_from[i + 4..])),
        None => (after_from, None),
    };
    Ok(CreateSpec {
        name: name.to_string(),
        class: class.to_string(),
        config,
        from: parse_port_ref(from)?,
        to: to.map(parse_port_ref).transpose()?,
    })
}

/// `spec` without element `idx` and its connections (indices renumbered).
fn remove_element(spec: &mut RouterSpec, idx: usize) {
    spec.elements.remove(idx);
    let mut conns = Vec::new();
    let mut lms = Vec::new();
    for (c, lm) in spec
        .connections
        .drain(..)
        .zip(spec.connection_landmarks.drain(..))
    {
        if c.from == idx || c.to == idx {
            continue;
        }
        let fix = |i: usize| if i > idx { i - 1 } else { i };
        conns.push(Connection {
            from: fix(c.from),
            from_port: c.from_port,
            to: fix(c.to),
            to_port: c.to_port,
        });
        lms.push(lm);
    }
    spec.connections = conns;
    spec.connection_landmarks = lms;
}

fn connect(spec: &mut RouterSpec, from: usize, from_port: usize, to: usize, to_port: usize) {
    spec.connections.push(Connection {
        from,
        from_port,
        to,
        to_port,
    });
    spec.connection_landmarks
        .push(Landmark::new("create_instance", 0));
}

impl RouterCore {
    pub(crate) fn read_plugin_global(&self, name: &str) -> Result<String, String> {
        match name {
            // One line per loaded package: NAME, its file, its classes.
            "packages" => Ok(self
                .registry
                .packages()
                .map(|set| {
                    set.loaded()
                        .iter()
                        .map(|p| {
                            format!(
                                "{}\t{}\t{}\n",
                                p.name,
                                p.path.display(),
                                p.classes.join(" ")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()),
            "package_fingerprint" => Ok(format!("{}\n", crate::package::abi::fingerprint())),
            // One line per registered filter: INSTANCE GATE[PORT] FILTER;
            // then instances of package classes with no filter.
            "instances" => {
                let b = self.bindings.borrow();
                let mut s: String = b
                    .iter()
                    .map(|x| format!("{}\t{}[{}]\t{}\n", x.instance, x.gate, x.port, x.filter))
                    .collect();
                for e in self.package_elements(None) {
                    let n = &self.info[e].name;
                    if !b.iter().any(|x| &x.instance == n) {
                        s.push_str(&format!("{n}\t-\t-\n"));
                    }
                }
                Ok(s)
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }

    /// Elements whose class comes from a loaded package (all packages, or
    /// the one named).
    fn package_elements(&self, package: Option<&str>) -> Vec<usize> {
        let Some(set) = self.registry.packages() else {
            return Vec::new();
        };
        let classes: Vec<&'static str> = set
            .loaded()
            .iter()
            .filter(|p| package.is_none_or(|n| p.name == n))
            .flat_map(|p| p.classes.clone())
            .collect();
        (0..self.info.len())
            .filter(|&i| classes.contains(&self.info[i].class.as_str()))
            .collect()
    }

    pub(crate) fn write_package_global(&self, name: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        match name {
            "load_package" => self.registry.load_package(value).map(|_| ()),
            "unload_package" => {
                let set = self
                    .registry
                    .packages()
                    .ok_or("this router cannot load element packages")?;
                if set.find(value).is_none() {
                    return Err(format!("no package '{value}' is loaded"));
                }
                // A successor built (by create_instance, hotconfig) but
                // not installed yet may hold elements of the package that
                // the running router has not: refuse until it is in.
                if self.swap_in_progress() || self.pending_swap.borrow().is_some() {
                    return Err(format!(
                        "a hot swap is being installed: unload package '{value}' after it"
                    ));
                }
                let users = self.package_elements(Some(value));
                if !users.is_empty() {
                    let names: Vec<String> = users
                        .iter()
                        .map(|&i| format!("{} :: {}", self.info[i].name, self.info[i].class))
                        .collect();
                    return Err(format!(
                        "package '{value}' is in use by {}; free or swap them out first",
                        names.join(", ")
                    ));
                }
                set.unregister(value).map(|_| ())
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }

    pub(crate) fn write_control_path(
        &self,
        name: &str,
        value: &str,
        ctx: &mut Ctx,
    ) -> Result<(), String> {
        match name {
            "create_instance" => self.create_instance(value),
            "free_instance" => self.free_instance(value.trim()),
            "register_instance" | "deregister_instance" => {
                let value = value.trim();
                let (inst, filter) = value
                    .split_once(char::is_whitespace)
                    .map(|(a, b)| (a, b.trim()))
                    .unwrap_or((value, ""));
                if inst.is_empty() {
                    return Err(format!("expected '{name} INSTANCE FILTER'"));
                }
                self.bind(inst, filter, name == "register_instance", ctx)
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }

    /// The registrations of the router this one replaces that still hold
    /// here: the instance exists and still hangs off output `port` of the
    /// gate, and the gate took its predecessor's state (its filters).
    /// Others are dropped, or they would be listed by `instances` and
    /// block `free_instance` of a later element of the same name for a
    /// filter no gate has (`deregister_instance` then fails too).
    pub(crate) fn carried_bindings(&self, old: Vec<Binding>, took: &[bool]) -> Vec<Binding> {
        old.into_iter()
            .filter(|b| {
                let (Some(&g), Some(&i)) =
                    (self.by_name.get(&b.gate), self.by_name.get(&b.instance))
                else {
                    return false;
                };
                took.get(g).copied().unwrap_or(false)
                    && self.graph.ins[i]
                        .iter()
                        .flatten()
                        .any(|&(from, port)| from == g && port == b.port)
            })
            .collect()
    }

    fn need_hotswap(&self, what: &str) -> Result<(), String> {
        if self.hotswap {
            Ok(())
        } else {
            Err(format!(
                "'{what}' hot swaps the router: it needs the driver's -R \
                 (--allow-reconfigure) option"
            ))
        }
    }

    /// A copy of this router's spec to edit, with one landmark per
    /// connection (a spec built by hand may have fewer; the edits below
    /// keep the two lists in step).
    fn editable_spec(&self) -> RouterSpec {
        let mut spec = self.spec.clone();
        spec.connection_landmarks
            .resize(spec.connections.len(), Landmark::new("", 0));
        spec
    }

    fn spec_index(spec: &RouterSpec, name: &str) -> Option<usize> {
        spec.elements.iter().position(|e| e.name == name)
    }

    fn create_instance(&self, value: &str) -> Result<(), String> {
        self.need_hotswap("create_instance")?;
        let c = parse_create(value)?;
        if self.by_name.contains_key(&c.name) {
            return Err(format!("an element named '{}' exists already", c.name));
        }
        if self.registry.get(&c.class).is_none() {
            return Err(format!(
                "no element class '{}' (load its package first)",
                c.class
            ));
        }
        let mut spec = self.editable_spec();
        let gate = Self::spec_index(&spec, &c.from.0)
            .ok_or_else(|| format!("no element named '{}'", c.from.0))?;
        let gport = c.from.1;
        let leaving: Vec<usize> = (0..spec.connections.len())
            .filter(|&k| spec.connections[k].from == gate && spec.connections[k].from_port == gport)
            .collect();
        let target = match &c.to {
            Some((t, tp)) => (
                Self::spec_index(&spec, t).ok_or_else(|| format!("no element named '{t}'"))?,
                *tp,
            ),
            None => match leaving.as_slice() {
                [k] => (spec.connections[*k].to, spec.connections[*k].to_port),
                [] => {
                    return Err(format!(
                        "{}[{gport}] is not connected: say where the instance leads \
                         with TO TARGET[PORT]",
                        c.from.0
                    ))
                }
                _ => {
                    return Err(format!(
                        "{}[{gport}] leads to several inputs: say which with TO TARGET[PORT]",
                        c.from.0
                    ))
                }
            },
        };
        // The instance takes the gate output's place in the graph.
        for &k in leaving.iter().rev() {
            spec.connections.remove(k);
            spec.connection_landmarks.remove(k);
        }
        // The configuration now needs the class's package: say so, so
        // that the router's `config` loads it when run again.
        if let Some(package) = self
            .registry
            .packages()
            .and_then(|s| s.package_of(&c.class))
        {
            if !spec.requirements.contains(&package) {
                spec.requirements.push(package);
            }
        }
        let idx = spec.elements.len();
        spec.elements.push(ElementDecl {
            name: c.name.clone(),
            class: c.class.clone(),
            config: c.config.clone(),
            landmark: Landmark::new("create_instance", 0),
        });
        connect(&mut spec, gate, gport, idx, 0);
        connect(&mut spec, idx, 0, target.0, target.1);
        self.swap_to_spec(spec)
    }

    fn free_instance(&self, name: &str) -> Result<(), String> {
        self.need_hotswap("free_instance")?;
        if name.is_empty() {
            return Err("expected 'free_instance NAME'".into());
        }
        let bound: Vec<String> = self
            .bindings
            .borrow()
            .iter()
            .filter(|b| b.instance == name)
            .map(|b| b.filter.clone())
            .collect();
        if !bound.is_empty() {
            return Err(format!(
                "'{name}' is registered for {} filter(s) ({}): deregister it first",
                bound.len(),
                bound.join("; ")
            ));
        }
        let mut spec = self.editable_spec();
        let idx =
            Self::spec_index(&spec, name).ok_or_else(|| format!("no element named '{name}'"))?;
        let ins: Vec<(usize, usize)> = spec
            .connections
            .iter()
            .filter(|c| c.to == idx)
            .map(|c| (c.from, c.from_port))
            .collect();
        let outs: Vec<&Connection> = spec.connections.iter().filter(|c| c.from == idx).collect();
        let in_ports_ok = spec
            .connections
            .iter()
            .all(|c| c.to != idx || c.to_port == 0);
        let target = match outs.as_slice() {
            [o] if o.from_port == 0 && in_ports_ok && !ins.is_empty() => (o.to, o.to_port),
            _ => {
                return Err(format!(
                    "'{name}' is not an instance between one input and one output: \
                     change the configuration with hotconfig instead"
                ))
            }
        };
        // Its upstream elements lead where it led.
        remove_element(&mut spec, idx);
        let fix = |i: usize| if i > idx { i - 1 } else { i };
        for (f, fp) in ins {
            if f == idx {
                continue;
            }
            spec.connections.push(Connection {
                from: fix(f),
                from_port: fp,
                to: fix(target.0),
                to_port: target.1,
            });
            spec.connection_landmarks
                .push(Landmark::new("free_instance", 0));
        }
        self.swap_to_spec(spec)
    }

    /// Registers (or deregisters) instance `inst` for `filter` at the gate
    /// it hangs off: the element upstream of it with an `add_filter`
    /// handler, through the output that leads to it.
    fn bind(&self, inst: &str, filter: &str, register: bool, ctx: &mut Ctx) -> Result<(), String> {
        let i = self
            .find_element(inst, None)
            .ok_or_else(|| format!("no element named '{inst}'"))?;
        let gate = self.graph.ins[i].iter().flatten().copied().find(|&(g, _)| {
            self.element_handlers(g)
                .iter()
                .any(|h| h.name == "add_filter" && h.is_write())
        });
        let Some((g, port)) = gate else {
            return Err(format!(
                "'{inst}' does not hang off a gate (an element with an 'add_filter' handler)"
            ));
        };
        let gname = self.info[g].name.clone();
        if register {
            if filter.is_empty() {
                return Err("expected 'register_instance INSTANCE FILTER'".into());
            }
            self.write_handler(Some(g), "add_filter", &format!("{port} {filter}"), ctx)?;
            self.bindings.borrow_mut().push(Binding {
                instance: inst.to_string(),
                gate: gname,
                port,
                filter: filter.to_string(),
            });
            return Ok(());
        }
        // Deregister: the filter given, or every filter of the instance.
        let filters: Vec<String> = self
            .bindings
            .borrow()
            .iter()
            .filter(|b| b.instance == inst && (filter.is_empty() || b.filter == filter))
            .map(|b| b.filter.clone())
            .collect();
        let filters = if filters.is_empty() && !filter.is_empty() {
            vec![filter.to_string()]
        } else if filters.is_empty() {
            return Err(format!("'{inst}' is not registered for any filter"));
        } else {
            filters
        };
        for f in &filters {
            self.write_handler(Some(g), "remove_filter", &format!("{port} {f}"), ctx)?;
            self.bindings
                .borrow_mut()
                .retain(|b| !(b.instance == inst && &b.filter == f));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::{Element, HandlerSpec, Registry};
    use crate::{Router, RouterOptions};

    /// A stand-in for a flow gate: records the filters written to it.
    #[derive(Default)]
    struct Gate {
        filters: Vec<String>,
    }

    impl Element for Gate {
        fn port_count(&self) -> &'static str {
            "1/2"
        }
        fn processing(&self) -> &'static str {
            "h/h"
        }
        fn handlers(&self) -> Vec<HandlerSpec> {
            vec![
                HandlerSpec::write("add_filter"),
                HandlerSpec::write("remove_filter"),
                HandlerSpec::read("filters"),
            ]
        }
        fn read_handler(&self, _: &str, _: Option<&str>, _: &Ctx) -> Result<String, String> {
            Ok(self.filters.join("\n"))
        }
        fn write_handler(&mut self, name: &str, v: &str, _: &mut Ctx) -> Result<(), String> {
            match name {
                "add_filter" => self.filters.push(v.to_string()),
                _ => {
                    let i = self
                        .filters
                        .iter()
                        .position(|f| f == v)
                        .ok_or("no such filter")?;
                    self.filters.remove(i);
                }
            }
            Ok(())
        }
        fn take_state(&mut self, old: &mut dyn Element, _: &mut crate::InitCtx) -> bool {
            match old.as_any_mut().downcast_mut::<Gate>() {
                Some(o) => {
                    self.filters = std::mem::take(&mut o.filters);
                    true
                }
                None => false,
            }
        }
    }

    struct Src;
    impl Element for Src {
        fn port_count(&self) -> &'static str {
            "0/1"
        }
        fn processing(&self) -> &'static str {
            "h/h"
        }
    }
    struct Pass;
    impl Element for Pass {
        fn processing(&self) -> &'static str {
            "h/h"
        }
    }
    struct Sink;
    impl Element for Sink {
        fn port_count(&self) -> &'static str {
            "1/0"
        }
        fn processing(&self) -> &'static str {
            "h/h"
        }
    }

    fn router(hotswap: bool) -> Router {
        router_with(hotswap, |_| {})
    }

    fn router_with(hotswap: bool, edit: impl FnOnce(&mut RouterSpec)) -> Router {
        let mut reg = Registry::new();
        reg.add("Gate", || Box::new(Gate::default()));
        reg.add("Src", || Box::new(Src));
        reg.add("Pass", || Box::new(Pass));
        reg.add("Sink", || Box::new(Sink));
        let spec = RouterSpec::from_lists(
            "t",
            &[
                ("src", "Src", ""),
                ("gate", "Gate", ""),
                ("a", "Sink", ""),
                ("b", "Sink", ""),
            ],
            &[(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0)],
        );
        let mut spec = spec;
        edit(&mut spec);
        let opts = RouterOptions {
            hotswap,
            capture_chatter: true,
            ..Default::default()
        };
        Router::new(spec, "", &reg, &opts).unwrap_or_else(|d| panic!("{d:?}"))
    }

    #[test]
    fn create_register_deregister_free() {
        let mut r = router(true);
        r.write_handler("create_instance", "i Pass FROM gate[1]")
            .unwrap();
        let ports = r.read_handler("i.ports", None).unwrap();
        assert!(
            ports.contains("gate [1]") && ports.contains("[0] b"),
            "{ports}"
        );
        r.write_handler("register_instance", "i dst 10.0.0.0/8 dport 80")
            .unwrap();
        r.write_handler("register_instance", "i src 192.168.0.0/16")
            .unwrap();
        assert_eq!(
            r.read_handler("gate.filters", None).unwrap(),
            "1 dst 10.0.0.0/8 dport 80\n1 src 192.168.0.0/16"
        );
        let inst = r.read_handler("instances", None).unwrap();
        assert!(
            inst.contains("i\tgate[1]\tdst 10.0.0.0/8 dport 80\n"),
            "{inst}"
        );
        let err = r.write_handler("free_instance", "i").unwrap_err();
        assert!(err.contains("'i' is registered for 2 filter(s)"), "{err}");
        // A hot swap of another kind keeps the gate's filters and the
        // bindings.
        r.write_handler("create_instance", "j Pass FROM gate[0]")
            .unwrap();
        assert!(r
            .read_handler("instances", None)
            .unwrap()
            .contains("i\tgate[1]"));
        assert_eq!(
            r.read_handler("gate.filters", None)
                .unwrap()
                .lines()
                .count(),
            2
        );
        r.write_handler("deregister_instance", "i src 192.168.0.0/16")
            .unwrap();
        assert_eq!(
            r.read_handler("gate.filters", None).unwrap(),
            "1 dst 10.0.0.0/8 dport 80"
        );
        r.write_handler("deregister_instance", "i").unwrap();
        assert_eq!(r.read_handler("gate.filters", None).unwrap(), "");
        r.write_handler("free_instance", "i").unwrap();
        assert!(r.find_element("i").is_none());
        let ports = r.read_handler("gate.ports", None).unwrap();
        assert!(ports.contains("[0] b"), "gate[1] leads to b again: {ports}");
        let err = r
            .write_handler("register_instance", "src dst 1.2.3.4")
            .unwrap_err();
        assert!(err.contains("does not hang off a gate"), "{err}");
    }

    #[test]
    fn a_hot_swap_drops_registrations_of_instances_it_removes() {
        let mut r = router(true);
        r.write_handler("create_instance", "i Pass FROM gate[1]")
            .unwrap();
        r.write_handler("register_instance", "i dst 10.0.0.0/8")
            .unwrap();
        // A configuration without i: its registration goes with it.
        r.hotswap("src :: Src -> gate :: Gate -> a :: Sink; gate[1] -> b :: Sink;")
            .unwrap_or_else(|d| panic!("{d:?}"));
        let inst = r.read_handler("instances", None).unwrap();
        assert_eq!(inst, "", "i is gone, and so is its registration");
        // A new i can be created and freed again.
        r.write_handler("create_instance", "i Pass FROM gate[1]")
            .unwrap();
        r.write_handler("free_instance", "i")
            .unwrap_or_else(|e| panic!("free_instance of the new i: {e}"));
        // Kept when the instance stays and the gate keeps its filters.
        r.write_handler("create_instance", "k Pass FROM gate[0]")
            .unwrap();
        r.write_handler("register_instance", "k src 1.0.0.0/8")
            .unwrap();
        r.hotswap("src :: Src -> gate :: Gate -> k :: Pass -> a :: Sink; gate[1] -> b :: Sink;")
            .unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(
            r.read_handler("instances", None).unwrap(),
            "k\tgate[0]\tsrc 1.0.0.0/8\n"
        );
        // Dropped when the gate is replaced by one that keeps no filters.
        r.hotswap("src :: Src -> gate :: Pass -> k :: Pass -> a :: Sink;")
            .unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(r.read_handler("instances", None).unwrap(), "");
    }

    #[test]
    fn an_instance_name_must_be_an_element_name() {
        let mut r = router(true);
        let err = r
            .write_handler("create_instance", "a;b Pass FROM gate[1]")
            .unwrap_err();
        assert!(err.contains("not an element name"), "{err}");
        assert!(r.find_element("a;b").is_none());
        // The configuration stays readable.
        let conf = r.read_handler("config", None).unwrap();
        assert!(!conf.contains("a;b"), "{conf}");
    }

    #[test]
    fn a_spec_without_connection_landmarks_can_be_edited() {
        // RouterSpec's fields are public: a spec built by hand may leave
        // the landmarks out.
        let mut r = router_with(true, |s| s.connection_landmarks.clear());
        r.write_handler("create_instance", "i Pass FROM gate[1]")
            .unwrap();
        let ports = r.read_handler("i.ports", None).unwrap();
        assert!(
            ports.contains("gate [1]") && ports.contains("[0] b"),
            "{ports}"
        );
        r.write_handler("free_instance", "i").unwrap();
        let ports = r.read_handler("gate.ports", None).unwrap();
        assert!(
            ports.contains("[0] a") && ports.contains("[0] b"),
            "{ports}"
        );
        assert!(r
            .read_handler("src.ports", None)
            .unwrap()
            .contains("[0] gate"));
    }

    #[test]
    fn creating_needs_hot_swap() {
        let mut r = router(false);
        let err = r
            .write_handler("create_instance", "i Pass FROM gate[1]")
            .unwrap_err();
        assert!(err.contains("-R"), "{err}");
    }

    #[test]
    fn create_syntax() {
        let c = parse_create("i1 HelloCounter FROM gate[2]").unwrap();
        assert_eq!(c.name, "i1");
        assert_eq!(c.class, "HelloCounter");
        assert_eq!(c.config, "");
        assert_eq!(c.from, ("gate".to_string(), 2));
        assert_eq!(c.to, None);
        let c = parse_create("q Queue(10, \"a)b\") from g [1] to out[0]").unwrap();
        assert_eq!(c.class, "Queue");
        assert_eq!(c.config, "10, \"a)b\"");
        assert_eq!(c.from, ("g".to_string(), 1));
        assert_eq!(c.to, Some(("out".to_string(), 0)));
        assert!(parse_create("i1 HelloCounter").is_err());
        assert!(parse_create("i1 X(1 FROM g").is_err());
        assert!(parse_create("i1 X FROM g[x]").is_err());
        assert!(parse_create("a/b_1@2 X FROM g").is_ok());
        for bad in ["a;b", "a.b", "a//b", "/a", "a->b", "x::y", "require", "a,b"] {
            let err = parse_create(&format!("{bad} X FROM g")).unwrap_err();
            assert!(err.contains("is not an element name"), "{bad}: {err}");
        }
    }
}
