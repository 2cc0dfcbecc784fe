//! File-descriptor readiness for elements (Click's `add_select`): control
//! sockets, devices, sockets to other programs.
//!
//! Elements register descriptors; the driver checks them without blocking
//! now and then while tasks are busy, and blocks until the next timer (or
//! a descriptor becomes ready) when nothing is scheduled, so an idle router
//! uses no CPU.
//!
//! A router with a few descriptors (devices, a control socket) waits in
//! `poll(2)`; past [`POLL_MAX_FDS`] it switches to an epoll set, whose
//! check costs one system call however many descriptors are registered.
//! `poll` is the default because an epoll registration stays on the
//! socket's wait queue while the router runs: every frame an AF_XDP socket
//! receives, and every frame it sends (freed in the router's own
//! `sendto`), then wakes that queue, taking its lock with interrupts off,
//! although the router is busy and not waiting. `poll` is on the queue
//! only while the router sleeps (measured: the IP router's I/O on AF_XDP
//! over veth forwarded about 8 % less than one-way forwarding with epoll;
//! see docs/benchmarks.md). Descriptors epoll refuses (regular files) are
//! always ready, as `poll(2)` reports them.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// What an element wants to hear about a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interest {
    pub read: bool,
    pub write: bool,
}

impl Interest {
    pub const READ: Interest = Interest {
        read: true,
        write: false,
    };
    pub const WRITE: Interest = Interest {
        read: false,
        write: true,
    };
    pub const BOTH: Interest = Interest {
        read: true,
        write: true,
    };
}

#[derive(Debug)]
pub(crate) struct Selection {
    pub fd: RawFd,
    pub elem: usize,
    pub interest: Interest,
}

/// Up to this many descriptors the driver waits with `poll(2)`; beyond,
/// with epoll.
pub const POLL_MAX_FDS: usize = 16;

/// The router's registered descriptors and how it waits for them.
#[derive(Debug)]
pub(crate) struct Selects {
    pub entries: Vec<Selection>,
    /// The event mask wanted for each descriptor, over all elements.
    wanted: HashMap<RawFd, u32>,
    /// Past this many descriptors, switch to epoll for good.
    poll_max: usize,
    /// Descriptors `poll` reported closed (POLLNVAL): left out of the wait
    /// until an element sets an interest in that number again.
    closed: Vec<RawFd>,
    pollfds: Vec<libc::pollfd>,
    /// The epoll set, once in use.
    epoll: Option<OwnedFd>,
    /// The event mask registered with epoll for each descriptor.
    registered: HashMap<RawFd, u32>,
    /// Descriptors epoll refused; reported ready on every check.
    always_ready: Vec<RawFd>,
    events: Vec<libc::epoll_event>,
}

impl Default for Selects {
    fn default() -> Self {
        Selects::with_poll_max(POLL_MAX_FDS)
    }
}

fn mask_of(i: Interest) -> u32 {
    let mut m = 0;
    if i.read {
        m |= libc::EPOLLIN as u32;
    }
    if i.write {
        m |= libc::EPOLLOUT as u32;
    }
    m
}

impl Selects {
    /// A set that waits with `poll(2)` up to `poll_max` descriptors (0:
    /// always epoll).
    pub fn with_poll_max(poll_max: usize) -> Selects {
        Selects {
            entries: Vec::new(),
            wanted: HashMap::new(),
            poll_max,
            closed: Vec::new(),
            pollfds: Vec::new(),
            epoll: None,
            registered: HashMap::new(),
            always_ready: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Registers (or changes) `elem`'s interest in `fd`; an empty interest
    /// removes it. Several elements may watch one descriptor (FromDevice
    /// and ToDevice sharing an AF_XDP socket), each with its own interest.
    pub fn set(&mut self, fd: RawFd, elem: usize, interest: Interest) {
        self.entries.retain(|e| e.fd != fd || e.elem != elem);
        if interest.read || interest.write {
            self.entries.push(Selection { fd, elem, interest });
        }
        let mask = self
            .entries
            .iter()
            .filter(|e| e.fd == fd)
            .fold(0, |m, e| m | mask_of(e.interest));
        self.closed.retain(|&f| f != fd);
        if mask == 0 {
            self.wanted.remove(&fd);
        } else {
            self.wanted.insert(fd, mask);
        }
        if self.epoll.is_some() {
            self.sync(fd, mask);
        } else if self.wanted.len() > self.poll_max && self.epoll_fd().is_some() {
            // Descriptors poll found closed stay out, as epoll would have
            // dropped them.
            let all: Vec<(RawFd, u32)> = self
                .wanted
                .iter()
                .filter(|(f, _)| !self.closed.contains(f))
                .map(|(&f, &m)| (f, m))
                .collect();
            for (f, m) in all {
                self.sync(f, m);
            }
        }
    }

    /// Whether the set waits with epoll (it has outgrown `poll`).
    #[cfg(test)]
    pub fn uses_epoll(&self) -> bool {
        self.epoll.is_some()
    }

    /// Makes epoll's registration of `fd` match `mask`.
    fn sync(&mut self, fd: RawFd, mask: u32) {
        if mask == 0 {
            self.always_ready.retain(|&f| f != fd);
            if self.registered.remove(&fd).is_some() {
                if let Some(ep) = &self.epoll {
                    // SAFETY: plain epoll_ctl; a descriptor already closed
                    // (and so already gone from the set) just fails.
                    unsafe {
                        libc::epoll_ctl(
                            ep.as_raw_fd(),
                            libc::EPOLL_CTL_DEL,
                            fd,
                            std::ptr::null_mut(),
                        )
                    };
                }
            }
            return;
        }
        // Registered again even with an unchanged mask: the descriptor
        // may be a new one with a closed one's number (the kernel dropped
        // the old one from the set when it closed).
        if self.always_ready.contains(&fd) {
            return;
        }
        let Some(ep) = self.epoll_fd() else {
            self.always_ready.push(fd);
            return;
        };
        let ctl = |op: libc::c_int| {
            let mut ev = libc::epoll_event {
                events: mask,
                u64: fd as u64,
            };
            // SAFETY: ev is a valid epoll_event for the call.
            if unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) } == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error().raw_os_error())
            }
        };
        // The set may disagree with `registered` when a descriptor was
        // closed (leaving the set) and its number reused: try the other
        // operation before giving up.
        let (first, second) = if self.registered.contains_key(&fd) {
            (libc::EPOLL_CTL_MOD, libc::EPOLL_CTL_ADD)
        } else {
            (libc::EPOLL_CTL_ADD, libc::EPOLL_CTL_MOD)
        };
        match ctl(first).or_else(|_| ctl(second)) {
            Ok(()) => {
                self.registered.insert(fd, mask);
            }
            // A regular file or directory, which poll(2) reports always
            // ready.
            Err(Some(libc::EPERM)) => {
                self.registered.remove(&fd);
                self.always_ready.push(fd);
            }
            // Closed (EBADF) or otherwise unwatchable: nothing to wait for.
            Err(_) => {
                self.registered.remove(&fd);
            }
        }
    }

    fn epoll_fd(&mut self) -> Option<RawFd> {
        if self.epoll.is_none() {
            // SAFETY: epoll_create1 has no preconditions; a new descriptor
            // is owned by nothing else.
            let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
            if fd < 0 {
                return None;
            }
            // SAFETY: as above.
            self.epoll = Some(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        self.epoll.as_ref().map(|e| e.as_raw_fd())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Waits up to `timeout_ms` (-1: forever) for a registered descriptor
    /// and returns the ready ones as (fd, element, readable, writable).
    pub fn poll(&mut self, timeout_ms: i32, ready: &mut Vec<(RawFd, usize, bool, bool)>) {
        ready.clear();
        if self.entries.is_empty() {
            if timeout_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(timeout_ms as u64));
            }
            return;
        }
        if self.epoll.is_none() {
            self.wait_with_poll(timeout_ms, ready);
            return;
        }
        let timeout_ms = if self.always_ready.is_empty() {
            timeout_ms
        } else {
            0
        };
        let want = self.registered.len().max(1);
        if self.events.len() < want {
            self.events
                .resize(want, libc::epoll_event { events: 0, u64: 0 });
        }
        let n = match self.epoll.as_ref() {
            // SAFETY: events has room for events.len() entries.
            Some(ep) if !self.registered.is_empty() => unsafe {
                libc::epoll_wait(
                    ep.as_raw_fd(),
                    self.events.as_mut_ptr(),
                    self.events.len() as libc::c_int,
                    timeout_ms,
                )
            },
            _ => {
                if timeout_ms > 0 {
                    std::thread::sleep(std::time::Duration::from_millis(timeout_ms as u64));
                }
                0
            }
        };
        for ev in &self.events[..n.max(0) as usize] {
            let bits = ev.events;
            report(
                &self.entries,
                ev.u64 as RawFd,
                bits & libc::EPOLLIN as u32 != 0,
                bits & libc::EPOLLOUT as u32 != 0,
                bits & (libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0,
                ready,
            );
        }
        for &fd in &self.always_ready {
            for e in self.entries.iter().filter(|e| e.fd == fd) {
                ready.push((fd, e.elem, e.interest.read, e.interest.write));
            }
        }
    }
}

impl Selects {
    /// `poll` while the set is small: one `poll(2)` over the wanted
    /// descriptors; the list is rebuilt in place each time (no allocation
    /// once it has grown to the set's size).
    fn wait_with_poll(&mut self, timeout_ms: i32, ready: &mut Vec<(RawFd, usize, bool, bool)>) {
        self.pollfds.clear();
        for (&fd, &mask) in &self.wanted {
            if self.closed.contains(&fd) {
                continue;
            }
            let mut events = 0;
            if mask & libc::EPOLLIN as u32 != 0 {
                events |= libc::POLLIN;
            }
            if mask & libc::EPOLLOUT as u32 != 0 {
                events |= libc::POLLOUT;
            }
            self.pollfds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
        }
        if self.pollfds.is_empty() {
            if timeout_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(timeout_ms as u64));
            }
            return;
        }
        // SAFETY: pollfds holds pollfds.len() initialised entries.
        let n = unsafe {
            libc::poll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                timeout_ms,
            )
        };
        if n <= 0 {
            return;
        }
        for pfd in &self.pollfds {
            let bits = pfd.revents;
            if bits == 0 {
                continue;
            }
            // A descriptor closed without its interest removed: epoll would
            // have dropped it silently; do the same rather than wake on it
            // forever.
            if bits & libc::POLLNVAL != 0 {
                self.closed.push(pfd.fd);
                continue;
            }
            report(
                &self.entries,
                pfd.fd,
                bits & libc::POLLIN != 0,
                bits & libc::POLLOUT != 0,
                bits & (libc::POLLHUP | libc::POLLERR) != 0,
                ready,
            );
        }
    }
}

/// Adds the elements watching `fd` that care about what happened to it.
/// Errors and hang-ups are reported as readable so the element reads, sees
/// the error, and cleans up.
fn report(
    entries: &[Selection],
    fd: RawFd,
    input: bool,
    output: bool,
    failed: bool,
    ready: &mut Vec<(RawFd, usize, bool, bool)>,
) {
    for e in entries.iter().filter(|e| e.fd == fd) {
        let readable = (input && e.interest.read) || failed;
        let writable = output && e.interest.write;
        if readable || writable {
            ready.push((fd, e.elem, readable, writable));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Mutex, MutexGuard};

    /// These tests close descriptors and reuse their numbers: run them one
    /// at a time so that one test's numbers are not another's.
    fn serial() -> MutexGuard<'static, ()> {
        static LOCK: Mutex<()> = Mutex::new(());
        LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn close(fds: &[RawFd]) {
        for &fd in fds {
            // SAFETY: the tests close only descriptors they opened.
            unsafe { libc::close(fd) };
        }
    }

    fn write_byte(fd: RawFd) {
        // SAFETY: writing one byte from a valid buffer.
        assert_eq!(unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) }, 1);
    }

    fn pipe() -> (RawFd, RawFd) {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors pipe writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    #[test]
    fn idle_wait_wakes_when_a_descriptor_becomes_ready() {
        let _serial = serial();
        for poll_max in [POLL_MAX_FDS, 0] {
            let (r, w) = pipe();
            let mut s = Selects::with_poll_max(poll_max);
            s.set(r, 7, Interest::READ);
            let mut ready = Vec::new();
            s.poll(0, &mut ready);
            assert!(ready.is_empty());
            let writer = std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                write_byte(w);
                w
            });
            let t0 = std::time::Instant::now();
            s.poll(5000, &mut ready);
            assert_eq!(ready, vec![(r, 7, true, false)]);
            assert!(t0.elapsed() < std::time::Duration::from_secs(2));
            let w = writer.join().unwrap();
            // Removed: no longer reported, although still readable.
            s.set(
                r,
                7,
                Interest {
                    read: false,
                    write: false,
                },
            );
            s.poll(0, &mut ready);
            assert!(ready.is_empty());
            // A closed descriptor whose number is reused registers again.
            close(&[r, w]);
            let (r2, w2) = pipe();
            s.set(r2, 1, Interest::READ);
            s.set(w2, 2, Interest::WRITE);
            s.poll(0, &mut ready);
            assert_eq!(ready, vec![(w2, 2, false, true)]);
            close(&[r2, w2]);
        }
    }

    #[test]
    fn a_reused_descriptor_number_with_the_same_interest_is_watched() {
        let _serial = serial();
        for poll_max in [POLL_MAX_FDS, 0] {
            let mut s = Selects::with_poll_max(poll_max);
            let (r, w) = pipe();
            // The replacement is made first so that it cannot get the old
            // number by itself (dup2 puts it there).
            let (fresh, w2) = pipe();
            s.set(r, 1, Interest::READ);
            // Closed without removing the interest: epoll forgets it.
            close(&[r, w]);
            // A new descriptor under the old number.
            // SAFETY: dup2 onto a number this test owns and just closed.
            assert_eq!(unsafe { libc::dup2(fresh, r) }, r);
            close(&[fresh]);
            let r2 = r;
            s.set(r2, 1, Interest::READ);
            write_byte(w2);
            let mut ready = Vec::new();
            s.poll(1000, &mut ready);
            assert_eq!(ready, vec![(r2, 1, true, false)]);
            close(&[r2, w2]);
        }
    }

    #[test]
    fn regular_files_are_always_ready() {
        let _serial = serial();
        for poll_max in [POLL_MAX_FDS, 0] {
            let f = std::fs::File::open("/proc/self/status")
                .or_else(|_| std::fs::File::open("/etc/hostname"));
            let Ok(f) = f else { return };
            let mut s = Selects::with_poll_max(poll_max);
            s.set(f.as_raw_fd(), 3, Interest::READ);
            let mut ready = Vec::new();
            s.poll(1000, &mut ready);
            assert_eq!(ready, vec![(f.as_raw_fd(), 3, true, false)]);
        }
    }

    #[test]
    fn two_elements_watch_one_descriptor() {
        let _serial = serial();
        for poll_max in [POLL_MAX_FDS, 0] {
            let (r, w) = pipe();
            let mut s = Selects::with_poll_max(poll_max);
            s.set(w, 1, Interest::READ);
            s.set(w, 2, Interest::WRITE);
            let mut ready = Vec::new();
            s.poll(0, &mut ready);
            // The write end is writable (element 2) and not readable.
            assert_eq!(ready, vec![(w, 2, false, true)]);
            // Removing element 2's interest leaves element 1's.
            s.set(
                w,
                2,
                Interest {
                    read: false,
                    write: false,
                },
            );
            assert_eq!(s.entries.len(), 1);
            assert_eq!(s.entries[0].elem, 1);
            // Changing an interest replaces it rather than adding a second.
            s.set(w, 1, Interest::BOTH);
            assert_eq!(s.entries.len(), 1);
            s.poll(0, &mut ready);
            assert_eq!(ready, vec![(w, 1, false, true)]);
            close(&[r, w]);
        }
    }

    #[test]
    fn a_closed_descriptor_left_registered_does_not_end_the_wait() {
        let _serial = serial();
        for poll_max in [POLL_MAX_FDS, 0] {
            // A pipe read end under a high number that descriptors other
            // code opens will not take, registered, then closed for good.
            let (low, unused_w) = pipe();
            // SAFETY: duplicating a descriptor this test owns.
            let high = unsafe { libc::fcntl(low, libc::F_DUPFD_CLOEXEC, 900) };
            assert!(high >= 900);
            close(&[low]);
            let (r, w) = pipe();
            let mut s = Selects::with_poll_max(poll_max);
            s.set(high, 1, Interest::READ);
            s.set(r, 2, Interest::READ);
            close(&[high, unused_w]);
            // poll(2) reports the closed number once (POLLNVAL), then
            // leaves it out: at most one of these waits ends early.
            let t0 = std::time::Instant::now();
            let mut ready = Vec::new();
            for _ in 0..3 {
                s.poll(100, &mut ready);
                assert!(ready.is_empty(), "{ready:?}");
            }
            assert!(t0.elapsed() >= std::time::Duration::from_millis(190));
            // The other descriptor is still watched.
            write_byte(w);
            s.poll(1000, &mut ready);
            assert_eq!(ready, vec![(r, 2, true, false)]);
            close(&[r, w]);
        }
    }

    #[test]
    fn a_set_past_the_poll_limit_moves_to_epoll() {
        let _serial = serial();
        let mut s = Selects::with_poll_max(3);
        let pipes: Vec<(RawFd, RawFd)> = (0..4).map(|_| pipe()).collect();
        for (i, &(r, _)) in pipes.iter().enumerate().take(3) {
            s.set(r, i, Interest::READ);
        }
        assert!(!s.uses_epoll());
        s.set(pipes[3].0, 3, Interest::READ);
        assert!(s.uses_epoll());
        let mut ready = Vec::new();
        s.poll(0, &mut ready);
        assert!(ready.is_empty());
        write_byte(pipes[1].1);
        s.poll(1000, &mut ready);
        assert_eq!(ready, vec![(pipes[1].0, 1, true, false)]);
        for (r, w) in pipes {
            close(&[r, w]);
        }
    }

    #[test]
    fn a_closed_descriptor_stays_out_when_the_set_moves_to_epoll() {
        let _serial = serial();
        let (low, unused_w) = pipe();
        // SAFETY: duplicating a descriptor this test owns.
        let high = unsafe { libc::fcntl(low, libc::F_DUPFD_CLOEXEC, 900) };
        assert!(high >= 900);
        close(&[low]);
        let (r, w) = pipe();
        let (r3, w3) = pipe();
        let mut s = Selects::with_poll_max(2);
        s.set(high, 1, Interest::READ);
        s.set(r, 2, Interest::READ);
        close(&[high, unused_w]);
        let mut ready = Vec::new();
        // poll(2) notices the closed number here.
        s.poll(50, &mut ready);
        assert!(ready.is_empty(), "{ready:?}");
        s.set(r3, 3, Interest::READ);
        assert!(s.uses_epoll());
        let t0 = std::time::Instant::now();
        s.poll(200, &mut ready);
        assert!(ready.is_empty(), "{ready:?}");
        assert!(t0.elapsed() >= std::time::Duration::from_millis(150));
        write_byte(w3);
        s.poll(1000, &mut ready);
        assert_eq!(ready, vec![(r3, 3, true, false)]);
        close(&[r, w, r3, w3]);
    }
}
