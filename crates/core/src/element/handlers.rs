//! Handlers: the read and write access points an element exposes.
//!
//! An element declares its handlers once, in a table of [`Handler`]s beside
//! its state, and names the table with [`handlers!`](crate::handlers) inside
//! its `impl Element`. The table gives the runtime the names and flags (for
//! the `handlers` listing) and the functions to call, so a handler name is
//! written once and the "no such handler" error comes from here, not from
//! each element.
//!
//! ```ignore
//! const HANDLERS: &[Handler<Counter>] = &[
//!     Handler::data("count", |e| &e.count),
//!     Handler::read("rate", |e, ctx| e.rate(ctx)),
//!     Handler::button("reset", |e, _, _| e.reset()),
//! ];
//! impl Element for Counter {
//!     rclick_core::handlers!(HANDLERS);
//! }
//! ```
//!
//! Click's `add_data_handlers` are [`Handler::data`] and
//! [`Handler::data_rw`]: the handler reads the field with `Display` and
//! writes it with the field type's Click parser ([`FromArg`]).

use std::fmt::Display;

use crate::conf::FromArg;
use crate::ctx::Ctx;

/// Handler flags, as listed by the `handlers` handler.
pub mod hflags {
    pub const READ: u16 = 1;
    pub const WRITE: u16 = 2;
    /// The read handler takes a parameter.
    pub const READ_PARAM: u16 = 4;
    /// Raw: no newline is appended to the value.
    pub const RAW: u16 = 8;
    pub const BUTTON: u16 = 16;
    pub const CHECKBOX: u16 = 32;
    /// Hidden from the control socket and `-h`.
    pub const PRIVATE: u16 = 64;
    /// Calling it may change state (reads that are not idempotent).
    pub const DEPRECATED: u16 = 128;
    /// Reading it is cheap and has no side effects (Click's `h_calm`): the
    /// live view may poll it.
    pub const CALM: u16 = 256;
    /// Reading it is costly (Click's `h_expensive`): tools read it only on
    /// request.
    pub const EXPENSIVE: u16 = 512;
    /// Rarely useful to a person (Click's `h_uncommon`): listed with `U`.
    pub const UNCOMMON: u16 = 1024;
}

/// One handler an element exposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerSpec {
    pub name: String,
    pub flags: u16,
}

impl HandlerSpec {
    pub fn read(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::READ,
        }
    }
    pub fn write(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::WRITE,
        }
    }
    pub fn read_write(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::READ | hflags::WRITE,
        }
    }
    pub fn read_param(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::READ | hflags::READ_PARAM,
        }
    }
    pub fn button(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::WRITE | hflags::BUTTON,
        }
    }
    pub fn with(mut self, flags: u16) -> Self {
        self.flags |= flags;
        self
    }
    pub fn is_read(&self) -> bool {
        self.flags & hflags::READ != 0
    }
    pub fn is_write(&self) -> bool {
        self.flags & hflags::WRITE != 0
    }
    /// The flag letters of the `handlers` listing, in Click's order: `r`,
    /// `w`, `+`, `%`, `.` (calm), `$` (expensive), `U` (uncommon), `D`
    /// (deprecated), `b`, `c`.
    pub fn flag_string(&self) -> String {
        let mut s = String::new();
        for (bit, c) in [
            (hflags::READ, 'r'),
            (hflags::WRITE, 'w'),
            (hflags::READ_PARAM, '+'),
            (hflags::RAW, '%'),
            (hflags::CALM, '.'),
            (hflags::EXPENSIVE, '$'),
            (hflags::UNCOMMON, 'U'),
            (hflags::DEPRECATED, 'D'),
            (hflags::BUTTON, 'b'),
            (hflags::CHECKBOX, 'c'),
        ] {
            if self.flags & bit != 0 {
                s.push(c);
            }
        }
        s
    }
}
/// The message for a handler an element does not have.
pub fn no_handler(name: &str) -> String {
    format!("no '{name}' handler")
}

/// A field a data handler reads and writes: shown with `Display`, set with
/// the type's Click argument parser.
pub trait DataValue {
    fn show(&self) -> String;
    fn assign(&mut self, text: &str) -> Result<(), String>;
}

impl<T: FromArg + Display> DataValue for T {
    fn show(&self) -> String {
        self.to_string()
    }
    fn assign(&mut self, text: &str) -> Result<(), String> {
        *self = T::from_arg(text.trim())?;
        Ok(())
    }
}

/// How a handler reads.
pub enum ReadFn<E> {
    /// A value computed from the element (and the router clock, say).
    Value(fn(&E, &Ctx) -> String),
    /// A read that takes a parameter or can fail.
    Param(fn(&E, Option<&str>, &Ctx) -> Result<String, String>),
    /// A field, shown with `Display`.
    Data(fn(&E) -> &dyn DataValue),
}

/// How a handler writes.
pub enum WriteFn<E> {
    /// Any action on the element, given the written text.
    Action(fn(&mut E, &str, &mut Ctx) -> Result<(), String>),
    /// A field, set with its Click parser.
    Data(fn(&mut E) -> &mut dyn DataValue),
}

/// One entry of an element's handler table.
pub struct Handler<E> {
    pub name: &'static str,
    pub flags: u16,
    pub read: Option<ReadFn<E>>,
    pub write: Option<WriteFn<E>>,
}

impl<E> Handler<E> {
    const fn new(name: &'static str, flags: u16) -> Self {
        Handler {
            name,
            flags,
            read: None,
            write: None,
        }
    }

    /// A read handler computing its value.
    pub const fn read(name: &'static str, f: fn(&E, &Ctx) -> String) -> Self {
        let mut h = Self::new(name, hflags::READ);
        h.read = Some(ReadFn::Value(f));
        h
    }

    /// A read handler that can fail; with [`param`](Self::param) it takes a
    /// parameter (`name PARAM` over the control socket).
    pub const fn read_with(
        name: &'static str,
        f: fn(&E, Option<&str>, &Ctx) -> Result<String, String>,
    ) -> Self {
        let mut h = Self::new(name, hflags::READ);
        h.read = Some(ReadFn::Param(f));
        h
    }

    /// A read-only data handler on a field.
    pub const fn data(name: &'static str, field: fn(&E) -> &dyn DataValue) -> Self {
        let mut h = Self::new(name, hflags::READ);
        h.read = Some(ReadFn::Data(field));
        h
    }

    /// A read-write data handler on a field. The two accessors name the same
    /// field.
    pub const fn data_rw(
        name: &'static str,
        field: fn(&E) -> &dyn DataValue,
        field_mut: fn(&mut E) -> &mut dyn DataValue,
    ) -> Self {
        let mut h = Self::new(name, hflags::READ | hflags::WRITE);
        h.read = Some(ReadFn::Data(field));
        h.write = Some(WriteFn::Data(field_mut));
        h
    }

    /// A read handler that takes a parameter (`name PARAM` over the control
    /// socket) and can fail.
    pub const fn read_param(
        name: &'static str,
        f: fn(&E, Option<&str>, &Ctx) -> Result<String, String>,
    ) -> Self {
        Self::flagged(hflags::READ_PARAM, Self::read_with(name, f))
    }

    /// A read-write handler.
    pub const fn read_write(
        name: &'static str,
        read: fn(&E, &Ctx) -> String,
        write: fn(&mut E, &str, &mut Ctx) -> Result<(), String>,
    ) -> Self {
        Self::read(name, read).and_write(write)
    }

    /// A data handler on a field whose writes do more than set it (wake a
    /// task, rebuild a table).
    pub const fn data_write(
        name: &'static str,
        field: fn(&E) -> &dyn DataValue,
        write: fn(&mut E, &str, &mut Ctx) -> Result<(), String>,
    ) -> Self {
        Self::data(name, field).and_write(write)
    }

    /// A write handler.
    pub const fn write(
        name: &'static str,
        f: fn(&mut E, &str, &mut Ctx) -> Result<(), String>,
    ) -> Self {
        let mut h = Self::new(name, hflags::WRITE);
        h.write = Some(WriteFn::Action(f));
        h
    }

    /// A write handler whose value is ignored (a button in the live view).
    pub const fn button(
        name: &'static str,
        f: fn(&mut E, &str, &mut Ctx) -> Result<(), String>,
    ) -> Self {
        let mut h = Self::write(name, f);
        h.flags |= hflags::BUTTON;
        h
    }

    /// `handler` with more [`hflags`] bits (`RAW`, `CALM`, `EXPENSIVE`, ...).
    /// A function rather than a method so that the handler's closures still
    /// learn their element type from the table.
    pub const fn flagged(flags: u16, mut handler: Self) -> Self {
        handler.flags |= flags;
        handler
    }

    /// Adds a write function to a read handler.
    pub const fn and_write(mut self, f: fn(&mut E, &str, &mut Ctx) -> Result<(), String>) -> Self {
        self.flags |= hflags::WRITE;
        self.write = Some(WriteFn::Action(f));
        self
    }
}

/// The handler listing of a table.
pub fn specs_of<E>(table: &[Handler<E>]) -> Vec<HandlerSpec> {
    table
        .iter()
        .map(|h| HandlerSpec {
            name: h.name.to_string(),
            flags: h.flags,
        })
        .collect()
}

/// Reads handler `name` of `element` through its table.
pub fn read_from<E>(
    table: &[Handler<E>],
    element: &E,
    name: &str,
    param: Option<&str>,
    ctx: &Ctx,
) -> Result<String, String> {
    match table
        .iter()
        .find(|h| h.name == name)
        .and_then(|h| h.read.as_ref())
    {
        Some(ReadFn::Value(f)) => Ok(f(element, ctx)),
        Some(ReadFn::Param(f)) => f(element, param, ctx),
        Some(ReadFn::Data(field)) => Ok(field(element).show()),
        None => Err(no_handler(name)),
    }
}

/// Writes handler `name` of `element` through its table.
pub fn write_to<E>(
    table: &[Handler<E>],
    element: &mut E,
    name: &str,
    value: &str,
    ctx: &mut Ctx,
) -> Result<(), String> {
    match table
        .iter()
        .find(|h| h.name == name)
        .and_then(|h| h.write.as_ref())
    {
        Some(WriteFn::Action(f)) => f(element, value, ctx),
        Some(WriteFn::Data(field)) => field(element).assign(value),
        None => Err(no_handler(name)),
    }
}

/// Implements an element's `handlers`, `read_handler` and `write_handler`
/// from its handler table (a `&[Handler<Self>]` constant). Use inside
/// `impl Element for X { ... }`.
#[macro_export]
macro_rules! handlers {
    ($table:expr) => {
        fn handlers(&self) -> ::std::vec::Vec<$crate::element::HandlerSpec> {
            $crate::element::handlers::specs_of($table)
        }
        fn read_handler(
            &self,
            name: &str,
            param: ::std::option::Option<&str>,
            ctx: &$crate::Ctx,
        ) -> ::std::result::Result<::std::string::String, ::std::string::String> {
            $crate::element::handlers::read_from($table, self, name, param, ctx)
        }
        fn write_handler(
            &mut self,
            name: &str,
            value: &str,
            ctx: &mut $crate::Ctx,
        ) -> ::std::result::Result<(), ::std::string::String> {
            $crate::element::handlers::write_to($table, self, name, value, ctx)
        }
    };
}
