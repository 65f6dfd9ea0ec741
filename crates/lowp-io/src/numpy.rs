//! NumPy files: `.npy` (one array) and `.npz` (a zip archive of `.npy` members, stored by
//! `np.savez` or deflated by `np.savez_compressed`).
//!
//! The header is parsed by [`crate::npy_header`] in one linear pass, after its length is
//! checked against NumPy's limit and the file's; the data is then converted in bulk like any
//! tensor, byte-swapped first when big-endian (`>f4`). C and Fortran order need nothing:
//! conversion is element-wise, and the output header keeps the order and shape. Converted
//! arrays are written little-endian.
//! NumPy has no bf16 or FP8 dtype (ml_dtypes arrays are saved as raw `V2`/`V1` bytes that
//! do not say what they hold), so those targets are refused for NumPy output.

use crate::error::Error;
use crate::files;
use crate::float_type::FloatType;
use crate::npy_header::{self, Header, TypeStr};
use crate::options::Options;
use crate::pipeline::{self, Files, Segment};
use crate::plan::Plan;
use crate::progress::Control;
use crate::report::TensorReport;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// A parsed and checked `.npy` header.
pub struct Array {
    /// What the header says.
    header: Header,
    /// Bytes before the data.
    data_start: u64,
    /// Elements (the product of the shape).
    elements: u64,
    /// Bytes per element, if fixed (not for pickled objects).
    item_size: Option<u64>,
    /// The float type, and whether its bytes need swapping, if it is one of ours.
    float: Option<(FloatType, bool)>,
    /// The dtype as NumPy writes it (`<f4`), or `structured`.
    descr: String,
}

/// Reads and checks a `.npy` header from `r`; `available` is the size of the whole `.npy`
/// data when known.
fn read_array(r: &mut dyn Read, available: u64) -> Result<Array, String> {
    let mut pre = [0u8; 12];
    r.read_exact(&mut pre[..8])
        .map_err(|_| "too short for a .npy file".to_string())?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".to_string());
    }
    let len_bytes = match (pre[6], pre[7]) {
        (1, 0) => 2,
        (2, 0) | (3, 0) => 4,
        (a, b) => return Err(format!("unsupported .npy version {a}.{b}")),
    };
    r.read_exact(&mut pre[8..8 + len_bytes])
        .map_err(|_| "the .npy header is truncated".to_string())?;
    let mut len = [0u8; 4];
    len[..len_bytes].copy_from_slice(&pre[8..8 + len_bytes]);
    let header_len = u32::from_le_bytes(len) as u64;
    let data_start = 8 + len_bytes as u64 + header_len;
    npy_header::check_len(header_len)?;
    if data_start > available {
        return Err(format!(
            "the .npy header length {header_len} runs past the end of the data ({available} \
             bytes): truncated?"
        ));
    }
    let mut text = vec![0u8; header_len as usize];
    r.read_exact(&mut text)
        .map_err(|_| "the .npy header is truncated".to_string())?;
    let header = npy_header::parse(&text)?;
    let elements = header
        .shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| format!("shape {:?} has too many elements", header.shape))?;
    let item_size = header.item_size;
    let float = header.plain.as_ref().and_then(float_of);
    let descr = header.descr.clone();
    if let Some(size) = item_size {
        let need = elements
            .checked_mul(size)
            .ok_or_else(|| format!("shape {:?} of {descr} is too large", header.shape))?;
        let held = available - data_start;
        if need != held {
            return Err(format!(
                "the array data is {held} bytes but {descr} of shape {:?} needs {need}{}",
                header.shape,
                if held < need { ": truncated?" } else { "" }
            ));
        }
    }
    Ok(Array {
        header,
        data_start,
        elements,
        item_size,
        float,
        descr,
    })
}

/// Our float type for a NumPy type string, and whether its bytes need swapping.
fn float_of(ts: &TypeStr) -> Option<(FloatType, bool)> {
    if ts.kind != 'f' {
        return None;
    }
    let t = FloatType::from_numpy_size(ts.size?)?;
    let swap = match ts.byte_order {
        '<' => cfg!(target_endian = "big"),
        '>' => cfg!(target_endian = "little"),
        _ => false,
    };
    Some((t, swap))
}

/// The `.npy` header of `array` stored as the little-endian float type `to`.
fn output_header(array: &Array, to: FloatType) -> Vec<u8> {
    let descr = format!("<f{}", to.size());
    npy_header::write(&descr, array.header.fortran_order, &array.header.shape)
}

/// The report of an array.
fn report(
    name: &str,
    array: &Array,
    plan: &Plan,
    stats: Option<lowp::fit::FitStats>,
    // The factor the values were multiplied by; the report shows its inverse, as stored.
    scale: Option<f64>,
) -> TensorReport {
    let bytes_in = array.elements * array.item_size.unwrap_or(0);
    let (to, bytes_out) = match plan.target {
        Some(t) if t.in_numpy() => (format!("<f{}", t.size()), array.elements * t.size() as u64),
        // A dry run to a type NumPy cannot name.
        Some(t) => (t.name().to_string(), array.elements * t.size() as u64),
        None => (array.descr.clone(), bytes_in),
    };
    TensorReport {
        name: name.to_string(),
        shape: array.header.shape.clone(),
        from: array.descr.clone(),
        to,
        target: plan.target,
        stats,
        scale: scale.map(|s| f64::from(crate::block_convert::stored_scale(s))),
        note: plan.note.clone(),
        bytes_in,
        bytes_out,
        quant: None,
        scale_check: None,
    }
}

/// Converts (or, with no output, measures) a `.npy` file of `len` bytes.
pub fn convert_npy(
    opts: &Options,
    input: &File,
    len: u64,
    output: Option<(&File, &Path)>,
    progress: Control<'_>,
) -> Result<Vec<TensorReport>, Error> {
    let bad = |why: String| Error::file(format!("{}: {why}", opts.input.display()));
    let mut reader = io::BufReader::new(input);
    let array = read_array(&mut reader, len).map_err(bad)?;
    let name = opts
        .input
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let plan = opts.plan(&name, array.float.map(|f| f.0), output.is_some());
    let files = Files {
        input: (input, &opts.input),
        output,
        progress,
    };
    let (segment, swap) = match plan.target {
        Some(to) => {
            let mut data_out = 0;
            if let Some((file, path)) = output {
                let out_header = output_header(&array, to);
                files::write_at(file, &out_header, 0).map_err(|e| files::write_error(path, &e))?;
                data_out = out_header.len() as u64;
            }
            let segment = Segment {
                input: array.data_start,
                output: data_out,
                bytes: len - array.data_start,
                width: 1,
                action: pipeline::Action::Copy,
            };
            (segment, array.float.is_some_and(|f| f.1))
        }
        // Kept: the whole file, header included, byte for byte.
        None => {
            let segment = Segment {
                input: 0,
                output: 0,
                bytes: len,
                width: 1,
                action: pipeline::Action::Copy,
            };
            (segment, false)
        }
    };
    let (stats, scale) =
        crate::run_tensor::run_tensor(opts, &files, segment, &plan, swap, array.elements)
            .map_err(|e| e.about(&format!("array '{name}'")))?;
    Ok(vec![report(&name, &array, &plan, stats, scale)])
}

/// What a failed read of a member's data means. The zip reader reports a CRC-32 that does not
/// match the data, and a broken deflate stream, as invalid data.
fn member_read_error(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::InvalidData {
        format!(
            "the data is corrupt ({e}): it does not match the archive's CRC-32 or cannot be \
             inflated"
        )
    } else {
        format!("cannot read the data: {e}")
    }
}

/// Reads the rest of a member and drops it: the zip reader checks the CRC-32 at the end.
fn read_to_end(member: &mut dyn Read) -> Result<(), String> {
    io::copy(member, &mut io::sink())
        .map(drop)
        .map_err(|e| member_read_error(&e))
}

/// Converts (or, with no output, measures) an `.npz` archive: each `.npy` member converted or
/// copied as it is (compressed members stay compressed, with the same method); other members
/// copied. Every member is read to its end, copied ones too, so a CRC-32 that does not match
/// is an error naming the member, never a damaged member passed on.
pub fn convert_npz(
    opts: &Options,
    input: &File,
    output: Option<(&File, &Path)>,
    progress: Control<'_>,
) -> Result<Vec<TensorReport>, Error> {
    let path = &opts.input;
    let zip_error = |e: zip::result::ZipError| Error::file(format!("{}: {e}", path.display()));
    let reader = input.try_clone().map_err(|e| files::read_error(path, &e))?;
    let mut archive = zip::ZipArchive::new(io::BufReader::new(reader)).map_err(zip_error)?;
    let mut writer = match output {
        Some((file, out_path)) => Some((
            zip::ZipWriter::new(io::BufWriter::new(
                file.try_clone()
                    .map_err(|e| files::write_error(out_path, &e))?,
            )),
            out_path,
        )),
        None => None,
    };
    let mut reports = Vec::new();
    for i in 0..archive.len() {
        let (member, compression, size, modified) = {
            let raw = archive.by_index_raw(i).map_err(zip_error)?;
            let name = raw.name().map_err(zip_error)?.into_owned();
            (name, raw.compression(), raw.size(), raw.last_modified())
        };
        let Some(name) = member.strip_suffix(".npy").map(str::to_string) else {
            let mut data = archive.by_index(i).map_err(zip_error)?;
            read_to_end(&mut data)
                .map_err(|e| Error::file(format!("{}: member '{member}': {e}", path.display())))?;
            drop(data);
            if let Some((w, _)) = writer.as_mut() {
                let raw = archive.by_index_raw(i).map_err(zip_error)?;
                w.raw_copy_file(raw).map_err(zip_error)?;
            }
            continue;
        };
        let about = |why: String| Error::file(format!("{}: array '{name}': {why}", path.display()));
        let read_err = |e: &io::Error| about(member_read_error(e));
        let mut data = archive.by_index(i).map_err(zip_error)?;
        let array = read_array(&mut data, size).map_err(about)?;
        let plan = opts.plan(&name, array.float.map(|f| f.0), output.is_some());
        let (Some(to), Some((from, swap))) = (plan.target, array.float) else {
            // Kept as it is, compressed bytes and all: read through first, so that a member
            // whose data does not match its CRC-32 is refused, not copied into the output.
            read_to_end(&mut data).map_err(about)?;
            drop(data);
            if let Some((w, _)) = writer.as_mut() {
                let raw = archive.by_index_raw(i).map_err(zip_error)?;
                w.raw_copy_file(raw).map_err(zip_error)?;
            }
            progress.add(size);
            reports.push(report(&name, &array, &plan, None, None));
            continue;
        };
        progress.tensor(&name);
        let scale = if plan.scaled {
            let amax =
                pipeline::stream_amax(&mut data, array.elements, from, swap, progress, &read_err)?;
            drop(data);
            data = archive.by_index(i).map_err(zip_error)?;
            read_array(&mut data, size).map_err(about)?;
            Some(crate::block_convert::fp8_scale(to, amax))
        } else {
            None
        };
        let rounding = crate::block_convert::Rounding {
            saturate: opts.saturate,
            scale: scale.unwrap_or(1.0),
        };
        let mut sink = None;
        if let Some((w, out_path)) = writer.as_mut() {
            let out_header = output_header(&array, to);
            let out_size = out_header.len() as u64 + array.elements * to.size() as u64;
            let mut options = zip::write::SimpleFileOptions::default()
                .compression_method(compression)
                .large_file(out_size >= u32::MAX as u64);
            if let Some(time) = modified {
                options = options.last_modified_time(time);
            }
            w.start_file(member.as_str(), options).map_err(zip_error)?;
            w.write_all(&out_header)
                .map_err(|e| files::write_error(out_path, &e))?;
            sink = Some((w, *out_path));
        }
        let out_path = sink.as_ref().map(|s| s.1);
        let write_err = |e: &io::Error| files::write_error(out_path.unwrap_or(path), e);
        let stats = pipeline::convert_stream(
            &mut data,
            sink.map(|(w, _)| w as &mut dyn Write),
            array.elements,
            from,
            to,
            swap,
            rounding,
            progress,
            &read_err,
            &write_err,
        )?;
        // Reading to the end checks the member's CRC.
        let mut rest = [0u8; 1];
        match data.read(&mut rest) {
            Ok(0) => {}
            Ok(_) => {
                return Err(about(
                    "the member holds more data than its header describes".into(),
                ));
            }
            Err(e) => return Err(read_err(&e)),
        }
        reports.push(report(&name, &array, &plan, Some(stats), scale));
    }
    if let Some((w, out_path)) = writer {
        let mut inner = w.finish().map_err(zip_error)?;
        inner
            .flush()
            .map_err(|e| files::write_error(out_path, &e))?;
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FloatType;

    /// A `.npy` file of `descr`, `shape` and `data`.
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((h.len() as u16).to_le_bytes());
        out.extend(h.as_bytes());
        out.extend(data);
        out
    }

    fn parse(bytes: &[u8]) -> Result<Array, String> {
        read_array(&mut &bytes[..], bytes.len() as u64)
    }

    #[test]
    fn reads_floats_in_both_byte_orders() {
        let a = parse(&npy(
            "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 1), }",
            &[0; 8],
        ))
        .unwrap();
        assert_eq!(
            a.float,
            Some((FloatType::F32, cfg!(target_endian = "little")))
        );
        assert_eq!(a.elements, 2);
        assert!(a.header.fortran_order);
        let h = parse(&npy(
            "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }",
            &[0; 6],
        ))
        .unwrap();
        assert_eq!(h.float.unwrap().0, FloatType::F16);
        let out = output_header(&h, FloatType::F32);
        assert_eq!(out.len() % 64, 0);
        let back = parse(&[out, vec![0; 12]].concat()).unwrap();
        assert_eq!(back.descr, "<f4");
        assert_eq!(back.header.shape, [3]);
        let ints = parse(&npy(
            "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
            &[0; 8],
        ))
        .unwrap();
        assert_eq!((ints.float, ints.elements), (None, 1));
    }

    #[test]
    fn bad_headers_are_errors() {
        let f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (npy(f4, &[0; 7]), "needs 8: truncated?"),
            (npy(f4, &[0; 9]), "is 9 bytes"),
            (
                b"\x93NUMPY\x09\x00".to_vec(),
                "unsupported .npy version 9.0",
            ),
            (b"\x93NUMPX\x01\x00\x10\x00".to_vec(), "magic"),
            (b"\x93NUMPY\x01\x00\x00\x10{".to_vec(), "runs past the end"),
            (
                b"\x93NUMPY\x01\x00\xff\xff{".to_vec(),
                "the .npy header is 65535 bytes, more than the 10000 NumPy accepts",
            ),
            (
                npy(
                    &format!("{{'descr': {}'<f4'{}}}", "[".repeat(40), "]".repeat(40)),
                    &[],
                ),
                "nest deeper",
            ),
            (
                npy(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
                    &[],
                ),
                "too many elements",
            ),
            (
                npy("{'descr': '<f4', 'shape': (2,), }", &[0; 8]),
                "fortran_order",
            ),
            (npy("not python", &[]), "invalid .npy header"),
        ];
        for (bytes, want) in cases {
            let err = parse(&bytes).err().unwrap_or_default();
            assert!(err.contains(want), "{want}: {err}");
        }
    }
}
