//! Element classes and the registry a router looks them up in.
//!
//! Each element file registers its class beside its struct with
//! [`element_class!`](crate::element_class); the registrations are collected
//! at link time (the `inventory` crate), so there is no central list to edit.
//! [`Registry::linked`] holds every class linked into the program;
//! [`Registry::add`] adds more by hand (tests, loaded packages).

use std::collections::BTreeMap;

use super::Element;

/// Constructor of an element class.
pub type Constructor = fn() -> Box<dyn Element>;

/// A registered element class.
#[derive(Clone, Debug)]
pub struct ElementClass {
    pub name: &'static str,
    pub create: Constructor,
}

impl ElementClass {
    pub const fn new(name: &'static str, create: Constructor) -> Self {
        ElementClass { name, create }
    }
}

inventory::collect!(ElementClass);

/// Registers an element class. In the element's file:
///
/// ```ignore
/// rclick_core::element_class!(Counter);                     // Counter::default()
/// rclick_core::element_class!("Queue" => Queue::new(QueueKind::Notifier));
/// ```
#[macro_export]
macro_rules! element_class {
    ($ty:ident) => {
        $crate::element_class!(::std::stringify!($ty) => <$ty as ::std::default::Default>::default());
    };
    ($name:expr => $make:expr) => {
        $crate::inventory::submit! {
            $crate::element::ElementClass::new($name, || ::std::boxed::Box::new($make))
        }
    };
}

/// The element classes a router can use. Built-in libraries and loaded
/// packages add to it.
#[derive(Clone, Default)]
pub struct Registry {
    classes: BTreeMap<String, ElementClass>,
    /// Element packages loaded at run time, shared by this registry's
    /// clones (see [`Registry::with_packages`]).
    packages: Option<crate::package::PackageSet>,
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }

    /// Every class registered with [`element_class!`](crate::element_class)
    /// in the crates linked into this program. A crate of elements is linked
    /// only when the program refers to it (`rclick_elements::registry()`
    /// does; another crate needs at least `use my_elements as _;`). Two
    /// registrations of one name are a bug, reported by
    /// [`Registry::duplicates`] (tested); which one wins is unspecified.
    pub fn linked() -> Self {
        let mut reg = Registry::new();
        for class in inventory::iter::<ElementClass> {
            reg.classes
                .entry(class.name.to_string())
                .or_insert_with(|| class.clone());
        }
        reg
    }

    /// Every class registered with [`element_class!`](crate::element_class)
    /// in this copy of the kit, in registration order (an element
    /// package's `init` returns these: its own classes).
    pub(crate) fn linked_classes() -> Vec<ElementClass> {
        inventory::iter::<ElementClass>
            .into_iter()
            .cloned()
            .collect()
    }

    /// This registry, able to load element packages (`require(package
    /// NAME)`, the `load_package` handler) into `set`, which its clones
    /// share.
    pub fn with_packages(mut self, set: crate::package::PackageSet) -> Self {
        self.packages = Some(set);
        self
    }

    /// The packages this registry loads into, if it can load any.
    pub fn packages(&self) -> Option<&crate::package::PackageSet> {
        self.packages.as_ref()
    }

    /// Whether `name` is a class of this registry's own (not from a
    /// package).
    pub fn has_builtin(&self, name: &str) -> bool {
        self.classes.contains_key(name)
    }

    /// `load_package`: loads a package given by name (searched on the
    /// package set's CLICKPATH) or by file. Returns its name.
    pub fn load_package(&self, spec: &str) -> Result<String, String> {
        let Some(set) = &self.packages else {
            return Err("this router cannot load element packages".into());
        };
        set.load_spec(spec, &|n| self.classes.contains_key(n))
    }

    /// Class names registered more than once among the linked classes.
    pub fn duplicates() -> Vec<&'static str> {
        let mut seen = std::collections::BTreeSet::new();
        let mut dup: Vec<&'static str> = inventory::iter::<ElementClass>
            .into_iter()
            .filter(|c| !seen.insert(c.name))
            .map(|c| c.name)
            .collect();
        dup.sort_unstable();
        dup
    }

    pub fn add(&mut self, name: &'static str, create: Constructor) {
        self.classes
            .insert(name.to_string(), ElementClass { name, create });
    }

    /// Class `name`: this registry's own, or a loaded package's.
    pub fn get(&self, name: &str) -> Option<&ElementClass> {
        self.classes
            .get(name)
            .or_else(|| self.packages.as_ref()?.class(name))
    }

    /// Class names in sorted order (loaded packages' included).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let mut v: Vec<&str> = self.classes.keys().map(|s| s.as_str()).collect();
        if let Some(p) = &self.packages {
            v.extend(p.class_names());
            v.sort_unstable();
        }
        v.into_iter()
    }

    pub fn len(&self) -> usize {
        self.classes.len() + self.packages.as_ref().map_or(0, |p| p.class_names().len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl rclick_lang::ClassLookup for Registry {
    fn has_class(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn require_package(&self, name: &str) -> Option<Result<(), String>> {
        let set = self.packages.as_ref()?;
        Some(set.require(name, &|n| self.classes.contains_key(n)))
    }
}
