//! Click's random number generator (not an element class): `click_random`,
//! `click_random(LOW, HIGH)` and `click_srandom`, which Click's user-level
//! driver takes from the C library's `random()`/`srandom()`.
//!
//! The generator is the one of the GNU C library's `random()` in its
//! default state size (128 bytes, "TYPE_3"): an additive lagged Fibonacci
//! generator `x[n] = x[n-31] + x[n-3] (mod 2^32)` whose outputs are
//! `x[n] >> 1`. `srandom(SEED)` fills the first 31 words with the
//! Park-Miller sequence from SEED (0 counts as 1) and discards 310 outputs.
//! Written here from that description, so that a configuration seeded with
//! RandomSeed draws the same numbers as Click does on glibc, on every
//! platform: RandomSample keeps the same packets, UDPRewriter picks the
//! same ports, Script's `random` answers the same.
//!
//! Scope: Click's generator is one per process. Here each thread has its
//! own (no lock on the packet path); `click_srandom` seeds the calling
//! thread's generator (elements are configured on the thread that then
//! runs them in the single-threaded driver) and records the seed, and a
//! thread drawing for the first time starts from the last seed recorded.
//! Click reseeds from true randomness whenever a router initializes; rclick
//! starts from seed 1 (as a C program that never calls `srandom`), so a
//! configuration without RandomSeed draws the same numbers on every run.
//! `RandomSeed` without SEED seeds from the operating system.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};

/// Click's `CLICK_RAND_MAX` at user level (glibc's `RAND_MAX`).
pub const CLICK_RAND_MAX: u32 = 0x7FFF_FFFF;

const DEG: usize = 31;
const SEP: usize = 3;

/// The seed last given to [`click_srandom`] on any thread.
static LAST_SEED: AtomicU32 = AtomicU32::new(1);

/// The generator's state: 31 words and the two positions of the lags.
#[derive(Clone, Debug)]
pub struct GlibcRandom {
    state: [u32; DEG],
    front: usize,
    rear: usize,
}

impl GlibcRandom {
    /// A generator as after `srandom(seed)`.
    pub fn new(seed: u32) -> GlibcRandom {
        let mut g = GlibcRandom {
            state: [0; DEG],
            front: SEP,
            rear: 0,
        };
        g.seed(seed);
        g
    }

    /// `srandom(seed)`.
    pub fn seed(&mut self, seed: u32) {
        let seed = if seed == 0 { 1 } else { seed };
        // The C library keeps the words as 32-bit signed integers; the
        // Park-Miller step (16807 x mod 2^31-1, by Schrage's method) is
        // done on those.
        let mut word = seed as i32 as i64;
        self.state[0] = word as u32;
        for i in 1..DEG {
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            self.state[i] = word as u32;
        }
        self.front = SEP;
        self.rear = 0;
        for _ in 0..10 * DEG {
            self.random();
        }
    }

    /// `random()`: 31 random bits.
    pub fn random(&mut self) -> u32 {
        let v = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = v;
        self.front = if self.front + 1 == DEG {
            0
        } else {
            self.front + 1
        };
        self.rear = if self.rear + 1 == DEG {
            0
        } else {
            self.rear + 1
        };
        v >> 1
    }
}

thread_local! {
    static GEN: RefCell<Option<GlibcRandom>> = const { RefCell::new(None) };
}

fn with_gen<R>(f: impl FnOnce(&mut GlibcRandom) -> R) -> R {
    GEN.with(|g| {
        let mut g = g.borrow_mut();
        let g = g.get_or_insert_with(|| GlibcRandom::new(LAST_SEED.load(Ordering::Relaxed)));
        f(g)
    })
}

/// Click's `click_random()`: a number in 0..=CLICK_RAND_MAX.
pub fn click_random() -> u32 {
    with_gen(|g| g.random())
}

/// Click's `click_random(low, high)`: a number in low..=high (`low` when
/// `low >= high`), drawn as Click draws it, so that seeded runs match:
/// `low == high` takes one draw too (only `low > high` takes none).
pub fn click_random_range(low: u32, high: u32) -> u32 {
    if low > high {
        return low;
    }
    let span = high - low;
    if span > CLICK_RAND_MAX {
        loop {
            let r = (click_random() << 17) ^ (click_random() >> 14);
            if r <= span {
                return r + low;
            }
        }
    } else if span == 1 {
        low + ((click_random() >> 14) & 1)
    } else {
        let count = (CLICK_RAND_MAX + 1) / (span + 1);
        let max = count * (span + 1);
        loop {
            let r = click_random();
            if r < max {
                return r / count + low;
            }
        }
    }
}

/// Click's `click_srandom(seed)`.
pub fn click_srandom(seed: u32) {
    LAST_SEED.store(seed, Ordering::Relaxed);
    GEN.with(|g| *g.borrow_mut() = Some(GlibcRandom::new(seed)));
}

/// Click's `click_random_srandom()`: a seed from the operating system's
/// randomness (and the clock, should that fail).
pub fn click_random_srandom() {
    let mut b = [0u8; 4];
    // SAFETY: getrandom writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), libc::GRND_NONBLOCK) };
    let seed = if n == 4 {
        u32::from_ne_bytes(b)
    } else {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() ^ d.as_secs() as u32)
            .unwrap_or(0);
        t ^ std::process::id().rotate_left(16)
    };
    click_srandom(seed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs after `srandom(1)` as every glibc prints them
    /// (`man 3 random` examples, and Click's UDPRewriter-11 test, whose
    /// expected port 55226 is 1024 + 1804289383 / 33288).
    #[test]
    fn seed_one_known_answers() {
        let mut g = GlibcRandom::new(1);
        let v: Vec<u32> = (0..3).map(|_| g.random()).collect();
        assert_eq!(v, [1_804_289_383, 846_930_886, 1_681_692_777]);
        // Seed 0 is seed 1.
        assert_eq!(GlibcRandom::new(0).random(), 1_804_289_383);
    }

    /// Compared with the C library's own generator where it is glibc's.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn matches_glibc_random() {
        extern "C" {
            fn srandom(seed: libc::c_uint);
            fn random() -> libc::c_long;
        }
        for seed in [
            1u32,
            2,
            42,
            0x7FFF_FFFF,
            0x8000_0000,
            0xFFFF_FFFF,
            123_456_789,
        ] {
            let mut g = GlibcRandom::new(seed);
            // SAFETY: srandom/random have no preconditions; the C library
            // locks its own state.
            unsafe { srandom(seed) };
            for i in 0..1000 {
                let c = unsafe { random() } as u32;
                assert_eq!(g.random(), c, "seed {seed}, draw {i}");
            }
        }
    }

    /// Click's `click_random(N, N)` returns N but still takes a draw
    /// (Click's `Script(print $(random 7 7), print $(random))` after
    /// `RandomSeed(1)` prints 7, then the second number of seed 1).
    #[test]
    fn an_empty_range_takes_a_draw_as_in_click() {
        click_srandom(1);
        assert_eq!(click_random_range(7, 7), 7);
        assert_eq!(click_random(), 846_930_886);
        // low > high: no draw.
        click_srandom(1);
        assert_eq!(click_random_range(9, 3), 9);
        assert_eq!(click_random(), 1_804_289_383);
    }

    #[test]
    fn range_stays_in_bounds_and_follows_seed() {
        click_srandom(1);
        // Click's UDPRewriter-11: the first port of 1024-65534 after
        // RandomSeed(1).
        assert_eq!(click_random_range(1024, 65534), 55226);
        for (lo, hi) in [(0, 1), (5, 5), (9, 3), (0, u32::MAX), (10, 20)] {
            for _ in 0..100 {
                let r = click_random_range(lo, hi);
                if lo >= hi {
                    assert_eq!(r, lo);
                } else {
                    assert!(r >= lo && r <= hi, "{r} outside {lo}..={hi}");
                }
            }
        }
    }
}
