//! # KernelTap
//!
//! Exchanges Ethernet frames with the host's own network stack through a
//! TAP device.
//!
//! ## Synopsis
//! `KernelTap(ADDR/MASK [, GATEWAY, *keywords* HEADROOM, ETHER, MTU, DEVNAME, BURST, IGNORE_QUEUE_OVERFLOWS])`
//!
//! ## Ports and processing
//! At most one agnostic input; output 0 (push) emits Ethernet frames;
//! optional output 1 is never used.
//!
//! ## Description
//! KernelTun's Ethernet version: creates a Linux TAP device named DEVNAME
//! (default `tap%d`), gives the host's end the address ADDR, netmask MASK,
//! MTU and the Ethernet address ETHER, and brings it up. Frames the host
//! sends into the device (ARP requests, IP packets routed there) are
//! emitted on output 0, with the network header and destination IP
//! annotation set for IP frames; frames arriving on the input are handed
//! to the host as if received on the device. The host accepts only frames
//! addressed to ETHER (or broadcast), so give ETHER and use it as the
//! destination of the frames you send. See KernelTun for the keywords and
//! handlers.
//!
//! ## Keywords
//! As KernelTun's; ETHER is the device's Ethernet address (default: chosen
//! by the kernel).
//!
//! ## Handlers
//! - `dev_name` (read): the device's name.
//! - `packets` (read): frames read from the device and emitted.
//! - `selected_calls` (read): times the device woke the router.
//! - `drops` (read): input frames the device refused.
//!
//! ## Example
//! ```click
//! tap :: KernelTap(1.0.0.1/8, ETHER 2:2:2:2:2:2);
//! tap -> c :: Classifier(12/0806, -);
//! c[0] -> ARPResponder(0/0 1:1:1:1:1:1) -> tap;
//! c[1] -> Discard;
//! ```

use super::kerneltun::KernelTun;

rclick_core::element_class!("KernelTap" => KernelTun::new(true));
