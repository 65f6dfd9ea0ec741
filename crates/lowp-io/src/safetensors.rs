//! safetensors files: the header read and checked (every error names the tensor and what is
//! wrong with it) and the output header laid out; the crate's `write_model` module converts the
//! tensors.
//!
//! The layout is the one the `safetensors` crate and the Python package write: an 8-byte
//! little-endian header length, a JSON header padded with spaces to a multiple of 8 bytes,
//! then the data of every tensor, contiguous, in the order of their offsets. The output orders
//! its tensors as they do (widest element type first, then by name), so every tensor starts
//! at a multiple of its element size; the header's serialisation is the crate's own
//! ([`Metadata`]'s `Serialize`).

use crate::error::Error;
use safetensors::Dtype;
use safetensors::tensor::{Metadata, TensorInfo};
use serde_json::Value;
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

/// The largest header the safetensors crate accepts (and lowp reads or writes).
pub const MAX_HEADER: u64 = 100_000_000;

/// One tensor of a safetensors file.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Offset of its first byte from the start of the data.
    pub begin: u64,
    /// Offset past its last byte from the start of the data.
    pub end: u64,
}

/// The parsed and checked header.
#[derive(Debug)]
pub struct Header {
    /// The tensors, in the order of their offsets.
    pub tensors: Vec<Entry>,
    /// The `__metadata__` strings.
    pub metadata: Option<HashMap<String, String>>,
    /// Offset of the data in the file (8 + the header length).
    pub data_start: u64,
}

/// Reads and checks the header of the safetensors file `file` of `len` bytes. Everything the
/// conversion will rely on is checked here: that the header fits the file, that each tensor's
/// offsets hold exactly its shape's bytes, that the tensors tile the data with no gap or
/// overlap, and that the data ends where the file ends.
pub fn read_header(file: &File, path: &Path, len: u64) -> Result<Header, Error> {
    let bad = |why: String| Error::file(format!("{}: {why}", path.display()));
    if len < 8 {
        return Err(bad(format!(
            "{len} bytes is too short for a safetensors file (it starts with an 8-byte header \
             length)"
        )));
    }
    let mut prefix = [0u8; 8];
    crate::files::read_at(file, &mut prefix, 0).map_err(|e| crate::files::read_error(path, &e))?;
    let n = u64::from_le_bytes(prefix);
    if n > MAX_HEADER {
        return Err(bad(format!(
            "the header length {n} exceeds safetensors' limit of {MAX_HEADER} bytes (not a \
             safetensors file?)"
        )));
    }
    if n > len - 8 {
        return Err(bad(format!(
            "the header length {n} runs past the end of the file ({len} bytes): truncated?"
        )));
    }
    let mut text = vec![0u8; n as usize];
    crate::files::read_at(file, &mut text, 8).map_err(|e| crate::files::read_error(path, &e))?;
    let header = parse_header(&text).map_err(bad)?;
    let data_len = header.tensors.last().map_or(0, |t| t.end);
    let held = len - 8 - n;
    if data_len != held {
        return Err(bad(if data_len > held {
            format!(
                "the header describes {data_len} bytes of data but the file holds {held}: \
                 truncated?"
            )
        } else {
            format!(
                "the file has {} bytes after the last tensor's data",
                held - data_len
            )
        }));
    }
    Ok(Header {
        data_start: 8 + n,
        ..header
    })
}

/// Parses and checks the JSON header text (see [`read_header`]); `data_start` is left 0.
fn parse_header(text: &[u8]) -> Result<Header, String> {
    let text = std::str::from_utf8(text).map_err(|e| format!("the header is not UTF-8: {e}"))?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("the header is not valid JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err("the header is not a JSON object".to_string());
    };
    let mut metadata = None;
    let mut tensors = Vec::new();
    for (name, value) in map {
        if name == "__metadata__" {
            metadata = Some(
                serde_json::from_value::<HashMap<String, String>>(value)
                    .map_err(|_| "__metadata__ must map names to strings".to_string())?,
            );
            continue;
        }
        tensors.push(parse_entry(&name, value)?);
    }
    tensors.sort_by_key(|t| (t.begin, t.end));
    let mut expected = 0u64;
    let mut previous: Option<&str> = None;
    for t in &tensors {
        let offsets = format!("data_offsets [{}, {}]", t.begin, t.end);
        if t.end < t.begin {
            return Err(format!(
                "tensor '{}': {offsets} end before they begin",
                t.name
            ));
        }
        if t.begin < expected {
            return Err(format!(
                "tensor '{}': {offsets} overlap tensor '{}'",
                t.name,
                previous.unwrap_or_default()
            ));
        }
        if t.begin > expected {
            return Err(format!(
                "tensor '{}': {offsets} leave a gap of {} bytes after the previous tensor's \
                 data",
                t.name,
                t.begin - expected
            ));
        }
        let need =
            byte_size(t.dtype, &t.shape).map_err(|why| format!("tensor '{}': {why}", t.name))?;
        if t.end - t.begin != need {
            return Err(format!(
                "tensor '{}': {offsets} hold {} bytes but {} of shape {:?} needs {need}",
                t.name,
                t.end - t.begin,
                t.dtype,
                t.shape
            ));
        }
        expected = t.end;
        previous = Some(&t.name);
    }
    // The crate's own checks, as a second opinion: nothing it would refuse gets through.
    let infos = tensors.iter().map(|t| (t.name.clone(), info(t))).collect();
    Metadata::new(metadata.clone(), infos)
        .map_err(|e| format!("the safetensors crate refuses the header: {e}"))?;
    Ok(Header {
        tensors,
        metadata,
        data_start: 0,
    })
}

/// One tensor's entry of the header.
fn parse_entry(name: &str, value: Value) -> Result<Entry, String> {
    let dtype = value.get("dtype").cloned();
    let info: TensorInfo = serde_json::from_value(value).map_err(|e| match dtype {
        Some(Value::String(d))
            if serde_json::from_value::<Dtype>(Value::String(d.clone())).is_err() =>
        {
            format!("tensor '{name}': unsupported dtype '{d}'")
        }
        _ => format!("tensor '{name}': invalid entry ({e})"),
    })?;
    Ok(Entry {
        name: name.to_string(),
        dtype: info.dtype,
        shape: info.shape,
        begin: info.data_offsets.0 as u64,
        end: info.data_offsets.1 as u64,
    })
}

/// Bytes of a tensor of `dtype` and `shape`, or why there is no such number.
pub fn byte_size(dtype: Dtype, shape: &[usize]) -> Result<u64, String> {
    let elements = shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .ok_or_else(|| format!("shape {shape:?} has more elements than fit in 64 bits"))?;
    let bits = elements
        .checked_mul(dtype.bitsize() as u64)
        .ok_or_else(|| format!("shape {shape:?} of {dtype} is too large"))?;
    if bits % 8 != 0 {
        return Err(format!(
            "{elements} elements of {dtype} are not a whole number of bytes"
        ));
    }
    Ok(bits / 8)
}

/// The crate's [`TensorInfo`] of an entry.
fn info(t: &Entry) -> TensorInfo {
    TensorInfo {
        dtype: t.dtype,
        shape: t.shape.clone(),
        data_offsets: (t.begin as usize, t.end as usize),
    }
}

/// The header of a safetensors file holding `entries` (name, dtype, shape), ordered as the
/// crate orders them (widest type first, then by name). Gives the header's bytes (length
/// prefix included; the data starts right after them) and each tensor's offset from the
/// start of the data.
pub fn layout(
    metadata: Option<HashMap<String, String>>,
    mut entries: Vec<(String, Dtype, Vec<usize>)>,
) -> Result<(Vec<u8>, HashMap<String, u64>), Error> {
    entries.sort_by(|a, b| b.1.bitsize().cmp(&a.1.bitsize()).then(a.0.cmp(&b.0)));
    let mut offset = 0u64;
    let mut places = HashMap::new();
    let mut infos = Vec::new();
    for (name, dtype, shape) in entries {
        let size = byte_size(dtype, &shape).map_err(Error::file)?;
        places.insert(name.clone(), offset);
        let end = offset + size;
        infos.push((
            name,
            TensorInfo {
                dtype,
                shape,
                data_offsets: (offset as usize, end as usize),
            },
        ));
        offset = end;
    }
    let metadata = Metadata::new(metadata, infos)
        .map_err(|e| Error::file(format!("cannot lay out the output header: {e}")))?;
    let mut json = serde_json::to_vec(&metadata)
        .map_err(|e| Error::file(format!("cannot write the output header: {e}")))?;
    json.resize(json.len().next_multiple_of(8), b' ');
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend(json);
    Ok((bytes, places))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(json: &str) -> Result<Header, String> {
        parse_header(json.as_bytes())
    }

    #[test]
    fn good_headers_parse_in_offset_order() {
        let h = header(
            r#"{"__metadata__":{"format":"pt"},
                "b":{"dtype":"F32","shape":[2],"data_offsets":[2,10]},
                "a":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}"#,
        )
        .unwrap();
        let names: Vec<&str> = h.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(h.metadata.unwrap()["format"], "pt");
    }

    #[test]
    fn bad_headers_name_the_tensor_and_the_problem() {
        let cases = [
            (
                r#"{"w":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}"#,
                "tensor 'w': unsupported dtype 'F128'",
            ),
            (
                r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
                "tensor 'w': data_offsets [0, 4] hold 4 bytes but F32 of shape [2] needs 8",
            ),
            (
                r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#,
                "tensor 'w': data_offsets [4, 8] leave a gap of 4 bytes",
            ),
            (
                r#"{"v":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}"#,
                "tensor 'w': data_offsets [2, 6] overlap tensor 'v'",
            ),
            (
                r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}"#,
                "tensor 'w': data_offsets [4, 0] end before",
            ),
            (
                r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#,
                "tensor 'w': shape",
            ),
            (
                r#"{"w":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#,
                "tensor 'w': 3 elements of F4",
            ),
            (
                r#"{"w":{"dtype":"F32","shape":[1]}}"#,
                "tensor 'w': invalid entry",
            ),
            (r#"{"w":[1,2]}"#, "tensor 'w': invalid entry"),
            (
                r#"{"__metadata__":{"a":1}}"#,
                "__metadata__ must map names to strings",
            ),
            (r#"[1]"#, "not a JSON object"),
            (r#"{"w":"#, "not valid JSON"),
        ];
        for (json, want) in cases {
            let err = header(json).unwrap_err();
            assert!(err.contains(want), "{json}: {err}");
        }
        assert!(parse_header(&[0xff, 0xfe]).unwrap_err().contains("UTF-8"));
    }
}
