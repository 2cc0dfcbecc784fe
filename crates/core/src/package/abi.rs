//! The boundary between rclick and an element package: what a package
//! exports (a `#[repr(C)]` header under one symbol), the fingerprint the
//! host checks before anything else, and what the host hands the package
//! (its allocator and the router-thread query).
//!
//! Rust has no stable ABI: `Box<dyn Element>` may cross from a package
//! into the router only when both sides were compiled by the same rustc,
//! for the same target and target features, from the same `rclick-core`
//! and `rclick-lang` sources, with the same panic strategy. The header is plain C (fixed-size fields, pointer and
//! length pairs) so that the host can read the fingerprint of a package
//! built by anything; only when it equals the host's own is the package's
//! `init` called and do Rust types cross.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicPtr, Ordering};

use crate::element::ElementClass;

mod build {
    include!(concat!(env!("OUT_DIR"), "/fingerprint.rs"));
}

/// The symbol a package exports its [`PackageHeader`] under. A new
/// header layout gets a new symbol, so a package with another layout is
/// "not a package" rather than misread.
pub const SYMBOL: &str = "rclick_package_v1";

/// The header's first bytes.
pub const MAGIC: [u8; 8] = *b"RCLKPKG1";

const FINGERPRINT_PARTS: &[&str] = &[
    "rclick-core=",
    crate::VERSION,
    "; core-src=",
    build::CORE_SOURCE_HASH,
    "; rclick-lang-src=",
    rclick_lang::SOURCE_HASH,
    "; rustc=",
    build::RUSTC_ID,
    "; target=",
    build::TARGET,
    "; target-features=",
    build::TARGET_FEATURES,
    "; features=",
    build::FEATURES,
    "; panic=",
    if cfg!(panic = "unwind") {
        "unwind"
    } else {
        "abort"
    },
    "; loom=",
    if cfg!(loom) { "on" } else { "off" },
];
// Not in it: debug assertions, overflow checks, optimisation level. They
// change what code does, not type layouts or calling conventions (cargo
// itself mixes them across the crates of one program with per-package
// profiles), so a release package loads into a debug rclick. That holds
// while no item of the kit is compiled only with or without debug
// assertions: the test `kit_has_no_debug_only_items` checks it.

const fn total_len(parts: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

const fn join<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut k = 0;
    let mut i = 0;
    while i < parts.len() {
        let b = parts[i].as_bytes();
        let mut j = 0;
        while j < b.len() {
            out[k] = b[j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

const FINGERPRINT_LEN: usize = total_len(FINGERPRINT_PARTS);
const FINGERPRINT_BYTES: &[u8] = &join::<FINGERPRINT_LEN>(FINGERPRINT_PARTS);

/// This build's ABI fingerprint: `key=value` fields separated by `"; "`.
pub fn fingerprint() -> &'static str {
    std::str::from_utf8(FINGERPRINT_BYTES).unwrap_or("(not UTF-8)")
}

/// The fields of `theirs` that differ from `ours`, as
/// `key: package has X, rclick has Y`.
pub fn fingerprint_differences(theirs: &str, ours: &str) -> Vec<String> {
    let fields = |s: &str| -> Vec<(String, String)> {
        s.split("; ")
            .map(|f| match f.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (f.to_string(), String::new()),
            })
            .collect()
    };
    let (t, o) = (fields(theirs), fields(ours));
    let mut out = Vec::new();
    for (k, v) in &o {
        match t.iter().find(|(tk, _)| tk == k) {
            Some((_, tv)) if tv == v => {}
            Some((_, tv)) => out.push(format!("{k}: package has '{tv}', rclick has '{v}'")),
            None => out.push(format!("{k}: missing in the package, rclick has '{v}'")),
        }
    }
    for (k, v) in &t {
        if !o.iter().any(|(ok, _)| ok == k) {
            out.push(format!("{k}: package has '{v}', unknown to rclick"));
        }
    }
    if out.is_empty() && theirs != ours {
        out.push(format!("package has '{theirs}', rclick has '{ours}'"));
    }
    out
}

/// What the host hands a package's `init`: its allocator and the query
/// for the running router thread (a thread-local of the host's copy of
/// `rclick-core`, which the package's copy cannot see).
#[repr(C)]
pub struct HostServices {
    pub size: usize,
    pub alloc: unsafe fn(Layout) -> *mut u8,
    pub alloc_zeroed: unsafe fn(Layout) -> *mut u8,
    pub dealloc: unsafe fn(*mut u8, Layout),
    pub realloc: unsafe fn(*mut u8, Layout, usize) -> *mut u8,
    pub current_thread: fn() -> usize,
}

/// The host's services: its global allocator (whatever the program
/// chose) and its router-thread index.
pub(crate) static HOST_SERVICES: HostServices = HostServices {
    size: std::mem::size_of::<HostServices>(),
    alloc: std::alloc::alloc,
    alloc_zeroed: std::alloc::alloc_zeroed,
    dealloc: std::alloc::dealloc,
    realloc: std::alloc::realloc,
    current_thread: crate::router::current_thread,
};

/// A package's entry, called once after its fingerprint matched.
pub type InitFn = unsafe fn(&'static HostServices) -> Result<Vec<ElementClass>, String>;

/// What a package exports under [`SYMBOL`]. Written by
/// [`export_package!`](crate::export_package); read by the host field by
/// field, the fingerprint before anything else.
#[repr(C)]
pub struct PackageHeader {
    pub magic: [u8; 8],
    pub header_size: usize,
    pub fingerprint: *const u8,
    pub fingerprint_len: usize,
    pub name: *const u8,
    pub name_len: usize,
    /// Only called when the fingerprint equals the host's.
    pub init: InitFn,
}

// SAFETY: the pointers point at immutable static data.
unsafe impl Sync for PackageHeader {}

impl PackageHeader {
    pub const fn new(name: &'static str) -> Self {
        PackageHeader {
            magic: MAGIC,
            header_size: std::mem::size_of::<PackageHeader>(),
            fingerprint: FINGERPRINT_BYTES.as_ptr(),
            fingerprint_len: FINGERPRINT_BYTES.len(),
            name: name.as_ptr(),
            name_len: name.len(),
            init: package_init,
        }
    }
}

/// The host's services, once a package's `init` has installed them (null
/// in the host itself).
static HOST: AtomicPtr<HostServices> = AtomicPtr::new(std::ptr::null_mut());
/// Blocks a package allocated (from the system allocator) before the host's
/// allocator was installed and has not freed: they must not be freed by
/// the host's allocator, so a package with any is refused.
static EARLY_LIVE: AtomicIsize = AtomicIsize::new(0);

#[inline]
fn host() -> Option<&'static HostServices> {
    let p = HOST.load(Ordering::Acquire);
    // SAFETY: only ever set to `&'static HostServices`.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// In a package: the host's router-thread query.
#[inline]
pub(crate) fn host_current_thread() -> Option<fn() -> usize> {
    host().map(|h| h.current_thread)
}

/// The package side of `init`: installs the host's services, then lists
/// the classes this package registered with
/// [`element_class!`](crate::element_class) (its own copy of the kit
/// collects them, apart from the host's).
unsafe fn package_init(host: &'static HostServices) -> Result<Vec<ElementClass>, String> {
    if host.size != std::mem::size_of::<HostServices>() {
        return Err("the host's services have another size".into());
    }
    let early = EARLY_LIVE.load(Ordering::SeqCst);
    HOST.store(
        host as *const HostServices as *mut HostServices,
        Ordering::SeqCst,
    );
    if early != 0 {
        return Err(format!(
            "it allocated {early} block(s) before the host's allocator was installed"
        ));
    }
    Ok(crate::element::Registry::linked_classes())
}

/// A package's global allocator (set by
/// [`export_package!`](crate::export_package)): the host's allocator once
/// `init` installed it, so that memory crosses the boundary both ways
/// (packets made in the package and freed by the router, and the reverse);
/// the system allocator before that, counted.
pub struct PackageAllocator;

// SAFETY: forwards to an allocator (the host's or the system's) and pairs
// every block with the allocator that made it: blocks from before the
// switch are counted, and a package with live ones is refused before any
// of its code runs.
unsafe impl GlobalAlloc for PackageAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match host() {
            Some(h) => (h.alloc)(layout),
            None => {
                EARLY_LIVE.fetch_add(1, Ordering::Relaxed);
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match host() {
            Some(h) => (h.alloc_zeroed)(layout),
            None => {
                EARLY_LIVE.fetch_add(1, Ordering::Relaxed);
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match host() {
            Some(h) => (h.dealloc)(ptr, layout),
            None => {
                EARLY_LIVE.fetch_sub(1, Ordering::Relaxed);
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match host() {
            Some(h) => (h.realloc)(ptr, layout, new_size),
            None => System.realloc(ptr, layout, new_size),
        }
    }
}

/// Makes the crate an element package named `$name`: exports its header
/// and sets its global allocator (which must be the host's: a package
/// cannot have one of its own). Write it once, in the package's `lib.rs`,
/// which is built as a `cdylib`; its elements register with
/// [`element_class!`](crate::element_class) as built-in ones do.
///
/// ```ignore
/// rclick_core::export_package!("hello");
/// ```
#[macro_export]
macro_rules! export_package {
    ($name:literal) => {
        #[global_allocator]
        static RCLICK_PACKAGE_ALLOCATOR: $crate::package::PackageAllocator =
            $crate::package::PackageAllocator;

        #[no_mangle]
        #[allow(non_upper_case_globals)]
        pub static rclick_package_v1: $crate::package::PackageHeader =
            $crate::package::PackageHeader::new($name);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_names_its_fields() {
        let fp = fingerprint();
        for k in ["rclick-core=", "core-src=", "rustc=", "target=", "panic="] {
            assert!(fp.contains(k), "{k} in {fp}");
        }
        assert!(fingerprint_differences(fp, fp).is_empty());
        let other = fp.replace("rustc=", "rustc=0.0.1 ");
        let d = fingerprint_differences(&other, fp);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("rustc: package has '0.0.1 "), "{d:?}");
    }

    /// The fingerprint leaves out the versions of the kit's third-party
    /// dependencies (a package's own Cargo.lock may resolve others than
    /// rclick's): sound only while no type of theirs is in a type that
    /// crosses the boundary, but for libc's C structs (`pollfd`,
    /// `epoll_event`), whose layout the target fixes. `inventory` and
    /// `libloading` are used inside each side only. A new dependency of
    /// the kit or of rclick-lang must be judged the same way (or its
    /// version put into the fingerprint) before it is added here.
    #[test]
    fn kit_dependencies_are_the_judged_ones() {
        fn deps(manifest: &str) -> Vec<String> {
            let text = std::fs::read_to_string(manifest).unwrap();
            let mut out = Vec::new();
            let mut on = false;
            for line in text.lines().map(str::trim) {
                if line.starts_with('[') {
                    // [dependencies] and [target.'cfg(..)'.dependencies]
                    on = line.ends_with("dependencies]") && !line.contains("dev-");
                } else if on && !line.is_empty() && !line.starts_with('#') {
                    let name = line.split(['=', '.', ' ']).next().unwrap_or("");
                    out.push(name.trim().to_string());
                }
            }
            out.sort();
            out
        }
        let base = env!("CARGO_MANIFEST_DIR");
        assert_eq!(
            deps(&format!("{base}/Cargo.toml")),
            ["inventory", "libc", "libloading", "loom", "rclick-lang"],
            "rclick-core's dependencies changed: see this test's comment"
        );
        assert_eq!(
            deps(&format!("{base}/../lang/Cargo.toml")),
            Vec::<String>::new(),
            "rclick-lang's dependencies changed: see this test's comment"
        );
    }

    /// The fingerprint leaves debug assertions out: sound only while no
    /// item (a struct field, a function, an impl) of the kit or of
    /// rclick-lang exists only with or only without them. `cfg!` and
    /// `debug_assert!` only change behaviour and are fine.
    #[test]
    fn kit_has_no_debug_only_items() {
        fn walk(p: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            if p.is_dir() {
                for e in std::fs::read_dir(p).unwrap().flatten() {
                    walk(&e.path(), out);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p.to_path_buf());
            }
        }
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        walk(&base.join("src"), &mut files);
        walk(&base.join("../lang/src"), &mut files);
        assert!(files.len() > 20, "found the sources");
        // Written in pieces, so that this file does not match itself.
        let da = "debug_assertions";
        let patterns = [
            format!("#[cfg({da}"),
            format!("#[cfg(not({da}"),
            format!("cfg_attr({da}"),
        ];
        let bad: Vec<String> = files
            .iter()
            .filter(|f| {
                let t = std::fs::read_to_string(f)
                    .unwrap_or_default()
                    .replace(' ', "");
                patterns.iter().any(|pat| t.contains(pat.as_str()))
            })
            .map(|f| f.display().to_string())
            .collect();
        assert!(
            bad.is_empty(),
            "items compiled only with or without debug assertions in {bad:?}: \
             put debug assertions back into the package ABI fingerprint"
        );
    }
}
