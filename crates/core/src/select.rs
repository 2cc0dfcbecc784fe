//! File-descriptor readiness for elements (Click's `add_select`): control
//! sockets, devices, sockets to other programs.
//!
//! Elements register descriptors; the driver polls them without blocking
//! while tasks are busy, and blocks in `poll(2)` until the next timer (or a
//! descriptor becomes ready) when nothing is scheduled, so an idle router
//! uses no CPU.

use std::os::fd::RawFd;

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

/// The router's registered descriptors and a reusable `pollfd` array.
#[derive(Debug, Default)]
pub(crate) struct Selects {
    pub entries: Vec<Selection>,
    pollfds: Vec<libc::pollfd>,
}

impl Selects {
    /// Registers (or changes) `elem`'s interest in `fd`; an empty interest
    /// removes it. Several elements may watch one descriptor (FromDevice
    /// and ToDevice sharing an AF_XDP socket), each with its own interest.
    pub fn set(&mut self, fd: RawFd, elem: usize, interest: Interest) {
        self.entries.retain(|e| e.fd != fd || e.elem != elem);
        if interest.read || interest.write {
            self.entries.push(Selection { fd, elem, interest });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Polls every descriptor for up to `timeout_ms` (-1: forever) and
    /// returns the ready ones as (fd, element, readable, writable).
    pub fn poll(&mut self, timeout_ms: i32, ready: &mut Vec<(RawFd, usize, bool, bool)>) {
        ready.clear();
        self.pollfds.clear();
        for e in &self.entries {
            let mut events = 0;
            if e.interest.read {
                events |= libc::POLLIN;
            }
            if e.interest.write {
                events |= libc::POLLOUT;
            }
            self.pollfds.push(libc::pollfd {
                fd: e.fd,
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
        // SAFETY: pollfds is a valid array of pollfd of the given length.
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
        for (p, e) in self.pollfds.iter().zip(&self.entries) {
            if p.revents == 0 {
                continue;
            }
            // Errors and hang-ups are reported as readable so the element
            // reads, sees the error, and cleans up.
            let readable =
                p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0;
            let writable = p.revents & libc::POLLOUT != 0;
            ready.push((e.fd, e.elem, readable, writable));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe() -> (RawFd, RawFd) {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors pipe writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    #[test]
    fn two_elements_watch_one_descriptor() {
        let (r, w) = pipe();
        let mut s = Selects::default();
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
        // SAFETY: closing descriptors this test opened.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
    }
}
