//! The bodies of the `config_initialize` and `hotswap_traffic` fuzz
//! targets (fuzz/fuzz_targets), shared with the stable test that replays
//! their committed corpora (tests/fuzz_corpus.rs), so a crash the fuzzer
//! found stays fixed without nightly.
//!
//! An input is turned into configuration text in one of two ways (the
//! first byte chooses): raw text (the rest of the input, as UTF-8), or a
//! structured generator that reads the input as choices — element classes
//! from the registry, names, arguments from a dictionary of interesting
//! values and each class's own keywords, and connections — so most inputs
//! get past the parser and the checks to `initialize`.
//!
//! Configurations using a class that touches the outside world are
//! skipped: see [`EXCLUDED`] and [`EXCLUDED_KEYWORDS`].
#![allow(dead_code)]

use std::sync::OnceLock;

use rclick_core::ports::{PortCount, PortRange};
use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Packet, Registry, Router, RouterOptions};
use rclick_lang::{ParseOptions, RouterSpec};

/// Classes no fuzzed configuration may use, with the reason.
pub const EXCLUDED: &[(&str, &str)] = &[
    ("ControlSocket", "listens on TCP or Unix sockets"),
    ("HTTPServer", "listens on a TCP socket"),
    ("Socket", "opens TCP/UDP/Unix sockets"),
    ("McastSocket", "opens multicast UDP sockets"),
    (
        "FromDevice",
        "opens a network device (packet socket, pcap, AF_XDP)",
    ),
    ("PollDevice", "opens a network device"),
    ("ToDevice", "sends on a network device"),
    ("FromHost", "creates a tun device"),
    ("ToHost", "hands packets to the host network stack"),
    ("ToHostSniffers", "hands packets to host packet sockets"),
    ("KernelTun", "creates a tun device"),
    ("KernelTap", "creates a tap device"),
    ("FromDump", "reads a file named in its configuration"),
    ("ToDump", "writes a file named in its configuration"),
    (
        "FromIPSummaryDump",
        "reads a file named in its configuration",
    ),
    (
        "ToIPSummaryDump",
        "writes a file (or stdout) named in its configuration",
    ),
    (
        "Script",
        "writes any handler, prints to files, reads files (cat), kill(2)s processes",
    ),
    ("DriverManager", "Script's command language"),
];

/// `(class, keyword)` pairs no fuzzed configuration may use.
pub const EXCLUDED_KEYWORDS: &[(&str, &str)] = &[("ARPPrint", "OUTFILE")];

/// Driver iterations each fuzzed router runs.
pub const ITERATIONS: u64 = 48;

/// Driver iterations between swaps in the hot-swap target (each runs up
/// to 64 tasks: plenty to see a counter move).
pub const SWAP_ITERATIONS: u64 = 4;

/// Packets injected into a fuzzed router at most.
const MAX_PACKETS: usize = 8;

/// Elements in a generated configuration at most.
const MAX_ELEMENTS: usize = 6;

/// Every registered class (the element library's registry), built once.
pub fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(rclick_elements::registry)
}

/// The registered classes a configuration may use, sorted.
fn allowed_classes() -> &'static [String] {
    static CLASSES: OnceLock<Vec<String>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut v: Vec<String> = registry()
            .names()
            .filter(|n| !EXCLUDED.iter().any(|(x, _)| x == n))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    })
}

/// Reads choices from the fuzz input; past its end every choice is 0.
pub struct Choices<'a> {
    data: &'a [u8],
}

impl<'a> Choices<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Choices { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 256 {
            self.byte() as usize % n
        } else {
            (((self.byte() as usize) << 8) | self.byte() as usize) % n
        }
    }

    pub fn pick<'s, T>(&mut self, items: &'s [T]) -> &'s T {
        &items[self.below(items.len())]
    }

    /// Up to `max` bytes of the input.
    pub fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = self.below(max + 1).min(self.data.len());
        let (b, rest) = self.data.split_at(n);
        self.data = rest;
        b
    }
}

/// Argument values that tend to find edges: limits of each integer width,
/// negative and huge numbers, addresses and prefixes, times, rates,
/// classifier and filter patterns, routes, data strings, quoting.
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "14",
    "20",
    "64",
    "100",
    "255",
    "256",
    "1500",
    "65535",
    "65536",
    "-1",
    "-0",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "0x7f",
    "0xffffffff",
    "1e9",
    "1e-9",
    "0.5",
    "nan",
    "inf",
    "true",
    "false",
    "1s",
    "0s",
    "1ms",
    "1us",
    "100000000s",
    "1Gbps",
    "1kB/s",
    "10.0.0.1",
    "10.0.0.0/8",
    "10.0.0.1/32",
    "0.0.0.0/0",
    "0/0",
    "255.255.255.255",
    "1.2.3.4/33",
    "10.0.0.1 10.0.0.0/8",
    "1:2:3:4:5:6",
    "00:00:00:00:00:00",
    "ff:ff:ff:ff:ff:ff",
    "::1",
    "fe80::1/64",
    "0800",
    "0806",
    "12/0800",
    "12/0806 20/0001",
    "12/0800%ffff",
    "23/11",
    "0/ff",
    "-",
    "!12/0800",
    "tcp",
    "udp port 53",
    "ip proto 17",
    "src host 10.0.0.1",
    "dst net 10.0.0.0/8 and tcp syn",
    "allow all",
    "deny all",
    "drop icmp type echo",
    "1 ip frag",
    "ip[9] = 6",
    "ip vers 4 && ip hl > 5",
    "10.0.0.0/8 0",
    "0.0.0.0/0 10.0.0.254 1",
    "10.0.0.1/32 1.2.3.4 2",
    "ETHER",
    "IP",
    "NONE",
    "ROUND_ROBIN",
    "IP_ID",
    "PAINT",
    "\"\"",
    "\"a\\\"b\"",
    "\"x y\"",
    "\\<00 11 22 33>",
    "\\<ffff>",
    "abc",
    "$x",
    "${x}",
    "a,b",
    "(1)",
    "()",
    "/* */",
    "SYN ACK",
    "echo-reply",
    "unreachable host",
];

/// Keywords any class might take (positional arguments are as likely).
const KEYWORDS: &[&str] = &[
    "ACTIVE",
    "BURST",
    "LIMIT",
    "STOP",
    "LENGTH",
    "DATA",
    "DATASIZE",
    "CAPACITY",
    "RATE",
    "INTERVAL",
    "OFFSET",
    "ANNO",
    "COLOR",
    "SRC",
    "DST",
    "MTU",
    "TIMEOUT",
    "TYPE",
    "CODE",
    "LABEL",
    "MAXLENGTH",
    "TIMESTAMP",
    "HEADROOM",
    "CHECKSUM",
    "VERBOSE",
    "IP",
    "ETH",
    "N",
    "OUTPUT",
    "INPUT",
    "MASK",
    "GROW",
    "ZERO",
    "HEAD",
    "TAIL",
    "FIRST",
    "END",
    "START",
];

/// Element names; the hot-swap target's base router uses the first five.
const NAMES: &[&str] = &["src", "c", "q", "u", "d", "e", "f", "g", "h", "x/y"];

/// Classes the hot-swap generator prefers: those of the base router and
/// their neighbours, so a swap often keeps names and state.
const SWAP_CLASSES: &[&str] = &[
    "InfiniteSource",
    "Counter",
    "Queue",
    "Unqueue",
    "Discard",
    "RatedSource",
    "SimpleQueue",
    "NotifierQueue",
    "FullNoteQueue",
    "RatedUnqueue",
    "Null",
    "Tee",
    "Idle",
    "PullNull",
    "LinkUnqueue",
    "ARPQuerier",
    "IPReassembler",
];

/// The keywords read by the class's own configure (scanned from the
/// source's `args.read*("KW"` calls when this list was written; a hint,
/// not a contract: a missing keyword is still reachable from
/// [`KEYWORDS`] and raw text).
fn class_keywords(class: &str) -> &'static [&'static str] {
    match class {
        "ARPPrint" => &["ACTIVE", "ETHER", "LABEL", "TIMESTAMP"],
        "ARPQuerier" => &[
            "BROADCAST",
            "BROADCAST_POLL",
            "CAPACITY",
            "CAPACITY_SLIM_FACTOR",
            "ENTRY_CAPACITY",
            "ENTRY_PACKET_CAPACITY",
            "ETH",
            "IP",
            "POLL_TIMEOUT",
            "TIMEOUT",
        ],
        "AdjustTimestamp" => &["ALL", "FIRST", "TIME"],
        "AggregateCounter" => &[
            "ACTIVE",
            "BANNER",
            "BYTES",
            "EXTRA_LENGTH",
            "IP_BYTES",
            "MULTIPACKET",
        ],
        "Align" | "Clipboard" | "HashSwitch" => &["MODULUS", "OFFSET", "LENGTH"],
        "Bypass" => &["ACTIVE", "INLINE"],
        "CheckIPHeader" | "CheckIPHeader2" => &[
            "BADSRC",
            "CHECKSUM",
            "DETAILS",
            "GOODDST",
            "INTERFACES",
            "OFFSET",
            "VERBOSE",
        ],
        "CheckLength" | "Strip" => &["LENGTH"],
        "Counter" => &["BYTE_COUNT_CALL", "COUNT_CALL"],
        "DecIPTTL" => &["ACTIVE", "MULTICAST"],
        "Discard" => &["ACTIVE", "BURST"],
        "EtherEncap" => &["DST", "ETHERTYPE", "SRC"],
        "EtherRewrite" => &["DST", "SRC"],
        "FastUDPSource" => &[
            "ACTIVE", "CHECKSUM", "DPORT", "DSTETH", "DSTIP", "INTERVAL", "LENGTH", "LIMIT",
            "RATE", "SPORT", "SRCETH", "SRCIP",
        ],
        "FixIPSrc" => &["IPADDR"],
        "GetIPAddress" => &["ANNO", "IP", "OFFSET"],
        "HostEtherFilter" => &["DROP_OTHER", "DROP_OWN", "ETHER", "OFFSET"],
        "ICMPError" => &[
            "BADADDRS",
            "CODE",
            "MTU",
            "PMTU",
            "SET_FIX_ANNO",
            "SRC",
            "TYPE",
        ],
        "ICMPIPEncap" => &["CODE", "DST", "IDENTIFIER", "SRC", "TYPE"],
        "ICMPPingEncap" => &["DST", "IDENTIFIER", "SRC"],
        "ICMPPingSource" => &[
            "ACTIVE",
            "DATA",
            "DST",
            "IDENTIFIER",
            "INTERVAL",
            "LIMIT",
            "SRC",
            "STOP",
            "VERBOSE",
        ],
        "IPEncap" => &[
            "CE", "DF", "DSCP", "DST", "ECT", "PROTO", "SRC", "TOS", "TTL",
        ],
        "IPFragmenter" => &["HEADROOM", "HONOR_DF", "MTU", "VERBOSE"],
        "IPGWOptions" => &["MYADDR", "OTHERADDRS"],
        "IPInputCombo" => &["COLOR"],
        "IPOutputCombo" => &["COLOR", "IPADDR", "MTU"],
        "IPPrint" => &[
            "ACTIVE",
            "AGGREGATE",
            "CHANNEL",
            "CONTENTS",
            "ID",
            "LABEL",
            "LENGTH",
            "MAXLENGTH",
            "PAINT",
            "PAYLOAD",
            "SWAP",
            "TIMESTAMP",
            "TOS",
            "TTL",
        ],
        "IPReassembler" => &["HIMEM", "MAX_MEMORY", "MAX_MTU_ANNO", "TIMEOUT"],
        "InfiniteSource" => &[
            "ACTIVE",
            "BURST",
            "DATASIZE",
            "END_CALL",
            "LIMIT",
            "STOP",
            "TIMESTAMP",
        ],
        "InputSwitch" | "PullSwitch" | "SimplePullSwitch" => &["INPUT", "OUTPUT"],
        "LinkUnqueue" => &["BANDWIDTH", "LATENCY"],
        "MarkIPCE" => &["FORCE"],
        "MarkIPHeader" => &["OFFSET"],
        "Message" => &["MESSAGE", "TYPE"],
        "Pad" => &["LENGTH", "ZERO"],
        "Paint" | "PaintSwitch" => &["ANNO", "COLOR"],
        "Print" => &["ACTIVE", "HEADROOM", "MAXLENGTH", "PRINTANNO", "TIMESTAMP"],
        "Queue" | "SimpleQueue" | "NotifierQueue" | "FullNoteQueue" => &["CAPACITY"],
        "QueueYankTest" => &["QUEUE"],
        "RatedSource" => &["ACTIVE", "LENGTH", "LIMIT", "RATE", "STOP", "DATA"],
        "RatedUnqueue" => &["BURST_DURATION", "BURST_SIZE", "RATE"],
        "Resize" => &["HEAD", "TAIL"],
        "SchedOrderTest" => &["ID", "LIMIT", "SIZE", "STOP"],
        "SetIPAddress" => &["ANNO", "IPADDR"],
        "SetIPDSCP" => &["DSCP"],
        "SetTCPChecksum" => &["FIXOFF"],
        "SetTimestamp" => &["DELTA", "FIRST", "TIMESTAMP"],
        "SetTimestampDelta" => &["TYPE"],
        "StaticSwitch" | "Switch" => &["OUTPUT"],
        "StoreData" => &["DATA", "GROW", "MASK", "OFFSET"],
        "StoreEtherAddress" => &["ADDR", "OFFSET"],
        "Tee" => &["N"],
        "TimeFilter" => &[
            "END",
            "END_AFTER",
            "END_CALL",
            "END_DELAY",
            "INTERVAL",
            "START",
            "START_AFTER",
            "START_DELAY",
            "STOP",
        ],
        "TimeSortedSched" => &["BUFFER", "STOP"],
        "TimedSink" => &["INTERVAL"],
        "TimedSource" => &["ACTIVE", "HEADROOM", "INTERVAL", "LIMIT", "STOP", "DATA"],
        "Truncate" => &["EXTRA_LENGTH", "LENGTH"],
        "UDPIPEncap" => &["CHECKSUM", "DPORT", "DST", "SPORT", "SRC"],
        "Unqueue" => &["ACTIVE", "BURST", "LIMIT"],
        _ => &[],
    }
}

/// Argument strings seen for each class in the element docs' examples,
/// conf/ and Click's conf/ and tests (extracted once by a script; a
/// starting point the generator mutates, not a contract).
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "ARPPrint",
        &[
            "arpo",
            "arpx",
            "\"Req\"",
            "\"Kernel ARP\"",
            "ACTIVE false",
            "in, ETHER true",
            "\"Real ARP resp\"",
            "arpo, ETHER true",
            "arpr, TIMESTAMP true",
            "arp2r, TIMESTAMP true",
        ],
    ),
    (
        "ARPQuerier",
        &[
            "...",
            "home",
            "intern",
            "uplink",
            "eth0-in",
            "MY_ADDR, eth1",
            "real_interface",
            "1.0.0.3, 2:1:1:1:1:1",
            "1.0.0.1/24, 2:1:1:1:1:1",
            "10.0.0.1, 00:00:c0:00:00:01",
            "10.0.1.1, 00:00:c0:00:01:01",
            "18.26.7.1, 00:00:C0:4F:71:EF",
        ],
    ),
    (
        "ARPResponder",
        &[
            "extern",
            "intern",
            "uplink",
            "0/0 tap_local",
            "the_interface",
            "real_interface",
            "0/0 0:1:2:3:4:5",
            "0/0 1:1:1:1:1:1",
            "0/0 2:2:1:b:b:0",
            "eth0-in, eth0-ex",
            "GW_IP GW_MAC_ADDR",
            "0.0.0.0/0 1:1:1:1:1:1",
        ],
    ),
    (
        "AddressInfo",
        &[
            "foo 1.2.3.4/20",
            "ip4_addr 1.2.3.4",
            "eth0 18.26.4.24/24 00:0a:95:9d:68:16",
            "the_interface 1.0.0.1 0:0:c0:8a:67:ef",
            "real_interface 198.18.2.50 00:02:B3:BF:26:7A",
            "tap_local 1:1:1:1:1:1, tap_remote 2:2:2:2:2:2",
            "a 1.0.0.2/24 00:01:02:03:04:05, b 00:01:02:03:04:06",
        ],
    ),
    (
        "AdjustTimestamp",
        &["-1", "+1.5", "-3600", "+0.1, ALL true"],
    ),
    ("Align", &["4, 0", "4, 2", "8, 0", "8, 2"]),
    (
        "AlignmentInfo",
        &["dst 8 2", "src 8 2", "chip  4 0", "src 8 2, chk 4 0"],
    ),
    ("CheckICMPHeader", &["VERBOSE true"]),
    (
        "CheckIPHeader",
        &[
            "0",
            "14",
            "OFFSET 0",
            "VERBOSE true",
            "INTERFACES eth0",
            "OFFSET_ENCAP_IP",
            "0, CHECKSUM true",
            "14, CHECKSUM false",
            "BADSRC 18.26.4.255",
            "BADSRC 18.26.4.255 1.255.255.255",
            "INTERFACES 10.0.0.1/24 10.0.1.1/24",
            "INTERFACES 18.26.4.1/24 18.26.7.1/24",
        ],
    ),
    ("CheckIPHeader2", &["OFFSET 14"]),
    ("CheckLength", &["1500"]),
    ("CheckPaint", &["0", "2"]),
    ("CheckTCPHeader", &["VERBOSE true"]),
    (
        "Classifier",
        &[
            "-",
            "1/01, -",
            "12/0800",
            "12/86dd",
            "12/0800, -",
            "12/0806, -",
            "9/17, 9/6, -",
            "12/86dd 54/87",
            "12/0806 20/0002",
            "12/0800, 12/0806",
            "12/0806, 12/0800",
            "12/GRID_ETH_PROTO",
        ],
    ),
    (
        "ClickyInfo",
        &[
            "STYLE @import test-clicky.ccss",
            "STYLE #c { decorations: activity }",
            "STYLE #c { decorations: activity } activity { decay: 0 }",
        ],
    ),
    ("Clipboard", &["0/4", "0/1, 2/1, 9/1"]),
    (
        "ControlSocket",
        &[
            "TCP, 7777+",
            "tcp, 41900+",
            "tcp, 41930+",
            "\"TCP\", 12345",
            "TCP, 41900, PROXY khp",
            "UNIX, /tmp/click.sock, READONLY true",
            "tcp, CONTROL_PORT, READONLY CONTROL_RO",
            "tcp, CONTROL2_PORT, READONLY CONTROL2_RO",
        ],
    ),
    (
        "Counter",
        &[
            "COUNT_CALL 1 s.run",
            "COUNT_CALL 1 s.switch 1",
            "COUNT_CALL 2 s.switch 1",
            "COUNT_CALL 5 s.switch 1",
            "COUNT_CALL 3 b.active true",
        ],
    ),
    (
        "DirectIPLookup",
        &["0.0.0.0/0 10.0.0.1 0, 192.168.0.0/16 1, 192.168.7.128/25 2"],
    ),
    ("Discard", &["ACTIVE false"]),
    (
        "DriverManager",
        &[
            "stop",
            "wait_time 2s",
            "wait 1s, stop",
            "wait 0.1s, stop",
            "wait_time 0.1s, stop",
            "wait_stop, print c.count",
            "pause, write a.clear, stop",
            "pause, print t.well_ordered",
            "wait, wait_time 0.38s, stop",
            "wait_stop, wait 0.01s, stop",
            "pause, print >C c.count, stop",
            "pause, print >TABLE arpq.table",
        ],
    ),
    (
        "EtherEncap",
        &[
            "0x0800, fake0, fake0",
            "0x800, eth0-ex, gw-addr",
            "0x800, gw-addr, eth0-ex",
            "0x0800, 1:1:1:1:1:1, intern",
            "80, 1:1:1:1:1:1, 2:2:2:2:2:2",
            "0x0800, tap_local, tap_remote",
            "0x0800, eth0, 00:0a:95:9d:68:17",
            "0x0800, 0:1:2:3:4:5, 1:2:3:4:5:6",
            "0x0800, 1:1:1:1:1:1, 0:0:0:0:0:0",
            "0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2",
            "0x0800, extern:eth, extern_next_hop:eth",
            "0x0800, 00:02:2d:00:42:96, 0:e0:98:1:f2:5c",
        ],
    ),
    ("EtherRewrite", &["00:0a:95:9d:68:16, 00:0a:95:9d:68:17"]),
    (
        "FixIPSrc",
        &["10.0.0.1", "10.0.1.1", "18.26.7.1", "18.26.4.24"],
    ),
    (
        "FromDevice",
        &[
            "a",
            "b",
            "eth0",
            "eth1",
            "eth2",
            "veth0",
            "eth0,1",
            "eth0, 0",
            "eth0, 1",
            "eth3, true",
            "00:00:5A:98:F9:28",
            "GRID_NET_DEVICE, 0",
        ],
    ),
    (
        "FromDump",
        &[
            "a.pcap",
            "b.pcap",
            "t.pcap",
            "in.pcap",
            "trace.pcap",
            "headers.pcap",
            "in.pcap, STOP true",
            "trace.pcap, STOP true",
            "OUT1, FORCE_IP true, STOP true",
            "dump.trace, FORCE_IP true, STOP true",
            "trace.pcap, STOP true, FORCE_IP true",
            "conf/ip-router/eth0.in.pcap, STOP true",
        ],
    ),
    (
        "FromHost",
        &[
            "fl0, 10.0.0.0/24",
            "fake0, 1.0.0.1/24",
            "fake1, 2.0.0.1/24",
            "fake0, 192.0.2.1/24",
            "fake0, TEST_NETWORK",
            "fake0, 198.18.2.50/28",
            "sampler, 192.0.2.0/24",
            "fake0, 1.0.0.1/24, TYPE IP",
            "grid0, GRID_IP/GRID_NETMASK",
            "fake0, 10.0.0.1/24, ETHER 2:2:2:2:2:2",
            "fake0, 192.0.2.1/24, ETHER 02:00:00:00:00:01",
        ],
    ),
    (
        "FromIPSummaryDump",
        &[
            "F1",
            "F2",
            "F1b",
            "F1c",
            "DUMP1",
            "DUMP2",
            "-, STOP true",
            "F, STOP true",
            "X, STOP true",
            "IN, STOP true",
            "IN1, STOP true",
            "IN2, STOP true",
        ],
    ),
    ("FullNoteQueue", &["1", "5", "10"]),
    ("GetIPAddress", &["16", "IP dst"]),
    (
        "HTTPServer",
        &["8080", "8080, TOKEN_FILE /run/user/1000/rclick-http.token"],
    ),
    ("HashSwitch", &["26, 8"]),
    (
        "HostEtherFilter",
        &[
            "home",
            "uplink",
            "GRID_MAC_ADDR, 1",
            "00:00:c0:00:00:01",
            "00:00:c0:00:01:01",
            "00:01:02:03:04:06",
            "00:0a:95:9d:68:16",
        ],
    ),
    (
        "ICMPError",
        &[
            "3.0.0.3, unreachable",
            "10.0.0.1, timeexceeded",
            "10.0.1.1, timeexceeded",
            "10.0.0.1, redirect, host",
            "10.0.1.1, redirect, host",
            "18.26.4.24, timeexceeded",
            "18.26.7.1, redirect, host",
            "19.19.19.19, timeexceeded",
            "10.0.0.1, parameterproblem",
            "10.0.1.1, parameterproblem",
            "18.26.4.24, redirect, host",
            "18.26.4.24, parameterproblem",
        ],
    ),
    (
        "ICMPIPEncap",
        &[
            "1.0.0.1, 1.0.0.1, TYPE 8, CODE 0",
            "1.0.0.2, 1.0.0.2, TYPE 3, CODE 1",
            "1.0.0.3, 1.0.0.3, TYPE 5, CODE 3",
            "1.0.0.1, 2.0.0.2, echo, IDENTIFIER 7",
        ],
    ),
    ("ICMPPingEncap", &["1.0.0.1, 2.0.0.2, IDENTIFIER 3"]),
    (
        "ICMPPingSource",
        &["1.0.0.2, 1.0.0.1", "10.0.0.1, 10.0.0.2, LIMIT 5, STOP true"],
    ),
    (
        "IPClassifier",
        &[
            "tcp, -",
            "udp, -",
            "icmp, -",
            "tcp, udp",
            "tcp rst, -",
            "src 1.1.1.1",
            "tcp, udp, -",
            "icmp type echo",
            "dst host extern",
            "icmp echo-reply",
            "src net eth0-in",
            "dst 10.0.0.0/8, -",
        ],
    ),
    (
        "IPEncap",
        &[
            "4, uplink, careof",
            "6, 10.2.2.2, 10.0.0.1",
            "tcp, 1.0.0.1, 2.0.0.2",
            "tcp, 1.0.0.1, 2.0.0.3",
            "6, 18.26.4.106, 18.26.4.123",
            "4, 18.26.4.24, 140.247.60.147",
        ],
    ),
    (
        "IPFilter",
        &[
            "allow false",
            "0 ip[19]&128==0",
            "0 transp[1]&128==0",
            "allow host 2.2.2.2",
            "allow src 10.0.0.1",
            "0 transp[1]>=16, 1 -",
            "0 transp[1]&128!=0, 1 -",
            "0 transp[1]&128==0, 1 -",
            "allow icmp && icmp type echo",
            "0 transp[1]&128==0 || transp[1]&128==128",
            "allow false, allow false, allow src 10.0.0.1",
            "allow false, allow false, allow false, allow true",
        ],
    ),
    (
        "IPFragmenter",
        &["45", "300", "1500", "MTU 1500", "40, HONOR_DF false"],
    ),
    (
        "IPGWOptions",
        &["10.0.0.1", "10.0.1.1", "18.26.7.1", "18.26.4.24"],
    ),
    (
        "IPInputCombo",
        &[
            "1, INTERFACES 18.26.4.1/24",
            "1, INTERFACES 10.0.0.1/24 10.0.1.1/24",
            "1, INTERFACES 18.26.4.1/24 18.26.7.1/24",
            "2, INTERFACES 18.26.4.1/24 18.26.7.1/24",
        ],
    ),
    (
        "IPOutputCombo",
        &[
            "2, 10.0.1.1, 1500",
            "2, 18.26.7.1, 300",
            "1, 18.26.4.24, 300",
            "1, 18.26.4.24, 1500",
        ],
    ),
    (
        "IPPrint",
        &[
            "A", "B", "C", "a", "b", "i", "o", "p", "v4", "is1", "is2", "isR",
        ],
    ),
    ("IPReassembler", &["HIMEM 1048576"]),
    (
        "InfiniteSource",
        &[
            "LIMIT 1",
            "LIMIT 5",
            "LIMIT 10",
            "LIMIT 15",
            "LIMIT 30",
            "LIMIT 50",
            "LIMIT 100",
            "LENGTH 100",
            "ACTIVE false",
            "\\<11>, LIMIT 4",
            "\\<22>, LIMIT 4",
            "\\<11>, LIMIT 10",
        ],
    ),
    ("InputSwitch", &["0"]),
    (
        "KernelTap",
        &[
            "BOGUS_IP/BOGUS_NETMASK",
            "1.0.0.1/8, ETHER tap_remote",
            "1.0.0.1/8, ETHER 2:2:2:2:2:2",
            "GRID_IP/GRID_NETMASK, 1.2.3.4, TUN_INPUT_HEADROOM",
        ],
    ),
    (
        "KernelTun",
        &[
            "1.0.0.1/8",
            "GRID_IP/GRID_NETMASK, HEADROOM TUN_INPUT_HEADROOM",
        ],
    ),
    (
        "LinkUnqueue",
        &["10ms, 1Mbps", "0.005s, 100kb/s", "0.04s, 10000Mbps"],
    ),
    ("LookupIPRoute", &["..."]),
    ("MarkIPCE", &["FORCE true"]),
    ("MarkIPHeader", &["0", "14", "OFFSET 0", "OFFSET_ENCAP_IP"]),
    (
        "McastSocket",
        &[
            "233.252.0.0, 1234",
            "233.252.0.0, 1234, 127.0.0.1",
            "233.252.0.0, 1234, LOOP true",
            "233.252.0.0, 1234, LOOP false",
        ],
    ),
    (
        "Message",
        &[
            "\"\\\\\"",
            "\"test2\"",
            "\"This configuration is deprecated; use new.click instead.\", WARNING",
        ],
    ),
    ("NotifierQueue", &["5", "100"]),
    ("Pad", &["44"]),
    ("Paint", &["0", "1", "2", "3", "4", "5", "6"]),
    ("PaintTee", &["1", "2"]),
    (
        "PollDevice",
        &[
            "eth0",
            "eth1",
            "eth2",
            "eth7",
            "eth1, true",
            "eth2, true",
            "the_interface",
            "eth1, PROMISC true",
        ],
    ),
    (
        "PortInfo",
        &[
            "foo 80/udp ssh",
            "myservice 4000/udp",
            "foo 79/udp # ssh 25/udp comment, # ssh 26/udp comment,",
        ],
    ),
    (
        "Print",
        &["1", "2", "3", "4", "A", "B", "C", "D", "a", "b", "c", "d"],
    ),
    ("PullSwitch", &["0", "1", "-1"]),
    (
        "Queue",
        &[
            "1", "2", "5", "6", "8", "10", "20", "64", "100", "200", "1000", "1024",
        ],
    ),
    ("QueueYankTest", &["q"]),
    (
        "RadixIPLookup",
        &["10.0.0.0/8 0, 10.1.0.0/16 10.1.0.1 1, 0.0.0.0/0 192.168.1.1 2"],
    ),
    (
        "RangeIPLookup",
        &["0.0.0.0/0 10.0.0.1 0, 18.26.0.0/16 1, 18.26.4.0/24 2"],
    ),
    (
        "RatedSource",
        &[
            "RATE 1000",
            "RATE 1125",
            "\"hi\", LIMIT 5, STOP true",
            "RATE 8, LIMIT 3, STOP true",
            "RATE 10, LIMIT 15, STOP true",
            "DATA \"ABCD\", LIMIT 1, STOP true",
            "RATE 100, LIMIT 1000, STOP true",
            "RATE 1000, LIMIT 1500, STOP true",
            "DATA \"I love myself\\n\", RATE 10000, LIMIT 10, STOP true",
            "DATA \"I love myself\\n\", RATE 10000, LIMIT 15, STOP true",
        ],
    ),
    (
        "RatedUnqueue",
        &[
            "10",
            "100",
            "200",
            "RATE 2",
            "RATE 2, BURST_SIZE 50",
            "RATE 100, BURST_SIZE 1",
            "RATE 2, BURST_DURATION 25",
        ],
    ),
    ("Resize", &["+4, -2", "-14, -4", "HEAD -2", "HEAD -8"]),
    (
        "SchedOrderTest",
        &[
            "2, SIZE 100",
            "3, SIZE 100",
            "2, SIZE 100, LIMIT 10",
            "1, SIZE 100, STOP true",
        ],
    ),
    (
        "ScheduleInfo",
        &[
            "s1 1, s2 2",
            "from .1, to 1",
            "s1 1, s2 2, s3 3",
            "src1 2, src2 0.5",
            "i1 1, i2 1, i3 1, i4 1, i5 1, i6 1, i7 1, i8 1, dd 1",
        ],
    ),
    (
        "Script",
        &[
            "TYPE PACKET",
            "wait 1, stop",
            "wait 1ms, stop",
            "label a, goto a",
            "wait 200ms,stop",
            "TYPE PACKET, end",
            "wait 0.02s, stop",
            "TYPE PACKET, exit",
            "write sw.switch 0",
            "write sw.switch -1",
            "print >PORT cs.port",
            "TYPE PACKET, return 0",
        ],
    ),
    (
        "SetIPAddress",
        &[
            "1.0.0.2",
            "1.2.3.4",
            "18.26.4.1",
            "MY_GATEWAY",
            "GRID_ANY_GATEWAY_IP",
        ],
    ),
    ("SetIPDSCP", &["46", "DSCP 10"]),
    ("SimplePullSwitch", &["0", "-1"]),
    ("SimpleQueue", &["100"]),
    (
        "Socket",
        &["TCP, 0.0.0.0, 7000", "UDP, 127.0.0.1, 9000, CLIENT true"],
    ),
    (
        "StaticIPLookup",
        &["...", "10.0.0.0/8 0, 10.1.0.0/16 10.1.0.1 1, 0/0 2"],
    ),
    ("StaticSwitch", &["0", "1"]),
    ("StoreData", &["12, \\<86dd>"]),
    ("StoreEtherAddress", &["00:0a:95:9d:68:16, src"]),
    (
        "StoreIPAddress",
        &[
            "0",
            "dst",
            "src",
            "1.0.0.3, 4",
            "MY_ADDR, 12",
            "1.0.0.4, dst",
            "10.0.0.1, src",
            "TEST_NETWORK, 30",
        ],
    ),
    (
        "StrideSched",
        &["3, 1", "4, 2, 1", "10,20,30,40,50,60,70,100000"],
    ),
    ("Strip", &["1", "14", "28", "34", "OFFSET_ENCAP_IP"]),
    ("Switch", &["0", "1"]),
    ("Tee", &["2", "3"]),
    ("TimeFilter", &["START_AFTER 10, INTERVAL 60"]),
    (
        "TimeSortedSched",
        &["STOP true", "BUFFER 2, STOP true", "BUFFER 3, STOP true"],
    ),
    ("TimedSink", &["0.1", "1ms"]),
    (
        "TimedSource",
        &[
            "0.2",
            "0.5",
            "0.1, LIMIT 10, STOP true",
            "0.0019, \"Simplistic\", LIMIT 1",
            "0.0029, \"Dance tour\", LIMIT 1",
            "0.0039, \"Ionize tub\", LIMIT 1",
            "0.001, \".a. is a .at,\", LIMIT 4, STOP true",
        ],
    ),
    (
        "ToDevice",
        &[
            "eth0",
            "eth1",
            "eth2",
            "eth4",
            "GW_NET_DEVICE",
            "the_interface",
            "veth1, BURST 64",
            "eth3, METHOD XDP",
            "00:00:5A:98:F9:28",
            "GRID_NET_DEVICE, SET_ERROR_ANNO true",
        ],
    ),
    (
        "ToDump",
        &[
            "a",
            "b",
            "c",
            "/tmp/x",
            "t.pcap",
            "b2.pcap",
            "ip.pcap",
            "out.pcap",
            "merged.pcap",
            "minute.pcap",
            "headers.pcap",
            "ip_only.pcap",
        ],
    ),
    (
        "ToHost",
        &[
            "eth1",
            "fake0",
            "fake1",
            "grid0",
            "DEVICE",
            "SNIFFERS true",
            "fake0, TYPE IP",
            "SNIFFERS true, TYPE IP",
        ],
    ),
    ("ToHostSniffers", &["eth1", "sniff0", "sampler"]),
    (
        "ToIPSummaryDump",
        &[
            "-, FIELDS link",
            "-, FIELDS ip_dst",
            "-, FIELDS ip_src",
            "-, FIELDS ts_sec",
            "-, FIELDS timestamp",
            "G1, FIELDS timestamp",
            "G2, FIELDS timestamp",
            "OUT1, FIELDS src dst",
            "T2, FIELDS timestamp",
            "T3, FIELDS timestamp",
            "Y, FIELDS link ip_src",
            "OUT, FIELDS link sport",
        ],
    ),
    (
        "Truncate",
        &["19", "20", "21", "23", "38", "41", "42", "44", "54"],
    ),
    (
        "UDPIPEncap",
        &[
            "1.0.0.1, 2, 3.0.0.3, 4",
            "1.0.0.2, 20, 1.0.0.2, 30",
            "1.0.0.1, 4652, eth1, 8899",
            "1.0.0.1, 1234, 2.0.0.2, 53",
            "1.0.0.1, foo, 1.0.0.1, ssh",
            "1.0.0.3, foo, 1.0.0.3, ssh",
            "1.0.0.2, 50, 2.0.0.2, 100, 1",
            "10.0.0.2, 50, 1.0.0.2, 100, 1",
            "1.0.0.1, myservice, 2.0.0.2, myservice",
            "1.1.1.1, 11, 2.2.2.2, 22, CHECKSUM false",
        ],
    ),
    (
        "Unqueue",
        &["BURST 3", "LIMIT 1", "BURST 32", "ACTIVE false"],
    ),
    ("Unstrip", &["14"]),
];

/// One argument value: a dictionary word, two joined, a mutated word or
/// printable input bytes.
fn value(c: &mut Choices) -> String {
    match c.below(8) {
        0..=3 => c.pick(VALUES).to_string(),
        4 => format!("{} {}", c.pick(VALUES), c.pick(VALUES)),
        5 => {
            let mut v = c.pick(VALUES).to_string();
            v.push(char::from(b'0' + (c.byte() % 10)));
            v
        }
        _ => {
            const SAFE: &[u8] = b"0123456789abcdefxyzABCDEFXYZ .:-_+!%&=<>[]";
            c.bytes(24)
                .iter()
                .map(|&b| SAFE[b as usize % SAFE.len()] as char)
                .collect()
        }
    }
}

/// An argument list for `class`: none, one of its examples (as is, or
/// with one argument's value replaced, or one keyword argument added), its
/// own keywords with dictionary values, or anything.
fn config_string(c: &mut Choices, class: &str) -> String {
    let examples = EXAMPLES
        .iter()
        .find(|(k, _)| *k == class)
        .map_or(&[][..], |(_, ex)| *ex);
    let own = class_keywords(class);
    let how = c.below(16);
    if how < 4 || (how < 10 && examples.is_empty()) {
        return String::new();
    }
    if how < 13 && !examples.is_empty() {
        let mut args: Vec<String> = c.pick(examples).split(", ").map(str::to_string).collect();
        if how >= 10 {
            let at = c.below(args.len());
            let kw = args[at]
                .split_once(' ')
                .filter(|(k, _)| {
                    k.len() > 1 && k.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                })
                .map(|(k, _)| k.to_string());
            args[at] = match kw {
                Some(k) => format!("{k} {}", value(c)),
                None => value(c),
            };
        }
        if how == 12 && !own.is_empty() {
            args.push(format!("{} {}", c.pick(own), value(c)));
        }
        return args.join(", ");
    }
    let nargs = 1 + c.below(3);
    let mut args = Vec::with_capacity(nargs);
    for _ in 0..nargs {
        let arg = match c.below(8) {
            0..=4 if !own.is_empty() => format!("{} {}", c.pick(own), value(c)),
            0..=5 => value(c),
            _ => format!("{} {}", c.pick(KEYWORDS), value(c)),
        };
        args.push(arg);
    }
    args.join(", ")
}

/// A class's port counts and processing code, as a fresh instance
/// declares them (the processing code may change with the
/// configuration: this is a hint for choosing connections).
fn class_ports(class: &str) -> (PortCount, &'static str) {
    let e = (registry().get(class).expect("a registered class").create)();
    let pc = PortCount::parse(e.port_count()).unwrap_or(PortCount {
        inputs: PortRange { lo: 0, hi: 0 },
        outputs_equal_plus: None,
        outputs: PortRange { lo: 0, hi: 0 },
    });
    (pc, e.processing())
}

/// The mode letter (`h`, `l` or `a`) of port `port` on one side of a
/// processing code: the last letter repeats.
fn mode_of(side: &str, port: usize) -> u8 {
    let b = side.as_bytes();
    match b.get(port).or(b.last()) {
        Some(&m) if m == b'h' || m == b'l' => m,
        _ => b'a',
    }
}

/// A count in `r`, near its low end.
fn count_in(c: &mut Choices, r: PortRange) -> usize {
    r.lo + c.below(3).min(r.hi - r.lo)
}

/// A configuration generated from `c`: elements of registered classes
/// with arguments from the dictionaries, their ports (counts within each
/// class's port count) wired to ports of compatible mode where possible,
/// dangling ports closed with `Idle` and `Discard`, and now and then a
/// random extra connection. With `swap`, classes and names lean towards
/// the hot-swap base router's.
pub fn generate(c: &mut Choices, swap: bool) -> String {
    let classes = allowed_classes();
    let n = 1 + c.below(3) + c.below(MAX_ELEMENTS - 2) * c.below(2);
    let mut out = String::new();
    // name, inputs (mode, connected), outputs (mode, connected)
    type Ports = Vec<(u8, bool)>;
    let mut elems: Vec<(String, Ports, Ports)> = Vec::with_capacity(n);
    for i in 0..n {
        let class: &str = if swap && c.below(4) != 0 {
            c.pick::<&str>(SWAP_CLASSES)
        } else {
            c.pick(classes).as_str()
        };
        let mut name = match c.below(3) {
            0 if swap || i < 5 => NAMES[i.min(NAMES.len() - 1)].to_string(),
            1 => c.pick(NAMES).to_string(),
            _ => format!("e{i}"),
        };
        if elems.iter().any(|(n, _, _)| *n == name) {
            name = format!("e{i}");
        }
        let config = config_string(c, class);
        out.push_str(&format!("{name} :: {class}({config});\n"));
        let (pc, proc_code) = class_ports(class);
        let (pin, pout) = proc_code.split_once('/').unwrap_or((proc_code, proc_code));
        let nin = count_in(c, pc.inputs);
        let nout = count_in(c, pc.output_range(nin));
        let ins = (0..nin).map(|p| (mode_of(pin, p), false)).collect();
        let outs = (0..nout).map(|p| (mode_of(pout, p), false)).collect();
        elems.push((name, ins, outs));
    }
    let compatible = |a: u8, b: u8| a == b'a' || b == b'a' || a == b;
    let mut conns = String::new();
    for i in 0..elems.len() {
        for p in 0..elems[i].2.len() {
            let mode = elems[i].2[p].0;
            // Free compatible inputs of later elements (no cycles), the
            // next element's first.
            let mut cands: Vec<(usize, usize)> = Vec::new();
            for (j, later) in elems.iter().enumerate().skip(i + 1) {
                for (q, &(m, used)) in later.1.iter().enumerate() {
                    if compatible(mode, m) && (!used || m == b'h') {
                        cands.push((j, q));
                    }
                }
            }
            if cands.is_empty() || c.below(8) == 0 {
                continue;
            }
            let (j, q) = if c.below(2) == 0 {
                cands[0]
            } else {
                *c.pick(cands.as_slice())
            };
            elems[i].2[p].1 = true;
            elems[j].1[q].1 = true;
            conns.push_str(&format!("{} [{p}] -> [{q}] {};\n", elems[i].0, elems[j].0));
        }
    }
    out.push_str(&conns);
    let mut k = 0;
    for (name, ins, outs) in &elems {
        for (q, _) in ins.iter().enumerate().filter(|(_, (_, used))| !used) {
            out.push_str(&format!("i{k} :: Idle -> [{q}] {name};\n"));
            k += 1;
        }
        for (p, _) in outs.iter().enumerate().filter(|(_, (_, used))| !used) {
            out.push_str(&format!("{name} [{p}] -> o{k} :: Discard;\n"));
            k += 1;
        }
    }
    for _ in 0..c.below(32).saturating_sub(30) {
        let a = &c.pick(elems.as_slice()).0;
        let b = &c.pick(elems.as_slice()).0;
        let (pa, pb) = (c.below(3), c.below(3));
        out.push_str(&format!("{a} [{pa}] -> [{pb}] {b};\n"));
    }
    out
}

/// The configuration text an input stands for: byte 0 even picks the
/// structured generator, odd the rest of the input as text.
pub fn config_text(data: &[u8], swap: bool) -> String {
    let mut c = Choices::new(data);
    if c.byte() & 1 == 0 {
        generate(&mut c, swap)
    } else {
        String::from_utf8_lossy(&data[1..]).into_owned()
    }
}

/// Why a configuration must not run, or None. Raw text can name an
/// excluded class (also inside a compound) or include a library file.
pub fn excluded(text: &str, spec: &RouterSpec) -> Option<String> {
    if text.contains("library") {
        return Some("require(library ...) reads files".into());
    }
    for e in &spec.elements {
        if let Some((_, why)) = EXCLUDED.iter().find(|(c, _)| *c == e.class) {
            return Some(format!("{}: {why}", e.class));
        }
        for (class, kw) in EXCLUDED_KEYWORDS {
            if e.class == *class && e.config.contains(kw) {
                return Some(format!("{class} {kw} writes a file"));
            }
        }
    }
    None
}

pub fn options(hotswap: bool) -> RouterOptions {
    RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap,
        capture_chatter: true,
        ..Default::default()
    }
}

/// Parses `text`; None when it has errors or is excluded. (Errors are the
/// parser's business; config_parse fuzzes them.)
fn parse(text: &str) -> Option<RouterSpec> {
    let outcome = rclick_lang::parse_router(text, "fuzz", registry(), &ParseOptions::default());
    if outcome.has_errors() {
        return None;
    }
    let spec = outcome.spec?;
    match excluded(text, &spec) {
        Some(_) => None,
        None => Some(spec),
    }
}

/// Frames to inject: a few realistic templates (Ethernet + IPv4 UDP, TCP,
/// ICMP echo, fragment, options; ARP; IPv6; bare IPv4) with bytes
/// overwritten and lengths cut by the input.
fn packets(c: &mut Choices) -> Vec<Vec<u8>> {
    use rclick_elements::testing::ipv4_packet;
    let ether = |ty: [u8; 2], body: &[u8]| {
        let mut f = vec![0, 1, 2, 3, 4, 5, 0, 6, 7, 8, 9, 10, ty[0], ty[1]];
        f.extend_from_slice(body);
        f
    };
    let udp = [0x04, 0xd2, 0x00, 0x35, 0, 12, 0, 0, 1, 2, 3, 4];
    let tcp = [
        0, 80, 0x30, 0x39, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
    ];
    let icmp = [8, 0, 0xf7, 0xfe, 0, 1, 0, 0];
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let n = c.below(MAX_PACKETS + 1);
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let mut p = match c.below(9) {
            0 => ether([8, 0], &ipv4_packet(a, b, 17, 64, 0, &[], &udp)),
            1 => ether([8, 0], &ipv4_packet(a, b, 6, 64, 0, &[], &tcp)),
            2 => ether([8, 0], &ipv4_packet(a, b, 1, 1, 0, &[], &icmp)),
            3 => ether([8, 0], &ipv4_packet(a, b, 17, 64, 0x2001, &[], &udp)),
            4 => ether(
                [8, 0],
                &ipv4_packet(a, b, 6, 64, 0, &[7, 7, 4, 0, 0, 0, 1], &tcp),
            ),
            5 => ether(
                [8, 6],
                &[
                    0, 1, 8, 0, 6, 4, 0, 1, 0, 6, 7, 8, 9, 10, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10,
                    0, 0, 2,
                ],
            ),
            6 => {
                let mut h = vec![0x60, 0, 0, 0, 0, 12, 17, 64];
                h.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
                h.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
                h.extend_from_slice(&udp);
                ether([0x86, 0xdd], &h)
            }
            7 => ipv4_packet(a, b, 17, 64, 0, &[], &udp),
            _ => c.bytes(80).to_vec(),
        };
        for _ in 0..c.below(4) {
            if p.is_empty() {
                break;
            }
            let at = c.below(p.len());
            p[at] = c.byte();
        }
        if c.below(4) == 0 {
            p.truncate(c.below(p.len() + 1));
        }
        v.push(p);
    }
    v
}

/// Pushes each packet into a push input of some element (by the input's
/// choice), runs the router a bounded number of iterations, and reads
/// every read handler of every element.
fn exercise(r: &mut Router, c: &mut Choices, iterations: u64) {
    let inputs: Vec<(usize, usize)> = (0..r.nelements())
        .flat_map(|i| {
            let (ins, _) = r.port_modes(i);
            ins.iter()
                .enumerate()
                .filter(|(_, m)| **m == rclick_core::ports::Mode::Push)
                .map(move |(p, _)| (i, p))
                .collect::<Vec<_>>()
        })
        .collect();
    for p in packets(c) {
        if inputs.is_empty() {
            break;
        }
        let &(e, port) = c.pick(inputs.as_slice());
        r.inject_packet(e, port, Packet::from_slice(&p));
    }
    r.run_limited(iterations);
    read_all_handlers(r);
    let _ = r.take_chatter();
}

/// Whether the connection graph has a cycle. A packet may then circle
/// for ever (`a :: Null -> a` loops in Click too), so such routers are
/// initialized and their handlers read, but they get no packets and do
/// not run.
pub fn has_cycle(spec: &RouterSpec) -> bool {
    let n = spec.elements.len();
    let mut succ = vec![Vec::new(); n];
    for c in &spec.connections {
        if c.from < n && c.to < n {
            succ[c.from].push(c.to);
        }
    }
    // Iterative depth-first search: 0 unseen, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&w) = succ[v].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => return true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    false
}

fn read_all_handlers(r: &mut Router) {
    for i in 0..r.nelements() {
        let Some(name) = r.element_name(i).map(str::to_string) else {
            continue;
        };
        for h in r.element_handlers(i) {
            if h.flags & rclick_core::element::hflags::READ != 0 {
                let _ = r.read_handler(&format!("{name}.{}", h.name), None);
            }
        }
    }
}

/// The `config_initialize` target: the input's configuration through
/// parse, check and initialize (Router::new with the element registry, as
/// `rclick --check` does), then some packets and driver iterations. It
/// must not panic, hang or exhaust memory.
pub fn config_initialize(data: &[u8]) {
    let text = config_text(data, false);
    let Some(spec) = parse(&text) else {
        return;
    };
    // The packets come from the bytes after the configuration's choices
    // (structured) or from the input again (raw text).
    let mut c = Choices::new(data);
    if data.first().is_some_and(|b| b & 1 == 0) {
        c.byte();
        generate(&mut c, false);
    }
    let cyclic = has_cycle(&spec);
    let Ok(mut r) = Router::new(spec, &text, registry(), &options(false)) else {
        return;
    };
    if cyclic {
        read_all_handlers(&mut r);
        return;
    }
    exercise(&mut r, &mut c, ITERATIONS);
}

/// The running router of `hotswap_traffic`: traffic from `src` counted by
/// `c`, queued in `q`, pulled by `u` and discarded by `d`.
pub const SWAP_BASE: &str = "src :: InfiniteSource(LENGTH 60, BURST 4);\n\
     c :: Counter;\nq :: Queue(64);\nu :: Unqueue(BURST 8);\nd :: Discard;\n\
     src -> c -> q -> u -> d;\n";

fn count(r: &mut Router) -> Option<u64> {
    r.read_handler("c.count", None).ok()?.trim().parse().ok()
}

/// The `hotswap_traffic` target: a router with hot swap allowed carries
/// traffic; each configuration of the input (up to four: from the
/// structured generator, or NUL-separated raw texts) is swapped in —
/// alternately through `Router::hotswap` and the `hotconfig` handler — and
/// the router runs on. A failed swap must leave the old router untouched
/// (same configuration, same count) and, when that is the base router,
/// still forwarding; a successful one must leave a router that runs.
/// Finally the base configuration is swapped back in and must forward.
pub fn hotswap_traffic(data: &[u8]) {
    let opts = options(true);
    let base = parse(SWAP_BASE).expect("the base configuration parses");
    let mut r = Router::new(base, SWAP_BASE, registry(), &opts).expect("the base router builds");
    r.run_limited(SWAP_ITERATIONS);
    assert!(
        count(&mut r).is_some_and(|n| n > 0),
        "the base router forwards"
    );
    let mut on_base = true;

    let mut c = Choices::new(data);
    let raw = c.byte() & 1 == 1;
    let raw_texts: Vec<&[u8]> = if raw {
        data[1..].split(|&b| b == 0).take(4).collect()
    } else {
        Vec::new()
    };
    let rounds = if raw { raw_texts.len() } else { 1 + c.below(4) };
    for round in 0..rounds {
        let text = match raw_texts.get(round) {
            Some(t) => String::from_utf8_lossy(t).into_owned(),
            None => generate(&mut c, true),
        };
        // The exclusions of a fresh router; text that does not parse goes
        // in as it is (the swap must fail cleanly).
        let outcome =
            rclick_lang::parse_router(&text, "fuzz", registry(), &ParseOptions::default());
        let skip = match &outcome.spec {
            Some(spec) => excluded(&text, spec).is_some(),
            None => text.contains("library"),
        };
        if skip {
            continue;
        }
        let cyclic = outcome.spec.as_ref().is_some_and(has_cycle);
        let old_config = rclick_lang::flatten(r.spec());
        let before = count(&mut r);
        let result = if round % 2 == 0 {
            r.hotswap(&text).map_err(|d| d.len())
        } else {
            r.write_handler("hotconfig", &text).map_err(|_| 1)
        };
        let _ = r.take_chatter();
        match result {
            Err(_) => {
                assert_eq!(
                    rclick_lang::flatten(r.spec()),
                    old_config,
                    "a failed swap changed the configuration"
                );
                assert_eq!(count(&mut r), before, "a failed swap changed c.count");
                r.run_limited(SWAP_ITERATIONS);
                let after = count(&mut r);
                if on_base {
                    assert!(
                        after > before,
                        "after a failed swap the base router stopped forwarding \
                         (c.count {before:?} -> {after:?}); swapped text:\n{text}"
                    );
                }
            }
            Ok(()) if cyclic => {
                // Packets might circle for ever: look, then go back.
                read_all_handlers(&mut r);
                r.hotswap(SWAP_BASE)
                    .unwrap_or_else(|d| panic!("swapping back to the base failed: {d:?}"));
                on_base = true;
            }
            Ok(()) => {
                on_base = false;
                r.run_limited(SWAP_ITERATIONS);
            }
        }
        exercise(&mut r, &mut c, SWAP_ITERATIONS);
    }

    // Back to the base configuration: it must build and forward again.
    r.hotswap(SWAP_BASE)
        .unwrap_or_else(|d| panic!("swapping back to the base failed: {d:?}"));
    let before = count(&mut r);
    r.run_limited(SWAP_ITERATIONS);
    let after = count(&mut r);
    assert!(
        after > before,
        "the base configuration swapped back in does not forward (c.count {before:?} -> {after:?})"
    );
}
