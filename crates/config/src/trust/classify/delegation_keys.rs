//! `[delegation]` from an untrusted project: a lower depth or fewer running children is kept
//! (fewer children, each running what its parent may), a higher one lets a repository grow a
//! larger tree of model calls than the user allows.

use super::Splitter;
use crate::settings::{DelegationSection, Sourced};

impl Splitter<'_> {
    pub(super) fn delegation(&mut self, d: &DelegationSection) -> DelegationSection {
        let max_depth = d.max_depth.as_ref().and_then(|n| {
            let lower = &self.lower.delegation_max_depth;
            if *n.get_ref() <= lower.value {
                return Some(n.clone());
            }
            self.widen(
                "delegation.max_depth",
                n,
                raised("nest", n.get_ref(), lower),
            );
            None
        });
        let max_running = d.max_running.as_ref().and_then(|n| {
            let lower = &self.lower.delegation_max_running;
            if *n.get_ref() <= lower.value {
                return Some(n.clone());
            }
            self.widen(
                "delegation.max_running",
                n,
                raised("run", n.get_ref(), lower),
            );
            None
        });
        DelegationSection {
            max_depth,
            max_running,
        }
    }
}

fn raised(what: &str, project: &u32, lower: &Sourced<u32>) -> String {
    let how = if what == "nest" {
        format!("delegated children may nest {project} deep")
    } else {
        format!("{project} delegated children may run at once")
    };
    format!("{how} instead of {} (from {})", lower.value, lower.origin)
}
