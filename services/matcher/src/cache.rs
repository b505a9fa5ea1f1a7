//! A small bounded map with least-recently-used eviction (in batches, so an insert is
//! amortised O(1) without a linked list).

use std::collections::HashMap;
use std::hash::Hash;

/// Bounded map; when it grows past its capacity the least recently used tenth is dropped.
#[derive(Debug)]
pub(crate) struct BoundedCache<K, V> {
    map: HashMap<K, (V, u64)>,
    capacity: usize,
    tick: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> BoundedCache<K, V> {
    pub(crate) fn new(capacity: usize) -> Self {
        BoundedCache { map: HashMap::new(), capacity: capacity.max(1), tick: 0 }
    }

    pub(crate) fn get(&mut self, key: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(key).map(|(v, t)| {
            *t = tick;
            v.clone()
        })
    }

    pub(crate) fn insert(&mut self, key: K, value: V) {
        self.tick += 1;
        self.map.insert(key, (value, self.tick));
        if self.map.len() > self.capacity {
            let mut ticks: Vec<u64> = self.map.values().map(|(_, t)| *t).collect();
            let drop = (self.capacity / 10).max(1).min(ticks.len() - 1);
            let (_, cut, _) = ticks.select_nth_unstable(drop);
            let cut = *cut;
            self.map.retain(|_, (_, t)| *t > cut);
        }
    }

    pub(crate) fn remove(&mut self, key: &K) {
        self.map.remove(key);
    }

    pub(crate) fn clear(&mut self) {
        self.map.clear();
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used() {
        let mut c = BoundedCache::new(10);
        for i in 0..10 {
            c.insert(i, i);
        }
        assert_eq!(c.get(&0), Some(0)); // 0 is now the most recent
        c.insert(10, 10);
        assert!(c.len() <= 10);
        assert_eq!(c.get(&0), Some(0));
        assert_eq!(c.get(&1), None);
        assert_eq!(c.get(&10), Some(10));
    }
}
