//! # PollDevice
//!
//! Reads packets live from a network device by polling (Click's kernel
//! element, at user level).
//!
//! ## Synopsis
//! `PollDevice(DEVNAME [, PROMISC, BURST, *keywords* TIMESTAMP, QUIET, ALLOW_NONEXISTENT, HEADROOM, ...])`
//!
//! ## Ports and processing
//! No inputs. Output 0 is push and emits the frames received, from the
//! Ethernet header on.
//!
//! ## Description
//! In Click's Linux kernel module, PollDevice takes frames straight from a
//! polling-capable driver's receive ring, with interrupts off, from a task
//! that runs all the time. rclick runs at user level: PollDevice is a
//! FromDevice (an AF_PACKET socket with a memory-mapped receive ring, see
//! FromDevice) whose task never sleeps: it stays scheduled and checks the
//! ring on every run instead of waiting in `poll(2)` for the kernel to say
//! frames arrived. That trades a busy CPU for the wake-up latency; with
//! other tasks on the same thread the scheduler shares the CPU between
//! them as usual. Configurations written for the kernel module run
//! unchanged; FromDevice is the better choice for most uses.
//!
//! The positional arguments follow Click's PollDevice (DEVNAME, PROMISC,
//! BURST); QUIET and ALLOW_NONEXISTENT are accepted and ignored (a missing
//! device is an initialization error). Every FromDevice keyword
//! (SNAPLEN, OUTBOUND, FORCE_IP, METHOD ...) is accepted too.
//!
//! ## Keywords
//! - **DEVNAME** (string): the device name.
//! - **PROMISC** (boolean): promiscuous mode while the router runs.
//!   Default false.
//! - **BURST** (integer): frames taken from the ring per task run. Default
//!   32 (Click's 8 is for a driver's ring; a user-level batch is cheaper
//!   the larger it is).
//! - **TIMESTAMP** (boolean): set the timestamp annotation. Default true.
//! - **HEADROOM** (integer): headroom of emitted packets. Default 64.
//! - **QUIET**, **ALLOW_NONEXISTENT** (boolean): accepted; ignored.
//!
//! ## Handlers
//! FromDevice's: `count`, `kernel_drops`, `drops`, `encap`, `method`,
//! `xdp_stats`, `reset_counts`.
//!
//! ## Example
//! ```click
//! PollDevice(eth0) -> Queue -> ToDevice(eth1);
//! ```

use super::fromdevice::FromDevice;

rclick_core::element_class!("PollDevice" => FromDevice::polling());
