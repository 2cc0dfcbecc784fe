//! Hot swap: building the next router beside the running one and
//! installing it between driver iterations.

use rclick_lang::Diagnostic;

use super::{Router, RouterCore};
use crate::ctx::InitCtx;

impl RouterCore {
    pub(crate) fn is_successor(&self) -> bool {
        self.options.successor
    }

    /// Parses and initializes `text` as the next configuration, with this
    /// router's registry and options; simulated time continues from now.
    pub(crate) fn build_successor(&self, text: &str) -> Result<Router, Vec<Diagnostic>> {
        let outcome =
            rclick_lang::parse_router(text, "hotconfig", &self.registry, &self.options.parse);
        if outcome.has_errors() {
            return Err(outcome
                .diagnostics
                .into_iter()
                .filter(|d| d.is_error())
                .collect());
        }
        let mut spec = outcome.spec.ok_or_else(Vec::new)?;
        for extra in &self.options.extra_elements {
            if !spec.elements.iter().any(|e| e.name == extra.name) {
                spec.elements.push(extra.clone());
            }
        }
        let mut opts = self.options.clone();
        opts.successor = true;
        if self.rt.clock.is_simulated() {
            opts.simtime = Some(self.rt.clock.now());
        }
        Router::new(spec, text, &self.registry, &opts)
    }
}

impl Router {
    /// Replaces the running configuration with `text` (hot swap). The new
    /// router is parsed and initialized first; on any error the messages
    /// are returned and this router is untouched. On success, elements of
    /// the new router take state from same-named elements of this one
    /// (`Element::take_state`), then the new router replaces this one.
    pub fn hotswap(&mut self, text: &str) -> Result<(), Vec<Diagnostic>> {
        let new = self.core.build_successor(text)?;
        self.install(new);
        Ok(())
    }

    /// Installs a router built by `hotconfig`, if one is waiting. The
    /// driver calls this between iterations, when no element is running.
    pub(super) fn apply_pending_swap(&mut self) -> bool {
        let pending = self.core.pending_swap.borrow_mut().take();
        match pending {
            Some(new) => {
                self.install(*new);
                true
            }
            None => false,
        }
    }

    /// Swaps in `new`: its elements take state from same-named elements
    /// of this router, it inherits the stop flag, and this router is
    /// dropped (cleaned up).
    fn install(&mut self, mut new: Router) {
        for i in 0..new.core.info.len() {
            let Some(&old_idx) = self.core.by_name.get(&new.core.info[i].name) else {
                continue;
            };
            let (Ok(mut ne), Ok(mut oe)) = (
                new.core.elements[i].try_borrow_mut(),
                self.core.elements[old_idx].try_borrow_mut(),
            ) else {
                continue;
            };
            let mut ictx = InitCtx::new(&new.core, i);
            ne.take_state(&mut **oe, &mut ictx);
        }
        new.stop_flag = self.stop_flag.clone();
        std::mem::swap(self, &mut new);
        // `new` is now the old router: dropping it runs its cleanup.
        drop(new);
    }
}
