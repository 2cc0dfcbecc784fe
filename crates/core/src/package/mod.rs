//! Element packages: shared libraries of element classes loaded while
//! rclick runs (`require(package "NAME")`, the `load_package` handler).
//!
//! A package is a `cdylib` crate built with cargo against this crate (the
//! element kit): its element files are written as built-in ones are, and
//! its `lib.rs` says [`export_package!`](crate::export_package). See
//! docs/packages.md.
//!
//! **Loading** (`PackageSet::load`): `dlopen` (`RTLD_NOW | RTLD_LOCAL`),
//! then the header under [`abi::SYMBOL`] is read as plain C data; its
//! fingerprint must equal this build's ([`abi::fingerprint`]), or the
//! package is refused with the fields that differ and closed again
//! (nothing of it ran but its own initialisers). Only then is its `init`
//! called, which installs the host's allocator and thread query in the
//! package's copy of the kit and returns its classes. A class named like
//! one already known is refused.
//!
//! **Never unloaded**: a loaded package stays mapped until the process
//! exits. `unload_package` only unregisters its classes (refused while the
//! running router has elements of them). Closing the library would leave
//! dangling whatever still points into it: vtables of elements a hot swap
//! is still dropping, thread-local destructors the package's copy of the
//! kit registered (its packet pools' guard) that run when router threads
//! exit, function pointers in timers. Loading the same file again
//! registers its classes again, from the code already mapped (a file
//! rebuilt at the same path is not reread: the dynamic loader returns
//! the mapping it has).
//!
//! **What the boundary shares** (see also `abi`): both sides run the same
//! code on the same data layouts, and memory goes through the host's
//! allocator, so packets, batches, strings and elements made on one side
//! are freed on the other soundly. Each side keeps its own copy of the
//! kit's global state: packet and batch free lists (per thread, trading
//! through per-copy depots: a packet made in the package and freed by the
//! router simply joins the router's lists, like a packet crossing
//! threads), the link-time class collection (which is how the package's
//! classes are found apart from the host's), and the argument-recording
//! hook of the argument sweep tool (package elements' reads are not
//! recorded). The one piece of state the package must see as the host
//! does, the router thread of the calling OS thread, is read through the
//! host's function. Two differences remain, documented in
//! docs/packages.md: a panic in package code cannot be caught by the
//! router (another copy of std made it) and aborts the process, and a
//! package's `std` output is buffered apart from the router's.

pub mod abi;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use abi::{HostServices, PackageAllocator, PackageHeader};

use crate::element::ElementClass;

/// One loaded package.
#[derive(Clone, Debug)]
pub struct PackageInfo {
    pub name: String,
    pub path: PathBuf,
    /// Its classes, sorted.
    pub classes: Vec<&'static str>,
    /// Whether its classes are registered (false after `unload_package`).
    pub registered: bool,
}

#[derive(Default)]
struct State {
    packages: Vec<PackageInfo>,
    /// Registered package classes, each leaked once per load (their code
    /// is never unmapped either).
    classes: BTreeMap<&'static str, (&'static ElementClass, usize)>,
    /// The classes each package's `init` returned, by package index.
    all_classes: Vec<Vec<&'static ElementClass>>,
}

#[derive(Default)]
struct Inner {
    search_path: Vec<PathBuf>,
    state: Mutex<State>,
}

/// The element packages a program loaded: shared by every clone of a
/// [`Registry`](crate::Registry) made
/// [`with_packages`](crate::Registry::with_packages), so that routers
/// built by hot swap see packages loaded after their predecessor started.
#[derive(Clone, Default)]
pub struct PackageSet {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PackageSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackageSet")
            .field("search_path", &self.inner.search_path)
            .finish_non_exhaustive()
    }
}

impl PackageSet {
    /// A set that finds packages by name in `search_path` (CLICKPATH).
    pub fn new(search_path: Vec<PathBuf>) -> Self {
        PackageSet {
            inner: Arc::new(Inner {
                search_path,
                state: Mutex::new(State::default()),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The registered class `name`, if a loaded package provides it.
    pub fn class(&self, name: &str) -> Option<&'static ElementClass> {
        self.state().classes.get(name).map(|(c, _)| *c)
    }

    /// The name of the registered package that provides class `name`.
    pub fn package_of(&self, name: &str) -> Option<String> {
        let st = self.state();
        let &(_, i) = st.classes.get(name)?;
        Some(st.packages[i].name.clone())
    }

    /// Names of the registered package classes.
    pub fn class_names(&self) -> Vec<&'static str> {
        self.state().classes.keys().copied().collect()
    }

    /// The packages loaded and registered now.
    pub fn loaded(&self) -> Vec<PackageInfo> {
        self.state()
            .packages
            .iter()
            .filter(|p| p.registered)
            .cloned()
            .collect()
    }

    /// The package `name`, if registered.
    pub fn find(&self, name: &str) -> Option<PackageInfo> {
        self.loaded().into_iter().find(|p| p.name == name)
    }

    /// The files `require(package NAME)` would try, in order: in each
    /// CLICKPATH directory D, `D/libNAME.so` and `D/NAME.so`, then the
    /// same in `D/lib`, `D/lib/click` (Click's subdirectories) and cargo's
    /// `D/target/release` and `D/target/debug` (so a package's crate
    /// directory can be given as well as its build directory).
    pub fn candidates(&self, name: &str) -> Vec<PathBuf> {
        let files = [
            format!(
                "{}{name}{}",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            ),
            format!("{name}{}", std::env::consts::DLL_SUFFIX),
        ];
        let subdirs = ["", "lib", "lib/click", "target/release", "target/debug"];
        let mut out = Vec::new();
        for d in &self.inner.search_path {
            for s in subdirs {
                for f in &files {
                    let p = if s.is_empty() {
                        d.join(f)
                    } else {
                        d.join(s).join(f)
                    };
                    if p.is_file() && !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
        out
    }

    /// `require(package NAME)`: nothing if NAME is registered, else the
    /// first candidate file that loads. `builtin` tells the classes the
    /// program already has.
    pub fn require(&self, name: &str, builtin: &dyn Fn(&str) -> bool) -> Result<(), String> {
        if self.find(name).is_some() {
            return Ok(());
        }
        let cands = self.candidates(name);
        if cands.is_empty() {
            let dirs: Vec<String> = self
                .inner
                .search_path
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            return Err(format!(
                "can't find package '{name}' ({}{name}{}) in CLICKPATH '{}'",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX,
                dirs.join(":")
            ));
        }
        let mut errors = Vec::new();
        for c in cands {
            match self.load(&c, Some(name), builtin) {
                Ok(_) => return Ok(()),
                Err(e) => errors.push(e),
            }
        }
        Err(errors.join("\n"))
    }

    /// `load_package`: a path (it has a `/` or ends in the library suffix;
    /// a relative one is taken in the package path's directories) is
    /// loaded if it lies in a directory of the package path; a name is
    /// required as `require(package NAME)` would.
    /// Returns the package's name.
    pub fn load_spec(&self, spec: &str, builtin: &dyn Fn(&str) -> bool) -> Result<String, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("expected a package name or file".into());
        }
        if spec.contains('/') || spec.ends_with(std::env::consts::DLL_SUFFIX) {
            // Only files under the package path: a client of the control
            // socket chooses among the libraries the operator put there,
            // not any file on the machine.
            // A relative file is looked for in the package path's
            // directories, in order (not in rclick's working directory).
            let given = Path::new(spec);
            let file = if given.is_absolute() {
                given.to_path_buf()
            } else {
                self.inner
                    .search_path
                    .iter()
                    .map(|d| d.join(given))
                    .find(|f| f.is_file())
                    .unwrap_or_else(|| given.to_path_buf())
            };
            // Where the file lies: its directory resolved (links, `..`),
            // the file itself not, so that a link the operator put in a
            // package directory loads by file as it does by name.
            let err = |e: std::io::Error| format!("package file '{spec}': {e}");
            let (Some(dir), Some(fname)) = (file.parent(), file.file_name()) else {
                return Err(format!("package file '{spec}': not a file"));
            };
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            let file = dir.canonicalize().map_err(err)?.join(fname);
            if !file.is_file() {
                return Err(format!("package file '{spec}': not a file"));
            }
            let inside = self
                .inner
                .search_path
                .iter()
                .filter_map(|d| d.canonicalize().ok())
                .any(|d| file.starts_with(d));
            if !inside {
                return Err(format!(
                    "package file '{}' is not in a CLICKPATH directory",
                    file.display()
                ));
            }
            return self.load(&file, None, builtin).map(|p| p.name);
        }
        self.require(spec, builtin).map(|()| spec.to_string())
    }

    /// Loads the package in `file` (see the module documentation). With
    /// `expect`, its header must name that package.
    pub fn load(
        &self,
        file: &Path,
        expect: Option<&str>,
        builtin: &dyn Fn(&str) -> bool,
    ) -> Result<PackageInfo, String> {
        let path = file
            .canonicalize()
            .map_err(|e| format!("package file '{}': {e}", file.display()))?;
        let shown = path.display().to_string();
        let mut st = self.state();
        if let Some(i) = st.packages.iter().position(|p| p.path == path) {
            // Loaded before (maybe under another file name: a link to it).
            let name = st.packages[i].name.clone();
            if let Some(want) = expect {
                if name != want {
                    return Err(format!("'{shown}' is package '{name}', not '{want}'"));
                }
            }
            // Register its classes again if unloaded, unless another
            // package of its name came in meanwhile.
            if !st.packages[i].registered {
                if st.packages.iter().any(|p| p.name == name && p.registered) {
                    return Err(format!("a package named '{name}' is already loaded"));
                }
                let classes = st.all_classes[i].clone();
                check_names(&st, &classes, builtin, &st.packages[i].name)?;
                for c in classes {
                    st.classes.insert(c.name, (c, i));
                }
                st.packages[i].registered = true;
            }
            return Ok(st.packages[i].clone());
        }
        // SAFETY: loading runs the library's initialisers. A file that is
        // not a package is refused below before any of its functions is
        // called; what its initialisers do is the risk of loading any
        // library (as Click's dlopen of a package is).
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some(&path),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
            )
        }
        .map_err(|e| format!("cannot load package '{shown}': {e}"))?;
        let symbol = format!("{}\0", abi::SYMBOL);
        // SAFETY: the symbol's address is only read as a pointer here.
        let header: *const PackageHeader =
            match unsafe { lib.get::<*const PackageHeader>(symbol.as_bytes()) } {
                Ok(s) => *s,
                Err(_) => {
                    return Err(format!(
                        "'{shown}' is not an rclick element package of this version \
                         (no '{}' symbol; a package says rclick_core::export_package!)",
                        abi::SYMBOL
                    ))
                }
            };
        // SAFETY: the symbol is a `PackageHeader` (the symbol name is
        // versioned with the layout); its plain-C fields are read one by
        // one, the magic and size first, and nothing else is touched until
        // the fingerprint matched.
        let (name, init) = unsafe {
            let magic = std::ptr::read_unaligned(std::ptr::addr_of!((*header).magic));
            let size = std::ptr::read_unaligned(std::ptr::addr_of!((*header).header_size));
            if magic != abi::MAGIC || size != std::mem::size_of::<PackageHeader>() {
                return Err(format!("'{shown}': bad package header"));
            }
            let fp = std::slice::from_raw_parts((*header).fingerprint, (*header).fingerprint_len);
            let fp = String::from_utf8_lossy(fp).into_owned();
            let ours = abi::fingerprint();
            if fp != ours {
                let diffs = abi::fingerprint_differences(&fp, ours);
                return Err(format!(
                    "package '{shown}' was built for another rclick: {}; rebuild it \
                     against this rclick's element kit with the same toolchain",
                    diffs.join("; ")
                ));
            }
            let name = std::slice::from_raw_parts((*header).name, (*header).name_len);
            (String::from_utf8_lossy(name).into_owned(), (*header).init)
        };
        if let Some(want) = expect {
            if name != want {
                return Err(format!("'{shown}' is package '{name}', not '{want}'"));
            }
        }
        if st.packages.iter().any(|p| p.name == name && p.registered) {
            return Err(format!("a package named '{name}' is already loaded"));
        }
        // From here on the package's code runs: its library stays mapped
        // for good (see the module documentation).
        std::mem::forget(lib);
        // SAFETY: the fingerprints match: same compiler, target, kit
        // sources and flags, so the Rust types in `init`'s signature have
        // the same layout on both sides.
        let classes = unsafe { init(&abi::HOST_SERVICES) }
            .map_err(|e| format!("package '{shown}' refused: {e}"))?;
        let classes: Vec<&'static ElementClass> = classes
            .into_iter()
            .map(|c| &*Box::leak(Box::new(c)))
            .collect();
        check_names(&st, &classes, builtin, &name)?;
        let idx = st.packages.len();
        let mut names: Vec<&'static str> = classes.iter().map(|c| c.name).collect();
        names.sort_unstable();
        for c in &classes {
            st.classes.insert(c.name, (c, idx));
        }
        let info = PackageInfo {
            name,
            path,
            classes: names,
            registered: true,
        };
        st.packages.push(info.clone());
        st.all_classes.push(classes);
        Ok(info)
    }

    /// Unregisters package `name`'s classes (the library stays mapped).
    /// The caller checks that no element of them exists.
    pub fn unregister(&self, name: &str) -> Result<PackageInfo, String> {
        let mut st = self.state();
        let Some(i) = st
            .packages
            .iter()
            .position(|p| p.name == name && p.registered)
        else {
            return Err(format!("no package '{name}' is loaded"));
        };
        st.classes.retain(|_, (_, p)| *p != i);
        st.packages[i].registered = false;
        Ok(st.packages[i].clone())
    }
}

/// Refuses class names that exist already (built in, or in another
/// package).
fn check_names(
    st: &State,
    classes: &[&'static ElementClass],
    builtin: &dyn Fn(&str) -> bool,
    package: &str,
) -> Result<(), String> {
    let clash: Vec<&str> = classes
        .iter()
        .map(|c| c.name)
        .filter(|n| builtin(n) || st.classes.contains_key(n))
        .collect();
    if clash.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "package '{package}' defines classes that exist already: {}",
            clash.join(", ")
        ))
    }
}
