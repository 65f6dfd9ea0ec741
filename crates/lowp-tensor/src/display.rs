//! Printing a tensor the way frameworks do: nested brackets, aligned columns, the dtype.

use crate::tensor::Tensor;
use std::fmt;

/// Above this many elements, each axis shows only its first and last [`EDGE`] entries.
const SUMMARY_THRESHOLD: usize = 1000;
/// Entries shown at each end of a summarised axis.
const EDGE: usize = 3;

impl fmt::Display for Tensor {
    /// `tensor([[0.1, 2], [3, 4.5]], dtype=bf16)`, wrapped one row per line for rank 2 and
    /// above, columns right-aligned; each element printed with its dtype's `Display` (for the
    /// lowp formats, the shortest decimal that reads back). Large tensors show three entries
    /// at each end of every axis with `...` between, as PyTorch and NumPy do.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = self.shape();
        if shape.contains(&0) {
            return write!(f, "tensor([], shape={shape:?}, dtype={})", self.dtype());
        }
        let summarise = self.numel() > SUMMARY_THRESHOLD;
        let mut cells = Vec::new();
        collect(self, shape, 0, 0, summarise, &mut cells);
        let width = cells.iter().flatten().map(String::len).max().unwrap_or(0);
        let mut out = String::new();
        let mut next = cells.iter();
        render(
            shape,
            0,
            summarise,
            width,
            &mut next,
            "tensor(".len(),
            &mut out,
        );
        write!(f, "tensor({out}, dtype={})", self.dtype())
    }
}

/// The indices shown along an axis of length `n`, `None` marking the `...`.
fn shown(n: usize, summarise: bool) -> Vec<Option<usize>> {
    if summarise && n > 2 * EDGE {
        (0..EDGE)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - EDGE..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    }
}

/// The printed elements in order (`None` for a `...` in the innermost axis).
fn collect(
    t: &Tensor,
    shape: &[usize],
    axis: usize,
    offset: usize,
    summarise: bool,
    cells: &mut Vec<Option<String>>,
) {
    if axis == shape.len() {
        cells.push(t.storage().display(offset));
        return;
    }
    let stride: usize = shape[axis + 1..].iter().product();
    for i in shown(shape[axis], summarise) {
        match i {
            Some(i) => collect(t, shape, axis + 1, offset + i * stride, summarise, cells),
            None if axis + 1 == shape.len() => cells.push(None),
            None => {}
        }
    }
}

/// Writes the brackets and the cells of `axis` and below, `indent` being the column of the
/// outermost bracket.
fn render<'a>(
    shape: &[usize],
    axis: usize,
    summarise: bool,
    width: usize,
    cells: &mut impl Iterator<Item = &'a Option<String>>,
    indent: usize,
    out: &mut String,
) {
    if axis == shape.len() {
        if let Some(Some(c)) = cells.next() {
            out.push_str(&format!("{c:>width$}"));
        }
        return;
    }
    out.push('[');
    let last_axis = axis + 1 == shape.len();
    for (k, i) in shown(shape[axis], summarise).into_iter().enumerate() {
        if k > 0 {
            if last_axis {
                out.push_str(", ");
            } else {
                out.push(',');
                // A blank line between blocks of rank 3 and above, as NumPy prints them.
                let blank = shape.len() - axis - 1;
                out.push_str(&"\n".repeat(blank));
                out.push_str(&" ".repeat(indent + axis + 1));
            }
        }
        match i {
            Some(_) => render(shape, axis + 1, summarise, width, cells, indent, out),
            None if last_axis => {
                cells.next();
                out.push_str("...");
            }
            None => out.push_str("..."),
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use crate::{DType, Tensor};

    #[test]
    fn small_tensors_print_whole() {
        let t = Tensor::from_vec(vec![0.1f32, 2.0, -3.5, 4.0], &[2, 2]).unwrap();
        let h = t.cast(DType::F16).unwrap();
        assert_eq!(
            h.to_string(),
            "tensor([[ 0.1,    2],\n        [-3.5,    4]], dtype=f16)"
        );
        assert_eq!(
            Tensor::scalar(lowp::bf16::from_f32(0.1)).to_string(),
            "tensor(0.1, dtype=bf16)"
        );
        assert_eq!(
            Tensor::from_vec(vec![true, false], &[2])
                .unwrap()
                .to_string(),
            "tensor([ true, false], dtype=bool)"
        );
        assert_eq!(
            Tensor::zeros(&[0, 3], DType::I64).unwrap().to_string(),
            "tensor([], shape=[0, 3], dtype=i64)"
        );
    }

    #[test]
    fn rank_three_has_blank_lines_between_blocks() {
        let t = Tensor::arange(0.0, 8.0, 1.0, DType::I32)
            .unwrap()
            .reshape(&[2, 2, 2])
            .unwrap();
        assert_eq!(
            t.to_string(),
            "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]], dtype=i32)"
        );
    }

    #[test]
    fn large_tensors_are_summarised() {
        let t = Tensor::arange(0.0, 2000.0, 1.0, DType::F32).unwrap();
        assert_eq!(
            t.to_string(),
            "tensor([   0,    1,    2, ..., 1997, 1998, 1999], dtype=f32)"
        );
        let m = t.reshape(&[40, 50]).unwrap().to_string();
        assert_eq!(m.lines().count(), 7, "{m}");
        assert!(m.contains("...,\n"), "{m}");
    }
}
