//! Which freed output blocks `lowp.cast` keeps for its next results, and which it gives back.
//!
//! A fresh NumPy array of 64 MiB costs more to fill than the conversion that fills it: glibc
//! serves blocks of 32 MiB or more with `mmap` and unmaps them when freed, so every new one is
//! zeroed by the kernel, a page at a time, on first write. Below 32 MiB glibc's own heap
//! already reuses freed blocks. This cache does the same for lowp's large outputs: a block of
//! [`MIN_BLOCK`] bytes or more that held a dead result is kept, up to a limit on the bytes
//! kept, and the next result that fits takes it, already mapped.
//!
//! This module is the policy only, on block addresses; it holds no memory itself. The memory
//! comes from and returns to NumPy's allocator through [`crate::ffi`].

use std::collections::{HashMap, VecDeque};

/// The smallest block kept: NumPy's threshold for asking for huge pages too. Smaller
/// blocks are cheap to fault in, and glibc's heap reuses them already.
pub const MIN_BLOCK: usize = 4 << 20;

/// The limit a new cache starts with, in bytes.
pub const DEFAULT_LIMIT: usize = 1 << 30;

/// A block of memory, by address, as the allocator gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Its address.
    pub addr: usize,
    /// The bytes it was allocated with (which a request it is reused for may not fill).
    pub capacity: usize,
}

/// What the cache holds and has done, for `lowp.output_cache()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// The most bytes it keeps.
    pub limit: usize,
    /// The bytes it keeps now.
    pub held: usize,
    /// The blocks it keeps now.
    pub blocks: usize,
    /// Requests of [`MIN_BLOCK`] bytes or more that a kept block served.
    pub hits: u64,
    /// Requests of [`MIN_BLOCK`] bytes or more that went to the allocator.
    pub misses: u64,
}

/// The blocks kept, oldest first, and the large blocks lent out.
#[derive(Debug)]
pub struct Cache {
    /// The most bytes kept.
    limit: usize,
    /// The kept blocks, the oldest first, so that it goes first when the limit is passed.
    kept: VecDeque<Block>,
    /// The sum of `kept`'s capacities.
    held: usize,
    /// Blocks of [`MIN_BLOCK`] bytes or more handed out and not yet freed, by address, with
    /// their capacity. Only these are kept when freed: a block's size as NumPy frees it may be
    /// less than its capacity, and a block not in here came from somewhere this cache does
    /// not know (a `realloc`).
    lent: HashMap<usize, usize>,
    /// See [`Info::hits`].
    hits: u64,
    /// See [`Info::misses`].
    misses: u64,
}

impl Default for Cache {
    fn default() -> Self {
        Cache::new(DEFAULT_LIMIT)
    }
}

impl Cache {
    /// An empty cache that keeps up to `limit` bytes.
    pub fn new(limit: usize) -> Cache {
        Cache {
            limit,
            kept: VecDeque::new(),
            held: 0,
            lent: HashMap::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// A kept block for a request of `size` bytes, now lent out, or `None` when the caller
    /// must allocate (and then [`Cache::lend`] the result). The block chosen is the smallest
    /// that holds `size` and wastes at most an eighth of it, so that a small request does
    /// not take a block a larger one would need.
    pub fn take(&mut self, size: usize) -> Option<Block> {
        if size < MIN_BLOCK {
            return None;
        }
        let fits = |b: &Block| b.capacity >= size && b.capacity - size <= size / 8;
        let best = (0..self.kept.len())
            .filter(|&i| fits(&self.kept[i]))
            .min_by_key(|&i| self.kept[i].capacity);
        let Some(i) = best else {
            self.misses += 1;
            return None;
        };
        let block = self.kept.remove(i)?;
        self.held -= block.capacity;
        self.hits += 1;
        self.lent.insert(block.addr, block.capacity);
        Some(block)
    }

    /// Records `block`, fresh from the allocator, as lent out, so that it can be kept when
    /// freed. Blocks under [`MIN_BLOCK`] bytes are not recorded.
    pub fn lend(&mut self, block: Block) {
        if block.capacity >= MIN_BLOCK {
            self.lent.insert(block.addr, block.capacity);
        }
    }

    /// Forgets the lent block at `addr` (which is being reallocated): when freed it will go
    /// back to the allocator. Its capacity, if it was recorded.
    pub fn forget(&mut self, addr: usize) -> Option<usize> {
        self.lent.remove(&addr)
    }

    /// Takes back the block at `addr`, freed with `size` bytes, and returns the blocks the
    /// caller must free in the allocator: this one if it is not kept (not lent by this
    /// cache, or larger than the limit), and the oldest kept blocks when keeping this one
    /// passes the limit.
    pub fn give_back(&mut self, addr: usize, size: usize) -> Vec<Block> {
        let Some(capacity) = self.lent.remove(&addr) else {
            return vec![Block {
                addr,
                capacity: size,
            }];
        };
        let block = Block { addr, capacity };
        if capacity > self.limit {
            return vec![block];
        }
        self.kept.push_back(block);
        self.held += capacity;
        self.shrink_to(self.limit)
    }

    /// Sets the limit to `limit` bytes; returns the old limit and the kept blocks, oldest
    /// first, that no longer fit, for the caller to free. A limit of 0 turns keeping off.
    pub fn set_limit(&mut self, limit: usize) -> (usize, Vec<Block>) {
        let old = std::mem::replace(&mut self.limit, limit);
        (old, self.shrink_to(limit))
    }

    /// Lets go of every kept block (for the caller to free); the limit stays.
    pub fn empty(&mut self) -> Vec<Block> {
        self.shrink_to(0)
    }

    /// Drops the oldest kept blocks until at most `bytes` are held; returns them.
    fn shrink_to(&mut self, bytes: usize) -> Vec<Block> {
        let mut dropped = Vec::new();
        while self.held > bytes {
            let Some(oldest) = self.kept.pop_front() else {
                break;
            };
            self.held -= oldest.capacity;
            dropped.push(oldest);
        }
        dropped
    }

    /// What the cache holds and has done.
    pub fn info(&self) -> Info {
        Info {
            limit: self.limit,
            held: self.held,
            blocks: self.kept.len(),
            hits: self.hits,
            misses: self.misses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    /// A cache whose blocks at 1000, 2000, ... were lent with the given capacities.
    fn lent(limit: usize, capacities: &[usize]) -> Cache {
        let mut c = Cache::new(limit);
        for (i, &capacity) in capacities.iter().enumerate() {
            c.lend(Block {
                addr: 1000 * (i + 1),
                capacity,
            });
        }
        c
    }

    #[test]
    fn a_freed_block_serves_the_next_request_of_its_size() {
        let mut c = lent(64 * MIB, &[8 * MIB]);
        assert_eq!(c.give_back(1000, 8 * MIB), vec![]);
        assert_eq!((c.info().held, c.info().blocks), (8 * MIB, 1));
        let b = c.take(8 * MIB).expect("kept block");
        assert_eq!(
            b,
            Block {
                addr: 1000,
                capacity: 8 * MIB
            }
        );
        assert_eq!((c.info().held, c.info().blocks, c.info().hits), (0, 0, 1));
        // Lent again: freeing it keeps it again.
        assert_eq!(c.give_back(1000, 8 * MIB), vec![]);
        assert_eq!(c.info().blocks, 1);
    }

    #[test]
    fn small_requests_and_unknown_blocks_go_to_the_allocator() {
        let mut c = lent(64 * MIB, &[MIB, 8 * MIB]);
        assert_eq!(c.take(MIB), None);
        assert_eq!(c.info().misses, 0, "small requests are not counted");
        assert_eq!(
            c.give_back(1000, MIB),
            vec![Block {
                addr: 1000,
                capacity: MIB
            }]
        );
        // Never lent (or reallocated since): freed with the size given.
        assert_eq!(
            c.give_back(5000, 9 * MIB),
            vec![Block {
                addr: 5000,
                capacity: 9 * MIB
            }]
        );
        assert_eq!(c.forget(2000), Some(8 * MIB));
        assert_eq!(
            c.give_back(2000, 8 * MIB),
            vec![Block {
                addr: 2000,
                capacity: 8 * MIB
            }]
        );
        assert_eq!(c.info().held, 0);
    }

    #[test]
    fn the_smallest_block_that_wastes_at_most_an_eighth_is_taken() {
        let mut c = lent(256 * MIB, &[40 * MIB, 9 * MIB, 10 * MIB, 8 * MIB]);
        for addr in [1000, 2000, 3000, 4000] {
            assert_eq!(c.give_back(addr, 1), vec![]);
        }
        // 9 MiB wastes half a MiB of 8.5; 10 MiB would waste 1.5, over an eighth; 8 MiB is
        // too small.
        assert_eq!(c.take(17 * MIB / 2).map(|b| b.addr), Some(2000));
        // 36 MiB may take 40 MiB (4 <= 4.5), 35 MiB may not (5 > 4.375).
        assert_eq!(c.take(35 * MIB), None);
        assert_eq!(c.take(36 * MIB).map(|b| b.capacity), Some(40 * MIB));
        assert_eq!((c.info().hits, c.info().misses), (2, 1));
        // Freed with the size of the request it served: kept with its capacity.
        assert_eq!(c.give_back(1000, 36 * MIB), vec![]);
        assert_eq!(c.info().held, (40 + 10 + 8) * MIB);
    }

    #[test]
    fn the_oldest_blocks_go_first_when_the_limit_is_passed() {
        let mut c = lent(20 * MIB, &[8 * MIB, 8 * MIB, 8 * MIB, 30 * MIB]);
        assert_eq!(c.give_back(1000, 8 * MIB), vec![]);
        assert_eq!(c.give_back(2000, 8 * MIB), vec![]);
        assert_eq!(
            c.give_back(3000, 8 * MIB),
            vec![Block {
                addr: 1000,
                capacity: 8 * MIB
            }]
        );
        assert_eq!((c.info().held, c.info().blocks), (16 * MIB, 2));
        // Larger than the limit: never kept, and nothing else is dropped for it.
        assert_eq!(
            c.give_back(4000, 30 * MIB),
            vec![Block {
                addr: 4000,
                capacity: 30 * MIB
            }]
        );
        assert_eq!(c.info().held, 16 * MIB);
    }

    #[test]
    fn lowering_the_limit_and_emptying_release_blocks() {
        let mut c = lent(64 * MIB, &[8 * MIB, 16 * MIB, 4 * MIB]);
        for addr in [1000, 2000, 3000] {
            assert_eq!(c.give_back(addr, 1), vec![]);
        }
        let (old, dropped) = c.set_limit(20 * MIB);
        assert_eq!(old, 64 * MIB);
        assert_eq!(
            dropped,
            vec![Block {
                addr: 1000,
                capacity: 8 * MIB
            }]
        );
        assert_eq!(c.empty().len(), 2);
        assert_eq!(
            c.info(),
            Info {
                limit: 20 * MIB,
                held: 0,
                blocks: 0,
                hits: 0,
                misses: 0
            }
        );
        // Off: nothing is kept.
        c.set_limit(0);
        c.lend(Block {
            addr: 9000,
            capacity: 8 * MIB,
        });
        assert_eq!(c.give_back(9000, 8 * MIB).len(), 1);
        assert_eq!(c.take(8 * MIB), None);
    }
}
