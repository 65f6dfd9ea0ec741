//! Buffers kept on their thread from one matrix product to the next.
//!
//! A product packs `B` and `A` into buffers of up to a few MiB and accumulates into another.
//! A buffer made afresh for each call is allocated and zeroed each call: at n = 256 on a Zen
//! 4, zeroing the packed panel of `B` takes 6% of a two-thread product, on the calling thread
//! while the others wait. The product writes every value of these buffers before it reads
//! it (packing writes the padding too, and the first depth block sets the accumulators), so a
//! buffer left by an earlier product serves as well as a zeroed one, and [`Aligned`] hands one
//! out where its thread kept one.
//!
//! Each thread keeps at most [`KEEP_BYTES`] of them, so a large product's packed panel is
//! freed after it; the small products, where allocating and zeroing weigh most, reuse theirs.

use std::any::Any;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// The most bytes of buffers a thread keeps between products: a packed panel of `B` of 1024
/// f32 columns and up to 1792 rows (7 MiB) beside one job's other buffers (under 1 MiB), or
/// those of several jobs. A larger panel is freed after its product, which is long enough
/// that allocating it again costs little.
pub(crate) const KEEP_BYTES: usize = 8 << 20;

thread_local! {
    /// This thread's buffers between products: `Vec`s of any element type, each at full
    /// length, with its size in bytes.
    static KEPT: RefCell<Vec<(usize, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
}

/// `len` values starting on a 64-byte boundary (a cache line): a vector row of a packed
/// sliver or of the accumulators then never straddles two lines, which would cost two loads.
///
/// The values are those an earlier user of the buffer on this thread left, or
/// `C::default()` in a new buffer: a caller writes each value before reading it. Dropped, the
/// buffer goes back to its thread's keeping (unless that would pass [`KEEP_BYTES`]).
pub(crate) struct Aligned<C: Copy + Default + 'static> {
    raw: Vec<C>,
    offset: usize,
    len: usize,
}

impl<C: Copy + Default + 'static> Aligned<C> {
    /// A buffer of `len` values: the smallest one this thread keeps that is large enough, or
    /// a new one.
    pub(crate) fn new(len: usize) -> Self {
        let spare = 64 / size_of::<C>().max(1);
        let want = len + spare;
        if len == 0 {
            return Aligned {
                raw: Vec::new(),
                offset: 0,
                len,
            };
        }
        let raw = take::<C>(want).unwrap_or_else(|| vec![C::default(); want]);
        let offset = raw.as_ptr().align_offset(64).min(spare);
        Aligned { raw, offset, len }
    }
}

impl<C: Copy + Default + 'static> Deref for Aligned<C> {
    type Target = [C];

    fn deref(&self) -> &[C] {
        &self.raw[self.offset..self.offset + self.len]
    }
}

impl<C: Copy + Default + 'static> DerefMut for Aligned<C> {
    fn deref_mut(&mut self) -> &mut [C] {
        &mut self.raw[self.offset..self.offset + self.len]
    }
}

impl<C: Copy + Default + 'static> Drop for Aligned<C> {
    fn drop(&mut self) {
        give_back(std::mem::take(&mut self.raw));
    }
}

/// The smallest buffer of `C` this thread keeps that holds at least `len` values, taken out
/// of its keeping.
fn take<C: 'static>(len: usize) -> Option<Vec<C>> {
    KEPT.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        let best = kept
            .iter()
            .enumerate()
            .filter_map(|(i, (_, b))| b.downcast_ref::<Vec<C>>().map(|v| (i, v.len())))
            .filter(|&(_, have)| have >= len)
            .min_by_key(|&(_, have)| have)?
            .0;
        kept.swap_remove(best)
            .1
            .downcast::<Vec<C>>()
            .ok()
            .map(|v| *v)
    })
    .ok()
    .flatten()
}

/// Keeps `raw` on this thread for a later [`take`], unless the thread would then keep more
/// than [`KEEP_BYTES`] (or is exiting).
fn give_back<C: 'static>(raw: Vec<C>) {
    let bytes = size_of_val(raw.as_slice());
    if raw.is_empty() || bytes > KEEP_BYTES {
        return;
    }
    let _ = KEPT.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        let held: usize = kept.iter().map(|&(held, _)| held).sum();
        if held + bytes <= KEEP_BYTES {
            kept.push((bytes, Box::new(raw)));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes this thread keeps.
    fn held() -> usize {
        KEPT.with_borrow(|kept| kept.iter().map(|&(bytes, _)| bytes).sum())
    }

    #[test]
    fn a_dropped_buffer_is_handed_out_again_with_its_values() {
        let mut first = Aligned::<f32>::new(1000);
        first.fill(7.0);
        let at = first.as_ptr();
        drop(first);
        // Another element type does not take it; a request that fits does.
        let other = Aligned::<u32>::new(900);
        assert_ne!(other.as_ptr().cast::<f32>(), at);
        let again = Aligned::<f32>::new(900);
        assert_eq!(again.as_ptr(), at);
        assert_eq!(again.len(), 900);
        assert!(again.iter().all(|&x| x == 7.0));
        // One too big for it is new, and zeroed.
        let bigger = Aligned::<f32>::new(2000);
        assert!(bigger.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn the_smallest_buffer_that_fits_is_taken() {
        let (small, large) = (Aligned::<f64>::new(100), Aligned::<f64>::new(10_000));
        let (small_at, large_at) = (small.as_ptr(), large.as_ptr());
        drop((large, small));
        assert_eq!(Aligned::<f64>::new(50).as_ptr(), small_at);
        assert_eq!(Aligned::<f64>::new(5_000).as_ptr(), large_at);
    }

    #[test]
    fn buffers_start_on_a_cache_line() {
        for len in [1, 3, 17, 64, 1000, 4097] {
            // Kept and new ones alike: each length twice.
            for _ in 0..2 {
                let (a, b, c) = (
                    Aligned::<f32>::new(len),
                    Aligned::<f64>::new(len),
                    Aligned::<u32>::new(len),
                );
                assert_eq!(a.as_ptr() as usize % 64, 0, "f32 x {len}");
                assert_eq!(b.as_ptr() as usize % 64, 0, "f64 x {len}");
                assert_eq!(c.as_ptr() as usize % 64, 0, "u32 x {len}");
            }
        }
    }

    #[test]
    fn a_thread_keeps_at_most_keep_bytes() {
        let quarter = KEEP_BYTES / 4 / size_of::<f32>();
        let buffers: Vec<_> = (0..6).map(|_| Aligned::<f32>::new(quarter)).collect();
        drop(buffers);
        // Three fit beside the alignment's spare values; the fourth would pass the limit.
        assert_eq!(held(), 3 * (quarter + 16) * size_of::<f32>());
        assert!(held() <= KEEP_BYTES);
        // A buffer past the limit on its own is not kept at all.
        let before = held();
        drop(Aligned::<u8>::new(KEEP_BYTES + 1));
        assert_eq!(held(), before);
    }

    #[test]
    fn an_empty_buffer_takes_nothing() {
        drop(Aligned::<f32>::new(10));
        let before = held();
        let empty = Aligned::<f32>::new(0);
        assert!(empty.is_empty());
        assert_eq!(held(), before);
        drop(empty);
        assert_eq!(held(), before);
    }
}
