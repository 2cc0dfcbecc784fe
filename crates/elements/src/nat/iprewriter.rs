//! # IPRewriter
//!
//! Rewrites TCP and UDP packets' addresses and ports (network address and
//! port translation).
//!
//! ## Synopsis
//! `IPRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])`
//!
//! ## Ports and processing
//! One or more push inputs (one per INPUTSPEC); one or more push outputs.
//!
//! ## Description
//! Rewrites the source address, source port, destination address and
//! destination port of TCP and UDP flows. A mapping, made when the first
//! packet of a flow arrives, rewrites that flow and its replies; the
//! INPUTSPEC of the input the first packet came in on says how to make it:
//!
//! - `drop` (or `discard`): packets of flows without a mapping are dropped.
//! - `pass [OUTPUT]` (or `passthrough`, `nochange`): they leave unchanged
//!   by OUTPUT (default 0).
//! - `keep FOUTPUT ROUTPUT`: a mapping that changes nothing; the flow's
//!   packets leave by FOUTPUT, its replies by ROUTPUT.
//! - `pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT`: a mapping rewriting
//!   the flow by the pattern. Each of SADDR, SPORT, DADDR, DPORT is `-`
//!   (unchanged) or a value; SPORT may be a range `L-H` and SADDR an address
//!   range `A-B` or prefix `A/LEN`, from which a free value is chosen (a
//!   suffix `#` chooses sequentially, `?` randomly; without a suffix the
//!   flow's own source port is kept when free, else a random one). A single
//!   word names a pattern of an IPRewriterPatterns element.
//! - the name of a mapper element (RoundRobinIPMapper, SourceIPHashMapper):
//!   the mapper picks a pattern for each new flow.
//!
//! Packets that are neither TCP nor UDP, and packets with fewer than 8
//! transport bytes go to the input's `pass` output, or are dropped. So do
//! non-first fragments, except those of a datagram whose first fragment
//! was rewritten: rclick remembers such datagrams (by addresses, protocol
//! and IP identification; at most 1024, for 30 seconds) and rewrites
//! their later fragments' addresses, as RFC 4787 REQ-14 requires (Click
//! drops them; fragments arriving before their first fragment are still
//! dropped). IPRewriter updates the IP, TCP and UDP checksums incrementally
//! (RFC 1624), sets the destination IP annotation (DST_ANNO), and tracks TCP
//! connection state for timeouts. A UDP checksum of 0 (none) stays 0, and
//! one whose update comes out 0 is sent as 0xffff (RFC 768; Click sends 0,
//! which says "no checksum"). The ports of a TCP first fragment are
//! translated whenever present, even when it is too short for the checksum
//! field (Click translates only the addresses then).
//!
//! Mappings expire: a TCP mapping after TCP_TIMEOUT once data has flowed
//! both ways, TCP_DONE_TIMEOUT once both sides sent FIN (or one sent RST),
//! TCP_NODATA_TIMEOUT otherwise; a UDP mapping after UDP_TIMEOUT. Each
//! packet guarantees its mapping for GUARANTEE seconds; when the table holds
//! MAPPING_CAPACITY mappings, a new flow replaces the best-effort mapping
//! closest to expiry, and is refused (counted in `mapping_failures`) when
//! every mapping is guaranteed. Expired mappings are reaped every
//! REAP_INTERVAL.
//!
//! A hot swap carries the mappings over to the rewriter of the same name
//! and class in the new configuration (rclick; Click's starts empty, which
//! cuts every connection through the NAT), with their expiries, TCP state
//! and pinning; one whose output or input is gone stays behind. The same
//! holds for TCPRewriter, UDPRewriter, IPAddrRewriter, IPAddrPairRewriter
//! and ICMPPingRewriter.
//!
//! Packets that are not IPv4 (no network header, or a bad header) are
//! dropped and counted in `drops` (Click would crash).
//!
//! ## Keywords
//! - **TCP_TIMEOUT** (seconds, also TIMEOUT): default 86400.
//! - **TCP_DONE_TIMEOUT** (seconds): default 240.
//! - **TCP_NODATA_TIMEOUT** (seconds): default 300.
//! - **TCP_GUARANTEE**, **GUARANTEE** (seconds): default 5.
//! - **UDP_TIMEOUT** (seconds): default 300.
//! - **UDP_STREAMING_TIMEOUT** (seconds): for UDP flows with traffic both
//!   ways; default UDP_TIMEOUT.
//! - **UDP_GUARANTEE** (seconds): default 5.
//! - **REAP_INTERVAL** (seconds): default 900.
//! - **MAPPING_CAPACITY** (or CAPACITY): an integer, or the name of another
//!   rewriter whose capacity (and table) this one shares. Default
//!   2147483647.
//! - **DST_ANNO** (boolean): set the destination IP annotation. Default true.
//! - **ENDPOINT_INDEPENDENT** (boolean, rclick): endpoint-independent
//!   mapping (RFC 4787 REQ-1 for UDP, RFC 5382 REQ-1 for TCP). A pattern
//!   with a port range gives an inside address and port one outside port
//!   for every destination, and gives that port to no other inside
//!   endpoint while a flow of the mapping lives (its own port if the
//!   pattern keeps ports and no other endpoint holds it); through a mapper,
//!   its new flows take its first flow's pattern again. Default false:
//!   Click chooses a port per flow, so a host that cannot keep its port
//!   gets a different one for each server, and one outside port serves
//!   flows of several hosts to different servers. The `bindings` handler
//!   counts the mappings.
//! - **PORT_PARITY** (boolean, rclick): with ENDPOINT_INDEPENDENT, a chosen
//!   outside port has the parity of the inside one (RFC 4787 section
//!   4.2.2: RTP on an even port, RTCP on the odd one above) while a port
//!   of that parity is left; then one of the other parity (the RFC
//!   recommends parity, and refusing the flow would be worse). Default
//!   false.
//! - **REPLY_ANNO** (annotation): stores the first packet's byte of this
//!   annotation in the mapping and sets it on replies.
//!
//! ## Handlers
//! - `tcp_table`, `udp_table` (read): the mappings, one line per direction.
//! - `tcp_lookup` (read with parameter `SADDR SPORT DADDR DPORT`): the
//!   rewritten flow of a TCP mapping, or nothing.
//! - `table_size` (read): mappings in the table; `mapping_count` (read,
//!   rclick) is the same number.
//! - `timeouts` (read, rclick): the timeout keywords with their values in
//!   seconds, one per line (`TCP_TIMEOUT 86400`, ..., `REAP_INTERVAL 900`),
//!   as they can be written in the configuration.
//! - `nmappings` (read), `mapping_failures` (read): mappings made and
//!   refused.
//! - `size` (read): mappings in the table; `capacity` (read/write).
//! - `patterns` (read), `patternN` (read/write): the input specs; writing
//!   one replaces it and removes the mappings it made.
//! - `clear` (write): removes every mapping.
//! - `drops` (read, rclick): packets dropped by the element itself.
//! - `bindings` (read, rclick): endpoint-independent mappings in the
//!   table (ENDPOINT_INDEPENDENT): inside endpoints with an outside port.
//! - `add_mapping` (write, rclick): installs one mapping, both directions:
//!   `PROTO SADDR SPORT DADDR DPORT => NEWSADDR NEWSPORT NEWDADDR NEWDPORT
//!   [FOUTPUT ROUTPUT] [dynamic]`. PROTO is `tcp` or `udp`. Packets of the flow
//!   `SADDR SPORT DADDR DPORT` leave rewritten to `NEWSADDR NEWSPORT
//!   NEWDADDR NEWDPORT` by FOUTPUT; its replies (from NEWDADDR NEWDPORT to
//!   NEWSADDR NEWSPORT) leave rewritten back by ROUTPUT, whichever input
//!   they arrive on. Without FOUTPUT ROUTPUT, the outputs of the first
//!   `pattern` or `keep` input spec, else 0 and 1. A mapping already
//!   holding either direction is replaced. Added mappings are pinned: they
//!   never expire, are never replaced to make room for new flows (nor
//!   removed when `capacity` is lowered; a new flow whose rewritten reply
//!   would be a pinned mapping's is refused and counted in
//!   `mapping_failures`, where Click replaces the older mapping), and
//!   survive `patternN` writes; they count in `size` (not `nmappings`), are
//!   listed in the tables with `pinned` instead of their input and expiry,
//!   and go with `clear`. With the final word `dynamic` the mapping is not
//!   pinned: it expires as a spec-made mapping of its protocol does (a
//!   Manager admitting one connection), is listed with input `i-`, and is
//!   also left alone by `patternN` writes. Fails when the table is full of guaranteed
//!   mappings. Click has no such handler (kohler/click#215, #472).
//! - `remove_mapping` (write, rclick): `PROTO SADDR SPORT DADDR DPORT`
//!   removes the mapping whose original or reply flow this is (added or
//!   made by a spec), both directions; fails when there is none.
//!
//! ## Example
//! ```click
//! rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> [0]rw[0] -> Discard;
//! Idle -> [1]rw[1] -> Discard;
//! ```

use super::rewriter::{Rewriter, RwKind};

rclick_core::element_class!("IPRewriter" => Rewriter::new(RwKind::Ip));
