//! `[delegation]`: how deep a tree may grow and how many children may run at once in it.

/// The tree's bounds, checked when a child is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest a child may be: 1 lets the root delegate and no child delegate further.
    /// 0 turns delegation off (the tools are not offered).
    pub max_depth: u32,
    /// The most children running at once in one tree, the root's and its descendants'.
    pub max_running: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 2,
            max_running: 4,
        }
    }
}
