//! A bounded, process-wide map from content identity to its line index.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::{ContentIdentity, LineIndex};

/// Process-wide cache of [`LineIndex`]es keyed by [`ContentIdentity`], evicting the least recently
/// used entry beyond `capacity`, so a repeated or later read of the same content reuses its
/// checkpoints. Changed content has a new identity and therefore gets a fresh index.
pub struct LineIndexCache {
    capacity: usize,
    stride: u64,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    clock: u64,
    map: HashMap<ContentIdentity, (Arc<Mutex<LineIndex>>, u64)>,
}

impl LineIndexCache {
    /// A cache holding at most `capacity` indexes (at least one) with the default stride.
    pub fn new(capacity: usize) -> Self {
        Self::with_stride(capacity, super::index::DEFAULT_STRIDE)
    }

    /// A cache whose fresh indexes use checkpoints every `stride` lines.
    pub fn with_stride(capacity: usize, stride: u64) -> Self {
        LineIndexCache {
            capacity: capacity.max(1),
            stride,
            entries: Mutex::new(Entries::default()),
        }
    }

    /// The index for `id`, created empty when absent.
    pub fn get(&self, id: &ContentIdentity) -> Arc<Mutex<LineIndex>> {
        // A panic while holding this lock cannot leave the map half-updated in a way that matters:
        // every operation below is a single insert/remove, so a poisoned map is still usable.
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.clock += 1;
        let now = entries.clock;
        if let Some((index, used)) = entries.map.get_mut(id) {
            *used = now;
            return Arc::clone(index);
        }
        if entries.map.len() >= self.capacity {
            let oldest = entries
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                entries.map.remove(&oldest);
            }
        }
        let index = Arc::new(Mutex::new(LineIndex::with_stride(self.stride)));
        entries.map.insert(id.clone(), (Arc::clone(&index), now));
        index
    }

    /// How many indexes are cached.
    pub fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .len()
    }

    /// True when no index is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic loudly
mod tests {
    use super::*;

    fn file_id(len: u64) -> ContentIdentity {
        ContentIdentity::File {
            dev: 1,
            ino: 2,
            len,
            mtime_ns: 3,
        }
    }

    #[test]
    fn same_identity_shares_one_index_and_a_changed_one_gets_a_fresh_index() {
        let cache = LineIndexCache::new(4);
        let a = cache.get(&file_id(10));
        let again = cache.get(&file_id(10));
        assert!(Arc::ptr_eq(&a, &again));
        let changed = cache.get(&file_id(11));
        assert!(!Arc::ptr_eq(&a, &changed));
        let artifact = cache.get(&ContentIdentity::Artifact([7; 32]));
        assert!(!Arc::ptr_eq(&a, &artifact));
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn least_recently_used_index_is_evicted() {
        let cache = LineIndexCache::new(2);
        let one = cache.get(&file_id(1));
        let two = cache.get(&file_id(2));
        // Touch 1 so that 2 becomes the oldest.
        assert!(Arc::ptr_eq(&one, &cache.get(&file_id(1))));
        let _three = cache.get(&file_id(3));
        assert_eq!(cache.len(), 2);
        assert!(Arc::ptr_eq(&one, &cache.get(&file_id(1))));
        assert!(!Arc::ptr_eq(&two, &cache.get(&file_id(2))));
    }

    #[test]
    fn of_file_tracks_length_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "a\n").unwrap();
        let before = ContentIdentity::of_file(&std::fs::metadata(&path).unwrap());
        assert_eq!(
            before,
            ContentIdentity::of_file(&std::fs::metadata(&path).unwrap())
        );
        std::fs::write(&path, "a\nb\n").unwrap();
        let after = ContentIdentity::of_file(&std::fs::metadata(&path).unwrap());
        assert_ne!(before, after);
    }
}
