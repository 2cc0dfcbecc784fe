//! User-level elements: trace files, and (later) devices and sockets.

pub mod afpacket;
pub mod afxdp;
pub mod controlsocket;
pub mod fromdevice;
pub mod fromdump;
pub mod fromhost;
pub mod fromipsummarydump;
pub mod httpserver;
pub mod ipsumdump;
pub mod pcap;
pub mod socket;
pub mod todevice;
pub mod todump;
pub mod tohost;
pub mod tohostsniffers;
pub mod toipsummarydump;
pub mod tuntap;

use rclick_core::Registry;

/// Adds the user-level element classes to `reg`.
pub fn register(reg: &mut Registry) {
    reg.add("ControlSocket", || {
        Box::<controlsocket::ControlSocket>::default()
    });
    reg.add("HTTPServer", || Box::<httpserver::HTTPServer>::default());
    reg.add("FromDump", || Box::<fromdump::FromDump>::default());
    reg.add("ToDump", || Box::<todump::ToDump>::default());
    reg.add("FromDevice", || Box::<fromdevice::FromDevice>::default());
    reg.add("ToDevice", || Box::<todevice::ToDevice>::default());
    reg.add("FromHost", || Box::<fromhost::FromHost>::default());
    reg.add("ToHost", || Box::<tohost::ToHost>::default());
    reg.add("ToHostSniffers", || {
        Box::<tohostsniffers::ToHostSniffers>::default()
    });
    reg.add("Socket", || Box::<socket::Socket>::default());
    reg.add("FromIPSummaryDump", || {
        Box::<fromipsummarydump::FromIPSummaryDump>::default()
    });
    reg.add("ToIPSummaryDump", || {
        Box::<toipsummarydump::ToIPSummaryDump>::default()
    });
}
