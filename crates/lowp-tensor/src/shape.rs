//! Shapes, row-major strides and NumPy broadcasting.
//!
//! [`numel`] and [`broadcast_shapes`] are public; the strides, the broadcast walk and the axis
//! split are the kernels' helpers, called only on shapes already checked (a walk over shapes
//! that broadcast, an axis below the rank), so they stay inside the crate.

use crate::error::Error;

/// The number of elements of a shape (1 for a scalar's empty shape), or `None` on overflow.
pub fn numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// Row-major strides, in elements.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The shape two shapes broadcast to, by NumPy's rule: aligned at the last axis, each pair of
/// sizes equal or one of them 1. The error names the op and both shapes.
///
/// ```
/// use lowp_tensor::shape::broadcast_shapes;
/// assert_eq!(broadcast_shapes("add", &[2, 1, 3], &[4, 1]).unwrap(), vec![2, 4, 3]);
/// let err = broadcast_shapes("add", &[2, 3], &[4]).unwrap_err().to_string();
/// assert!(err.contains("[2, 3]") && err.contains("[4]"));
/// ```
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>, Error> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        if i < rank - s.len() {
            1
        } else {
            s[i - (rank - s.len())]
        }
    };
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(Error::Broadcast {
                op,
                lhs: a.to_vec(),
                rhs: b.to_vec(),
            }),
        })
        .collect()
}

/// Strides, in elements, with which an operand of shape `shape` is read when broadcast to
/// `out` (a broadcast axis has stride 0), aligned with `out`'s axes.
pub(crate) fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let own = strides(shape);
    let lead = out.len() - shape.len();
    (0..out.len())
        .map(|i| {
            if i < lead || shape[i - lead] == 1 {
                0
            } else {
                own[i - lead]
            }
        })
        .collect()
}

/// Walks the elements of an output shape in row-major order and yields, for each, the index
/// of the element of every operand read for it (broadcasting by stride 0).
///
/// The innermost axis is handed out as whole runs, so a kernel can gather a block of operand
/// indices with a few additions per element.
pub(crate) struct BroadcastWalk<const N: usize> {
    shape: Vec<usize>,
    strides: [Vec<usize>; N],
}

impl<const N: usize> BroadcastWalk<N> {
    /// A walk over `out`, reading operands of the given shapes (each must broadcast to `out`).
    pub fn new(out: &[usize], operands: [&[usize]; N]) -> Self {
        BroadcastWalk {
            shape: out.to_vec(),
            strides: operands.map(|s| broadcast_strides(s, out)),
        }
    }

    /// Fills `idx[k][j]` with the index into operand `k` of output element `start + j`, for
    /// `j < idx[k].len()` (all the same length).
    pub fn fill(&self, start: usize, idx: &mut [&mut [usize]; N]) {
        let len = idx[0].len();
        let rank = self.shape.len();
        if rank == 0 {
            for ix in idx.iter_mut() {
                ix.fill(0);
            }
            return;
        }
        // The multi-index of `start`, and each operand's offset there.
        let mut pos = vec![0usize; rank];
        let mut rest = start;
        for axis in (0..rank).rev() {
            let d = self.shape[axis].max(1);
            pos[axis] = rest % d;
            rest /= d;
        }
        let mut base = [0usize; N];
        for (k, b) in base.iter_mut().enumerate() {
            *b = (0..rank).map(|a| pos[a] * self.strides[k][a]).sum();
        }
        let last = rank - 1;
        let inner = self.shape[last];
        let mut j = 0;
        while j < len {
            let run = (inner - pos[last]).min(len - j);
            for (k, ix) in idx.iter_mut().enumerate() {
                let step = self.strides[k][last];
                for (r, slot) in ix[j..j + run].iter_mut().enumerate() {
                    *slot = base[k] + r * step;
                }
            }
            j += run;
            // Advance the multi-index past the run: to the start of the next row.
            pos[last] += run;
            for (k, b) in base.iter_mut().enumerate() {
                *b += run * self.strides[k][last];
            }
            let mut axis = last;
            while pos[axis] == self.shape[axis] && axis > 0 {
                for (k, b) in base.iter_mut().enumerate() {
                    *b -= pos[axis] * self.strides[k][axis];
                    *b += self.strides[k][axis - 1];
                }
                pos[axis] = 0;
                axis -= 1;
                pos[axis] += 1;
            }
        }
    }
}

/// Splits `shape` around `axis` into (outer, len, inner) element counts: the product of the
/// axes before it, its size, and the product of the axes after it.
pub(crate) fn split_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    (outer, shape[axis], inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_are_row_major() {
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(strides(&[]), Vec::<usize>::new());
        assert_eq!(numel(&[]), Some(1));
        assert_eq!(numel(&[3, 0, 2]), Some(0));
        assert_eq!(numel(&[usize::MAX, 2]), None);
    }

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes("x", &[], &[3]).unwrap(), vec![3]);
        assert_eq!(broadcast_shapes("x", &[5, 1], &[1, 4]).unwrap(), vec![5, 4]);
        assert_eq!(broadcast_shapes("x", &[0, 1], &[1, 4]).unwrap(), vec![0, 4]);
        assert!(broadcast_shapes("x", &[3], &[4]).is_err());
        assert!(broadcast_shapes("x", &[0], &[4]).is_err());
    }

    /// The walk against a direct computation of every index, at every start and length.
    #[test]
    fn the_walk_matches_direct_indexing() {
        let out = [2usize, 3, 4];
        let a = [3usize, 1];
        let b = [2usize, 1, 4];
        let walk = BroadcastWalk::new(&out, [&a, &b]);
        let (sa, sb) = (broadcast_strides(&a, &out), broadcast_strides(&b, &out));
        let direct = |i: usize| {
            let p = [i / 12, i / 4 % 3, i % 4];
            let dot = |s: &[usize]| p.iter().zip(s).map(|(x, y)| x * y).sum::<usize>();
            (dot(&sa), dot(&sb))
        };
        for start in 0..24 {
            for len in 1..=24 - start {
                let mut ia = vec![0; len];
                let mut ib = vec![0; len];
                walk.fill(start, &mut [&mut ia, &mut ib]);
                for j in 0..len {
                    assert_eq!((ia[j], ib[j]), direct(start + j), "{start} {len} {j}");
                }
            }
        }
    }

    #[test]
    fn axes_split() {
        assert_eq!(split_axis(&[2, 3, 4], 1), (2, 3, 4));
        assert_eq!(split_axis(&[2, 3, 4], 2), (6, 4, 1));
        assert_eq!(split_axis(&[5], 0), (1, 5, 1));
    }
}
