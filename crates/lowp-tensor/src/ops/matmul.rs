//! `matmul` (2-D and batched, NumPy's rules) and `transpose`.

use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::ops::gemm::{SERIAL_WORK, gemm};
use crate::registry::{Registry, register};
use crate::shape::{BroadcastWalk, broadcast_shapes, numel};
use crate::simd::Path;
use crate::tensor::Tensor;
use rayon::prelude::*;

/// The product of `a` (`[..., m, k]`) and `b` (`[..., k, n]`): `[..., m, n]` with the batch
/// axes broadcast, accumulated in `T::Acc` (f32 for every lowp format) and rounded once; see
/// [`crate::ops::gemm`] for the error bound.
pub(crate) fn matmul<T: FloatElement>(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    matmul_on::<T>(Path::best(), a, b)
}

/// [`matmul`] on a chosen path (for tests and benchmarks).
pub(crate) fn matmul_on<T: FloatElement>(path: Path, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (sa, sb) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
    if a.rank() < 2 || b.rank() < 2 {
        return Err(Error::Shape {
            op: "matmul",
            message: format!(
                "both operands need two axes or more; the shapes are {:?} and {:?}",
                a.shape(),
                b.shape()
            ),
        });
    }
    let (ra, rb) = (a.rank(), b.rank());
    let (m, k) = (a.shape()[ra - 2], a.shape()[ra - 1]);
    let (k2, n) = (b.shape()[rb - 2], b.shape()[rb - 1]);
    if k != k2 {
        return Err(Error::Shape {
            op: "matmul",
            message: format!(
                "the inner sizes differ: {:?} has {k} columns, {:?} has {k2} rows",
                a.shape(),
                b.shape()
            ),
        });
    }
    let (ba, bb) = (&a.shape()[..ra - 2], &b.shape()[..rb - 2]);
    let batch = broadcast_shapes("matmul", ba, bb).map_err(|_| Error::Broadcast {
        op: "matmul",
        lhs: a.shape().to_vec(),
        rhs: b.shape().to_vec(),
    })?;
    let batches = numel(&batch).unwrap_or(0);
    let mut shape = batch.clone();
    shape.extend([m, n]);
    let mut out = vec![T::default(); batches * m * n];
    if batches > 0 {
        let walk = BroadcastWalk::new(&batch, [ba, bb]);
        let mut ia = vec![0; batches];
        let mut ib = vec![0; batches];
        walk.fill(0, &mut [&mut ia, &mut ib]);
        let product = |(t, dst): (usize, &mut [T])| {
            let lhs = &sa[ia[t] * m * k..(ia[t] + 1) * m * k];
            let rhs = &sb[ib[t] * k * n..(ib[t] + 1) * k * n];
            gemm(path, m, n, k, lhs, rhs, dst);
        };
        let chunks = out.chunks_mut((m * n).max(1)).enumerate().take(batches);
        if batches > 1 && m * n * k < SERIAL_WORK {
            // Small products run on one thread each; the batch is the parallel work.
            chunks.par_bridge().for_each(product);
        } else {
            chunks.for_each(product);
        }
    }
    Tensor::from_vec(out, &shape)
}

/// The tensor with its last two axes swapped (copied).
pub(crate) fn transpose<T: Element>(x: &Tensor) -> Result<Tensor> {
    let src = x.as_slice::<T>()?;
    let r = x.rank();
    if r < 2 {
        return Err(Error::Shape {
            op: "transpose",
            message: format!("needs two axes or more; the shape is {:?}", x.shape()),
        });
    }
    let (rows, cols) = (x.shape()[r - 2], x.shape()[r - 1]);
    let mut out = Vec::with_capacity(src.len());
    for matrix in src.chunks((rows * cols).max(1)) {
        for j in 0..cols {
            for i in 0..rows {
                out.push(matrix[i * cols + j]);
            }
        }
    }
    let mut shape = x.shape().to_vec();
    shape.swap(r - 2, r - 1);
    Tensor::from_vec(out, &shape)
}

/// `matmul` for every float dtype, `transpose` for every dtype.
pub(crate) fn register(r: &mut Registry) {
    register!(r, "matmul", BinaryKernel, matmul, floats);
    register!(r, "transpose", UnaryKernel, transpose, all);
}
