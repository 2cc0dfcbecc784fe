//! Handlers: the standard ones every element has (`name`, `class`,
//! `config`, `ports`, `handlers`, and `scheduled`, `tickets`,
//! `home_thread` for elements with tasks), the global ones (`version`,
//! `config`, `list`, `stop`, `hotconfig`, ...), and calls to elements' own.

use super::{plugins, Router, RouterCore};
use crate::ctx::{Ctx, InitCtx};
use crate::element::{hflags, HandlerSpec};

thread_local! {
    /// While a caller on this thread collects them
    /// ([`Ctx::call_write_noting`]): the warnings a `config` write gives,
    /// for the caller to report under its own context (Click's Script
    /// nests them under "While calling"). Per thread: workers write their
    /// own elements' handlers as the others run.
    pub(crate) static CALL_NOTES: std::cell::RefCell<Option<Vec<String>>> =
        const { std::cell::RefCell::new(None) };
}

impl RouterCore {
    /// Splits `elem.handler` (or a global `handler`) and finds the element.
    pub(crate) fn resolve_handler(
        &self,
        path: &str,
        context: Option<&str>,
    ) -> Result<(Option<usize>, String), String> {
        let path = path.trim();
        match path.split_once('.') {
            None => Ok((None, path.to_string())),
            Some(("", h)) | Some(("0", h)) => Ok((None, h.to_string())),
            Some((e, h)) => match self.find_element(e, context) {
                Some(i) => Ok((Some(i), h.to_string())),
                None => Err(format!("no element named '{e}'")),
            },
        }
    }

    /// Every handler of element `e`, standard ones first.
    /// The error for a handler `element_handlers` did not list: an element
    /// that is running (a caller up the stack, such as the element pulling
    /// through a Counter whose COUNT_CALL writes it) cannot list its own.
    fn missing_handler(&self, e: usize, name: &str) -> String {
        let element = &self.info[e].name;
        if self.elements[e].try_borrow().is_err() {
            format!("'{element}.{name}': {element} is busy (it is on the call stack)")
        } else {
            format!("no '{element}.{name}' handler")
        }
    }

    /// Whether element `e`'s own table has a read (or, with `write`, a
    /// write) handler `name`, overriding a standard one.
    fn element_defines(&self, e: usize, name: &str, write: bool) -> bool {
        let flag = if write { hflags::WRITE } else { hflags::READ };
        self.elements[e].try_borrow().is_ok_and(|el| {
            el.handlers()
                .iter()
                .any(|h| h.name == name && h.flags & flag != 0)
        })
    }

    pub(crate) fn element_handlers(&self, e: usize) -> Vec<HandlerSpec> {
        let calm = |h: HandlerSpec| h.with(hflags::CALM);
        let mut v = vec![
            calm(HandlerSpec::read("name")),
            calm(HandlerSpec::read("class")),
            calm(HandlerSpec::read("config")),
            calm(HandlerSpec::read("ports")),
            calm(HandlerSpec::read("handlers")),
        ];
        if let Ok(el) = self.elements[e].try_borrow() {
            let live = if el.can_live_reconfigure() {
                hflags::WRITE
            } else {
                0
            };
            v[2].flags |= live;
            let mut own = el.handlers();
            // An element may define `config` itself (Click's Switch and
            // StrideSched read their current state there): its entry keeps
            // the standard handler's place and gives its flags; writing it
            // still reconfigures live unless the element writes it too.
            if let Some(i) = own.iter().position(|h| h.name == "config") {
                let h = own.remove(i);
                v[2].flags = h.flags | live;
            }
            v.extend(own);
        }
        if !self.info[e].tasks.borrow().is_empty() {
            v.push(HandlerSpec::read("scheduled"));
            v.push(HandlerSpec::read_write("tickets"));
            // Click registers it only in multithreaded builds.
            v.push(HandlerSpec::read_write("home_thread").with(crate::element::hflags::PRIVATE));
        }
        v
    }

    pub(crate) fn global_handlers(&self) -> Vec<HandlerSpec> {
        // Click's order, then rclick's own (`runcount`).
        let mut v: Vec<HandlerSpec> = [
            "version",
            "driver",
            "config",
            "flatconfig",
            "requirements",
            "handlers",
            "list",
        ]
        .iter()
        .map(|n| HandlerSpec::read(n))
        .collect();
        v.push(HandlerSpec::write("stop"));
        v.push(HandlerSpec::read("classes"));
        v.push(HandlerSpec::read("packages"));
        v.push(HandlerSpec::read("package_fingerprint"));
        v.push(HandlerSpec::write("load_package"));
        v.push(HandlerSpec::write("unload_package"));
        v.push(HandlerSpec::read("instances"));
        for h in plugins::CONTROL_WRITES {
            v.push(HandlerSpec::write(h));
        }
        if self.hotswap {
            v.push(HandlerSpec::write("hotconfig").with(hflags::RAW));
        }
        // Click's time warp factor; "simulation" (read only) under
        // simulated time.
        if self.rt.clock.is_simulated() {
            v.push(HandlerSpec::read("timewarp"));
        } else {
            v.push(HandlerSpec::read_write("timewarp"));
        }
        v.push(HandlerSpec::read("runcount"));
        v
    }

    fn ports_text(&self, e: usize) -> String {
        let info = &self.info[e];
        let plural = |n: usize, w: &str| format!("{n} {w}{}\n", if n == 1 { "" } else { "s" });
        let mut s = plural(info.ninputs, "input");
        for p in 0..info.ninputs {
            s.push_str(info.input_modes.get(p).map_or("push", |m| m.name()));
            if info.input_agnostic.get(p).copied().unwrap_or(false) {
                s.push('~');
            }
            s.push_str("\t-\t");
            let peers: Vec<String> = self.graph.ins[e][p]
                .iter()
                .map(|&(src, sp)| format!("{} [{sp}]", self.info[src].name))
                .collect();
            s.push_str(&peers.join(", "));
            s.push('\n');
        }
        s.push_str(&plural(info.noutputs, "output"));
        for p in 0..info.noutputs {
            s.push_str(info.output_modes.get(p).map_or("push", |m| m.name()));
            if info.output_agnostic.get(p).copied().unwrap_or(false) {
                s.push('~');
            }
            s.push_str("\t-\t");
            let peers: Vec<String> = self.graph.outs[e][p]
                .iter()
                .map(|&(dst, dp)| format!("[{dp}] {}", self.info[dst].name))
                .collect();
            s.push_str(&peers.join(", "));
            s.push('\n');
        }
        s
    }

    /// Reads a handler. `elem == None` means a global handler.
    pub(crate) fn read_handler(
        &self,
        elem: Option<usize>,
        name: &str,
        param: Option<&str>,
        ctx: &Ctx,
    ) -> Result<String, String> {
        let _stopped = self.handler_access(elem, name, false)?;
        let Some(e) = elem else {
            // As an element's: Click refuses the parameter of a global
            // handler that takes none.
            let takes_none = |h: &HandlerSpec| {
                h.name == name && h.is_read() && h.flags & hflags::READ_PARAM == 0
            };
            if param.is_some_and(|p| !p.is_empty()) && self.global_handlers().iter().any(takes_none)
            {
                return Err(format!("read handler '{name}' does not take parameters"));
            }
            return self.read_global(name);
        };
        let info = &self.info[e];
        let specs = self.element_handlers(e);
        let Some(spec) = specs.iter().find(|h| h.name == name) else {
            return Err(self.missing_handler(e, name));
        };
        if !spec.is_read() {
            return Err(format!("'{}.{name}' is a write handler", info.name));
        }
        // Click's words: a parameter given to a handler that takes none is
        // an error, not ignored.
        if param.is_some_and(|p| !p.is_empty()) && spec.flags & hflags::READ_PARAM == 0 {
            return Err(format!(
                "read handler '{}.{name}' does not take parameters",
                info.name
            ));
        }
        let tasks = info.tasks.borrow();
        match name {
            "name" => return Ok(info.name.clone()),
            "class" => return Ok(info.class.clone()),
            "config" if !self.element_defines(e, "config", false) => {
                return Ok(info.config.borrow().clone())
            }
            "ports" => return Ok(self.ports_text(e)),
            "handlers" => return Ok(crate::element::handlers_listing(&specs)),
            "scheduled" if !tasks.is_empty() => {
                return Ok(tasks.iter().any(|t| self.rt.task_scheduled(*t)).to_string());
            }
            "tickets" if !tasks.is_empty() => {
                let sched = self.thread_rt(e).sched.borrow();
                return Ok(sched.tasks[tasks[0].0 as usize].tickets.to_string());
            }
            "home_thread" if !tasks.is_empty() => {
                let sched = self.thread_rt(e).sched.borrow();
                return Ok(sched.tasks[tasks[0].0 as usize].home_thread.to_string());
            }
            _ => {}
        }
        drop(tasks);
        let el = self.elements[e]
            .try_borrow()
            .map_err(|_| format!("'{}.{name}': element is busy", info.name))?;
        // The handler runs as its own element's (Click passes the element
        // itself): a Script reading it must not lend it its own index.
        let caller = ctx.elem.replace(e);
        let value = el.read_handler(name, param, ctx);
        let summed = self.has_thread_copies(e) && el.per_thread_summed(name);
        let result = match value {
            Ok(value) if summed => {
                let mut values = vec![value];
                let mut r = Ok(());
                for copy in self.copies_of(e) {
                    match copy.try_borrow() {
                        Ok(c) => match c.read_handler(name, param, ctx) {
                            Ok(v) => values.push(v),
                            Err(err) => {
                                r = Err(err);
                                break;
                            }
                        },
                        Err(_) => {
                            r = Err(format!("'{}.{name}': element is busy", info.name));
                            break;
                        }
                    }
                }
                r.map(|()| sum_values(&values))
            }
            other => other,
        };
        ctx.elem.set(caller);
        result
    }

    fn read_global(&self, name: &str) -> Result<String, String> {
        Ok(match name {
            "version" => crate::VERSION.to_string(),
            "driver" => "userlevel".to_string(),
            "config" => {
                if self.spec.requirements.iter().any(|r| r == "compact_config") {
                    rclick_lang::flatten(&self.spec)
                } else {
                    self.config_text.clone()
                }
            }
            "flatconfig" => rclick_lang::flatten(&self.spec),
            "list" => {
                let mut s = format!("{}\n", self.info.len());
                for i in &self.info {
                    s.push_str(&i.name);
                    s.push('\n');
                }
                s
            }
            "classes" => self.registry.names().map(|c| format!("{c}\n")).collect(),
            "requirements" => self
                .spec
                .requirements
                .iter()
                .map(|c| format!("{c}\n"))
                .collect(),
            "handlers" => self
                .global_handlers()
                .iter()
                .map(|h| format!("{}\t{}\n", h.name, h.flag_string()))
                .collect(),
            "runcount" => self.rt.runcount().to_string(),
            "packages" | "package_fingerprint" | "instances" => {
                return self.read_plugin_global(name)
            }
            "timewarp" if self.rt.clock.is_simulated() => "simulation".into(),
            "timewarp" => self.rt.clock.warp_factor().to_string(),
            "stop" | "hotconfig" | "load_package" | "unload_package" => {
                return Err(format!("'{name}' is a write handler"))
            }
            _ if plugins::CONTROL_WRITES.contains(&name) => {
                return Err(format!("'{name}' is a write handler"))
            }
            _ => return Err(format!("no '{name}' handler")),
        })
    }

    /// Writes a handler. `elem == None` means a global handler.
    pub(crate) fn write_handler(
        &self,
        elem: Option<usize>,
        name: &str,
        value: &str,
        ctx: &mut Ctx,
    ) -> Result<(), String> {
        let _stopped = self.handler_access(elem, name, true)?;
        let Some(e) = elem else {
            return self.write_global(name, value, ctx);
        };
        let info = &self.info[e];
        let specs = self.element_handlers(e);
        let Some(spec) = specs.iter().find(|h| h.name == name) else {
            return Err(self.missing_handler(e, name));
        };
        if !spec.is_write() {
            return Err(format!("'{}.{name}' is a read handler", info.name));
        }
        if name == "tickets" {
            let n: u32 = value
                .trim()
                .parse()
                .map_err(|_| "expected integer".to_string())?;
            for t in info.tasks.borrow().iter() {
                self.thread_rt(e).sched.borrow_mut().set_tickets(*t, n);
            }
            return Ok(());
        }
        if name == "home_thread" && !self.element_defines(e, name, true) {
            let to: i64 = value
                .trim()
                .parse()
                .map_err(|_| "expected integer".to_string())?;
            return self.set_home_thread(e, to);
        }
        let reconfigure = name == "config" && !self.element_defines(e, "config", true);
        let mut el = self.elements[e]
            .try_borrow_mut()
            .map_err(|_| format!("'{}.{name}': element is busy", info.name))?;
        if reconfigure {
            let mut ictx = InitCtx::new(self, e);
            if let Err(errs) = el.configure(value, &mut ictx) {
                for line in ictx.take_bare() {
                    self.rt.chatter(&line);
                }
                // Click's handler call gives the warnings and the errors
                // to one error handler: the warnings are not lost, and
                // come first, with the failure.
                let mut lines = ictx.take_warnings();
                lines.push(errs.to_string());
                return Err(lines.join("\n"));
            }
            for line in ictx.take_bare() {
                self.rt.chatter(&line);
            }
            let mut warnings = ictx.take_warnings();
            CALL_NOTES.with(|c| {
                if let Some(notes) = c.borrow_mut().as_mut() {
                    notes.append(&mut warnings);
                }
            });
            // Click's context for a handler call, above the warnings.
            if !warnings.is_empty() {
                self.rt
                    .chatter(&format!("While calling '{}.config {value}':", info.name));
                for w in warnings {
                    self.rt.chatter(&format!("  {w}"));
                }
            }
            for copy in self.copies_of(e) {
                if let Ok(mut c) = copy.try_borrow_mut() {
                    c.configure(value, &mut ictx)
                        .map_err(|errs| errs.to_string())?;
                    // The same configuration warns the same: said once.
                    ictx.take_warnings();
                    ictx.take_bare();
                }
            }
            *info.config.borrow_mut() = value.to_string();
            return Ok(());
        }
        let saved = ctx.enter(e);
        let mut r = el.write_handler(name, value, ctx);
        drop(el);
        // Per-thread copies take every write the element takes (a reset
        // clears every thread's count).
        for copy in self.copies_of(e) {
            if r.is_err() {
                break;
            }
            if let Ok(mut c) = copy.try_borrow_mut() {
                r = c.write_handler(name, value, ctx);
            }
        }
        ctx.finish_frame();
        ctx.leave(saved);
        r
    }

    fn write_global(&self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "load_package" | "unload_package" => self.write_package_global(name, value),
            _ if plugins::CONTROL_WRITES.contains(&name) => {
                self.write_control_path(name, value, ctx)
            }
            "stop" => {
                // Click reads the count with IntArg and keeps 1 when the
                // value is not an integer: `write stop now` stops, it does
                // not fail.
                let uncommented = crate::conf::uncomment(value);
                let n = crate::conf::parse_i32(uncommented.trim()).unwrap_or(1);
                self.rt.adjust_runcount(-n);
                Ok(())
            }
            "timewarp" if !self.rt.clock.is_simulated() => {
                let f: f64 = value.trim().parse().map_err(|_| "expected double")?;
                if f.is_nan() || f <= 0.0 {
                    return Err("timefactor must be > 0".into());
                }
                self.rt.clock.set_warp(f);
                Ok(())
            }
            "timewarp" => Err("no 'timewarp' write handler".into()),
            "hotconfig" if self.hotswap => self.write_hotconfig(value),
            "hotconfig" => Err(
                "no 'hotconfig' handler: hot reconfiguration needs the driver's \
                 -R (--allow-reconfigure) option"
                    .to_string(),
            ),
            _ if self.read_global(name).is_ok() => Err(format!("'{name}' is a read handler")),
            _ => Err(format!("no '{name}' handler")),
        }
    }
}

impl Router {
    /// Handlers of element `i` (standard ones included).
    pub fn element_handlers(&self, i: usize) -> Vec<HandlerSpec> {
        self.core.element_handlers(i)
    }

    pub fn global_handlers(&self) -> Vec<HandlerSpec> {
        self.core.global_handlers()
    }

    /// Reads a handler given as `elem.name` or a global `name`.
    pub fn read_handler(&mut self, path: &str, param: Option<&str>) -> Result<String, String> {
        let (elem, name) = self.core.resolve_handler(path, None)?;
        let ctx = Ctx::new(&self.core, &mut self.disp, elem.unwrap_or(0));
        self.core.read_handler(elem, &name, param, &ctx)
    }

    /// Writes a handler given as `elem.name` or a global `name`.
    pub fn write_handler(&mut self, path: &str, value: &str) -> Result<(), String> {
        let (elem, name) = self.core.resolve_handler(path, None)?;
        let mut ctx = Ctx::new(&self.core, &mut self.disp, elem.unwrap_or(0));
        let r = self.core.write_handler(elem, &name, value, &mut ctx);
        ctx.run_deferred();
        self.apply_pending_swap();
        r
    }
}

/// The sum of per-thread copies' handler values: integers add exactly,
/// other numbers as floating point; a value that is not a number leaves
/// the first copy's value standing.
fn sum_values(values: &[String]) -> String {
    let trimmed: Vec<&str> = values.iter().map(|v| v.trim()).collect();
    if let Ok(ints) = trimmed
        .iter()
        .map(|v| v.parse::<i128>())
        .collect::<Result<Vec<_>, _>>()
    {
        return ints.iter().sum::<i128>().to_string();
    }
    if let Ok(floats) = trimmed
        .iter()
        .map(|v| v.parse::<f64>())
        .collect::<Result<Vec<_>, _>>()
    {
        // As many decimals as the most precise copy printed.
        let decimals = trimmed
            .iter()
            .map(|v| v.split_once('.').map_or(0, |(_, f)| f.len()))
            .max()
            .unwrap_or(0);
        return format!("{:.*}", decimals, floats.iter().sum::<f64>());
    }
    values[0].clone()
}
