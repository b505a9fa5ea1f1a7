//! A small bounded map with least-recently-used eviction (in batches, so an insert is
//! amortised O(1) without a linked list).

use std::collections::HashMap;
use std::hash::Hash;

/// Bounded map; when it grows past its capacity (entries) or its budget (the entries'
/// weights, as given on insertion: their size in bytes) the least recently used are
/// dropped: a tenth of the entries, or down to nine tenths of the budget.
#[derive(Debug)]
pub(crate) struct BoundedCache<K, V> {
    /// Value, last use (unique: one tick per operation), weight.
    map: HashMap<K, (V, u64, usize)>,
    capacity: usize,
    budget: usize,
    weight: usize,
    tick: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> BoundedCache<K, V> {
    /// At most `capacity` entries, whatever they weigh.
    pub(crate) fn new(capacity: usize) -> Self {
        Self::with_budget(capacity, usize::MAX)
    }

    /// At most `capacity` entries weighing `budget` together.
    pub(crate) fn with_budget(capacity: usize, budget: usize) -> Self {
        BoundedCache { map: HashMap::new(), capacity: capacity.max(1), budget, weight: 0, tick: 0 }
    }

    pub(crate) fn get(&mut self, key: &K) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(key).map(|(v, t, _)| {
            *t = tick;
            v.clone()
        })
    }

    /// Insert an entry that weighs nothing against the budget.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        self.insert_weighted(key, value, 0);
    }

    pub(crate) fn insert_weighted(&mut self, key: K, value: V, weight: usize) {
        self.tick += 1;
        if let Some((_, _, old)) = self.map.insert(key, (value, self.tick, weight)) {
            self.weight -= old;
        }
        self.weight += weight;
        self.evict();
    }

    /// The entry `key` (if still cached) now weighs `weight`: it grew after insertion.
    pub(crate) fn reweigh(&mut self, key: &K, weight: usize) {
        if let Some((_, _, w)) = self.map.get_mut(key) {
            self.weight = self.weight - *w + weight;
            *w = weight;
            self.evict();
        }
    }

    fn evict(&mut self) {
        let over = self.map.len().saturating_sub(self.capacity);
        if over == 0 && self.weight <= self.budget {
            return;
        }
        let drop_at_least = if over > 0 { (self.capacity / 10).max(1).max(over) } else { 0 };
        let weight_target = if self.weight > self.budget { self.budget - self.budget / 10 } else { usize::MAX };
        let mut order: Vec<(u64, usize)> = self.map.values().map(|(_, t, w)| (*t, *w)).collect();
        order.sort_unstable_by_key(|&(t, _)| t);
        let (mut dropped, mut weight, mut cut) = (0, self.weight, None);
        for (t, w) in order {
            if dropped >= drop_at_least && weight <= weight_target {
                break;
            }
            dropped += 1;
            weight -= w;
            cut = Some(t);
        }
        if let Some(cut) = cut {
            self.map.retain(|_, (_, t, _)| *t > cut);
            self.weight = weight;
        }
    }

    pub(crate) fn remove(&mut self, key: &K) {
        if let Some((_, _, w)) = self.map.remove(key) {
            self.weight -= w;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.map.clear();
        self.weight = 0;
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    #[cfg(test)]
    pub(crate) fn weight(&self) -> usize {
        self.weight
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

    #[test]
    fn evicts_the_least_recently_used_down_to_nine_tenths_of_the_budget() {
        let mut c = BoundedCache::with_budget(1_000, 100);
        for i in 0..10 {
            c.insert_weighted(i, i, 10);
        }
        assert_eq!((c.len(), c.weight()), (10, 100));
        assert_eq!(c.get(&0), Some(0)); // 0 is now the most recent
        c.insert_weighted(10, 10, 25); // 125 > 100: drop 1, 2, 3 (95), then 4 (85 <= 90)
        assert_eq!((c.len(), c.weight()), (7, 85));
        assert_eq!(c.get(&0), Some(0));
        assert_eq!(c.get(&4), None);
        assert_eq!(c.get(&5), Some(5));
        // An entry that grows counts with its new weight.
        c.reweigh(&5, 20);
        assert_eq!(c.weight(), 95);
        c.reweigh(&99, 1_000); // not cached: nothing to weigh
        assert_eq!(c.weight(), 95);
        c.remove(&10);
        assert_eq!((c.len(), c.weight()), (6, 70));
        // Replacing an entry replaces its weight.
        c.insert_weighted(0, 0, 1);
        assert_eq!(c.weight(), 61);
        // One entry over the whole budget does not stay.
        c.insert_weighted(11, 11, 500);
        assert_eq!(c.get(&11), None);
        assert!(c.weight() <= 90, "{}", c.weight());
        c.clear();
        assert_eq!((c.len(), c.weight()), (0, 0));
    }
}
