#!/usr/bin/env python3
"""Writes the fuzz seed corpus, fuzz/corpus/TARGET/NAME, from scratch.

Each file is a small malformed (or, as a seed for the fuzzer, well-formed) input of the
kinds a hostile input takes: truncations, lying lengths, bad offsets, overflowing shapes, bad zip
archives, nested-bracket .npy headers, huge headers, junk, empty files, bad CRCs, bad UTF-8
in headers, and extreme decimal strings. The targets are those of fuzz/fuzz_targets/ and
crates/lowp-io/tests/fuzz_feed/mod.rs (which says what each does with the bytes);
crates/lowp-io/tests/fuzz_corpus.rs replays every file. Standard library only; the output is
deterministic, so rerunning it leaves git clean.

    python3 tools/make_fuzz_corpus.py      # from the repository root
"""

import io
import json
import os
import shutil
import struct
import zipfile
import warnings
import zlib

warnings.filterwarnings("ignore", "Duplicate name")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")


def put(target, name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = os.path.join(ROOT, target, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- safetensors


def st(header, data=b"", length=None):
    """A safetensors file: 8-byte little-endian header length, JSON header, data."""
    if isinstance(header, (dict, list)):
        header = json.dumps(header, separators=(",", ":"))
    if isinstance(header, str):
        header = header.encode("utf-8")
    n = len(header) if length is None else length
    return struct.pack("<Q", n) + header + data


def tensor(dtype, shape, start, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [start, end]}


def safetensors():
    t = "safetensors"
    f32x4 = struct.pack("<4f", 1.0, -2.5, 0.1, 65504.0)
    good = st({"w": tensor("F32", [2, 2], 0, 16)}, f32x4)
    put(t, "ok_f32", good)
    put(t, "ok_bf16_meta", st({"__metadata__": {"format": "pt"}, "b": tensor("BF16", [2], 0, 4)}, b"\x80\x3f\x00\xc0"))
    put(t, "ok_empty_tensor", st({"e": tensor("F16", [0, 3], 0, 0)}))
    put(t, "empty", b"")
    put(t, "junk", bytes(range(256)) * 2)
    put(t, "len_only_4_bytes", b"\x10\x00\x00\x00")
    put(t, "len_zero", st(b"", length=0))
    put(t, "len_huge", st({"w": tensor("F32", [1], 0, 4)}, b"\0" * 4, length=2**63 + 5))
    put(t, "len_past_end", st({"w": tensor("F32", [1], 0, 4)}, b"\0" * 4, length=4096))
    put(t, "len_short", st({"w": tensor("F32", [1], 0, 4)}, b"\0" * 4, length=10))
    for cut in (9, 20, len(good) - 1):
        put(t, f"truncated_at_{cut}", good[:cut])
    put(t, "header_not_json", st("{not json at all", b""))
    put(t, "header_bad_utf8", st(b'{"w\xff\xfe":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 4))
    put(t, "header_array", st("[1,2,3]"))
    put(t, "header_nested_json", st("[" * 2000 + "]" * 2000))
    put(t, "header_huge_spaces", st("{" + " " * 20000 + "}"))
    put(t, "offsets_past_end", st({"w": tensor("F32", [2, 2], 0, 16)}, f32x4[:8]))
    put(t, "offsets_reversed", st({"w": tensor("F32", [1], 8, 4)}, f32x4))
    put(t, "offsets_huge", st({"w": tensor("F32", [1], 2**64 - 4, 2**64)}, f32x4))
    put(t, "offsets_overlap", st({"a": tensor("F32", [2], 0, 8), "b": tensor("F32", [2], 4, 12)}, f32x4))
    put(t, "offsets_gap", st({"a": tensor("F32", [1], 0, 4), "b": tensor("F32", [1], 8, 12)}, f32x4[:12]))
    put(t, "offsets_not_numbers", st({"w": {"dtype": "F32", "shape": [1], "data_offsets": ["0", "4"]}}, f32x4))
    put(t, "shape_overflow", st({"w": tensor("F32", [2**62, 2**62], 0, 16)}, f32x4))
    put(t, "shape_product_overflow_u64", st({"w": tensor("F32", [2**32, 2**32, 2**32], 0, 16)}, f32x4))
    put(t, "shape_negative", st('{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', f32x4))
    put(t, "shape_mismatch", st({"w": tensor("F32", [3], 0, 16)}, f32x4))
    put(t, "shape_deep", st({"w": tensor("F32", [1] * 1000, 0, 4)}, f32x4[:4]))
    put(t, "dtype_unknown", st({"w": tensor("F33", [1], 0, 4)}, f32x4[:4]))
    put(t, "dtype_missing", st({"w": {"shape": [1], "data_offsets": [0, 4]}}, f32x4[:4]))
    put(t, "metadata_not_strings", st({"__metadata__": {"a": [1, 2]}, "w": tensor("F32", [1], 0, 4)}, f32x4[:4]))
    put(t, "duplicate_names", st('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f32x4[:8]))
    put(t, "name_empty", st({"": tensor("F32", [1], 0, 4)}, f32x4[:4]))
    put(t, "nan_inf_values", st({"w": tensor("F32", [4], 0, 16)}, struct.pack("<4I", 0x7FC00000, 0x7F800000, 0xFF800000, 0x00000001)))
    # Block-quantized layouts (crates/lowp-io/src/layouts.rs), decoded when converted to f32.
    e4m3 = bytes([0x38, 0xB8, 0x7E, 0x7F, 0x00, 0x80, 0x01, 0x40])
    put(t, "q_fp8_block_ok", st({"w": tensor("F8_E4M3", [2, 4], 0, 8), "w_scale_inv": tensor("F32", [1, 1], 8, 12)}, e4m3 + struct.pack("<f", 0.5)))
    put(t, "q_fp8_block_bad_grid", st({"w": tensor("F8_E4M3", [2, 4], 0, 8), "w_scale_inv": tensor("F32", [2, 2], 8, 24)}, e4m3 + b"\0" * 16))
    put(t, "q_fp8_block_scale_nan", st({"w": tensor("F8_E4M3", [2, 4], 0, 8), "w_scale_inv": tensor("F32", [1, 1], 8, 12)}, e4m3 + struct.pack("<I", 0x7FC00000)))
    put(t, "q_mxfp8_ok", st({"w": tensor("F8_E4M3", [2, 4], 0, 8), "w_scale": tensor("U8", [2, 1], 8, 10)}, e4m3 + bytes([127, 255])))
    put(t, "q_mxfp8_bad_scale_shape", st({"w": tensor("F8_E4M3", [2, 4], 0, 8), "w_scale": tensor("U8", [3], 8, 11)}, e4m3 + bytes([127, 1, 2])))
    put(t, "q_per_tensor_ok", st({"w": tensor("F8_E4M3", [2, 4], 0, 8), "w_scale": tensor("F32", [], 8, 12)}, e4m3 + struct.pack("<f", 2.0)))
    put(t, "q_mxfp4_ok", st({"w.blocks": tensor("U8", [2, 1, 16], 0, 32), "w.scales": tensor("U8", [2, 1], 32, 34)}, bytes(range(32)) + bytes([127, 130])))
    put(t, "q_mxfp4_blocks_alone", st({"w.blocks": tensor("U8", [2, 1, 16], 0, 32)}, bytes(range(32))))
    put(t, "q_mxfp4_hf_names", st({"w_blocks": tensor("U8", [1, 1, 16], 0, 16), "w_scales": tensor("U8", [1, 1], 16, 17)}, bytes(range(16)) + bytes([255])))
    put(t, "q_mxfp4_bad_shape_meta", st({"__metadata__": {"lowp.shape.w": "[2, 99999999999]"}, "w.blocks": tensor("U8", [2, 1, 16], 0, 32), "w.scales": tensor("U8", [2, 1], 32, 34)}, bytes(range(32)) + bytes([127, 130])))
    put(t, "q_mxfp4_meta_junk", st({"__metadata__": {"lowp.shape.w": "[[[[["}, "w.blocks": tensor("U8", [1, 1, 16], 0, 16), "w.scales": tensor("U8", [1, 1], 16, 17)}, bytes(16) + bytes([127])))
    put(t, "q_nvfp4_ok", st({"w": tensor("U8", [2, 8], 0, 16), "w_scale": tensor("F8_E4M3", [2, 1], 16, 18), "w_scale_2": tensor("F32", [], 18, 22)}, bytes(range(16)) + bytes([0x38, 0x7F]) + struct.pack("<f", 0.25)))
    put(t, "q_nvfp4_no_scale_2", st({"w": tensor("U8", [2, 8], 0, 16), "w_scale": tensor("F8_E4M3", [2, 1], 16, 18)}, bytes(range(16)) + bytes([0x38, 0x38])))
    put(t, "q_nvfp4_wrong_length", st({"w": tensor("U8", [2, 5], 0, 10), "w_scale": tensor("F8_E4M3", [2, 1], 10, 12), "w_scale_2": tensor("F32", [], 12, 16)}, bytes(10) + bytes([0x38, 0x38]) + struct.pack("<f", 1.0)))
    put(t, "q_nvfp4_scale_2_inf", st({"w": tensor("U8", [1, 8], 0, 8), "w_scale": tensor("F8_E4M3", [1, 1], 8, 9), "w_scale_2": tensor("F32", [], 9, 13)}, bytes(range(8)) + bytes([0x7E]) + struct.pack("<I", 0x7F800000)))


# ---------------------------------------------------------------- .npy


def npy_header(text, version=(1, 0), pad=True):
    if isinstance(text, str):
        text = text.encode("latin-1")
    size = {1: 2, 2: 4, 3: 4}.get(version[0], 2)
    if pad:
        total = 6 + 2 + size + len(text) + 1
        text = text + b" " * ((-total) % 64) + b"\n"
    fmt = "<H" if size == 2 else "<I"
    return b"\x93NUMPY" + bytes(version) + struct.pack(fmt, len(text)) + text


def npy(descr="'<f4'", shape="(4,)", fortran="False", data=None, **kw):
    head = npy_header("{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape), **kw)
    return head + (struct.pack("<4f", 1.0, -2.5, 0.1, 3.0) if data is None else data)


def npy_files():
    t = "npy"
    good = npy()
    put(t, "ok_f4", good)
    put(t, "ok_f2_2d", npy("'<f2'", "(2, 2)", data=b"\x00\x3c" * 4))
    put(t, "ok_fortran", npy("'<f4'", "(2, 2)", "True", data=b"\0" * 16))
    put(t, "ok_big_endian", npy("'>f4'", "(4,)", data=b"\x3f\x80\0\0" * 4))
    put(t, "ok_scalar", npy("'<f8'", "()", data=struct.pack("<d", 1.5)))
    put(t, "ok_v2", npy(version=(2, 0)))
    put(t, "v3_utf8_comment", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } # ü".encode(), version=(3, 0)) + b"\0" * 4)
    put(t, "empty", b"")
    put(t, "junk", b"\x00\xffnot numpy\n" * 20)
    put(t, "magic_only", b"\x93NUMPY")
    put(t, "magic_version_only", b"\x93NUMPY\x01\x00")
    put(t, "bad_version", npy(version=(9, 9)))
    for cut in (9, 30, len(good) - 1):
        put(t, f"truncated_at_{cut}", good[:cut])
    put(t, "header_len_past_end", b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")
    put(t, "header_len_v2_huge", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'")
    put(t, "header_len_zero", b"\x93NUMPY\x01\x00\x00\x00" + b"\0" * 16)
    put(t, "header_over_10000", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" + " " * 12000, version=(2, 0)) + b"\0" * 4)
    # The header a backtracking parser takes exponential time on: brackets nested in 'descr'.
    for depth in (20, 22, 30, 32, 33, 64):
        put(t, f"nested_descr_{depth}", npy("[" * depth + "]" * depth, data=b""))
    put(t, "nested_descr_unclosed_200", npy("[" * 200, data=b""))
    put(t, "nested_shape_parens", npy(shape="(" * 40 + ")" * 40, data=b""))
    put(t, "nested_dict", npy("{" * 40 + "}" * 40, data=b""))
    put(t, "nested_mixed", npy("[(" * 20 + ")]" * 20, data=b""))
    put(t, "header_bad_utf8_v3", npy_header(b"{'descr': '<f4\xff\xfe', 'fortran_order': False, 'shape': (1,), }", version=(3, 0)) + b"\0" * 4)
    put(t, "header_latin1_v1", npy_header(b"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), '\xe9': 1, }") + b"\0" * 4)
    put(t, "header_no_newline", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", pad=False) + b"\0" * 16)
    put(t, "header_not_dict", npy_header("[1, 2, 3]"))
    put(t, "header_unterminated_string", npy_header("{'descr': '<f4, 'fortran_order': False, 'shape': (4,), }"))
    put(t, "header_missing_shape", npy_header("{'descr': '<f4', 'fortran_order': False, }") + b"\0" * 16)
    put(t, "header_extra_key", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }") + b"\0" * 4)
    put(t, "header_duplicate_key", npy_header("{'descr': '<f4', 'descr': '<f2', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 4)
    put(t, "shape_overflow", npy(shape="(4611686018427387904, 4611686018427387904)", data=b""))
    put(t, "shape_huge_int", npy(shape="(" + "9" * 400 + ",)", data=b""))
    put(t, "shape_negative", npy(shape="(-4,)"))
    put(t, "shape_float", npy(shape="(4.0,)"))
    put(t, "shape_many_dims", npy(shape="(" + "1, " * 2000 + ")", data=b"\0" * 4))
    put(t, "shape_mismatch_short_data", npy(shape="(100,)"))
    put(t, "shape_mismatch_long_data", npy(shape="(1,)"))
    put(t, "fortran_not_bool", npy(fortran="'yes'"))
    for d in ("'|V4'", "'<c8'", "'|O'", "'<U4'", "'<i4'", "'|b1'", "'<f16'", "'<f3'", "'f4'", "''", "[('a', '<f4')]", "None"):
        name = "".join(c if c.isalnum() else "_" for c in d)
        put(t, f"descr_{name}", npy(d))


# ---------------------------------------------------------------- .npz


def zip_of(members, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = compression
            z.writestr(info, data)
    return buf.getvalue()


def npz_files():
    t = "npz"
    a = npy()
    b = npy("'<f2'", "(2,)", data=b"\x00\x3c\x00\xc0")
    good = zip_of([("a.npy", a), ("b.npy", b)])
    put(t, "ok_stored", good)
    put(t, "ok_deflated", zip_of([("a.npy", a), ("b.npy", b)], zipfile.ZIP_DEFLATED))
    put(t, "ok_no_members", zip_of([]))
    put(t, "empty", b"")
    put(t, "junk", b"PK\x03\x04" + bytes(range(200)))
    put(t, "not_zip", a)
    for cut in (4, 30, len(good) // 2, len(good) - 10):
        put(t, f"truncated_at_{cut}", good[:cut])
    # Bad CRC in both the local header and the central directory: converted and copied.
    crc = struct.pack("<I", zlib.crc32(a))
    put(t, "bad_crc", good.replace(crc, struct.pack("<I", zlib.crc32(a) ^ 1)))
    put(t, "bad_crc_deflated", zip_of([("a.npy", a)], zipfile.ZIP_DEFLATED).replace(crc, b"\0\0\0\0"))
    put(t, "data_flipped", good.replace(a[-4:], b"\xde\xad\xbe\xef", 1))
    # A central directory that points into the wrong place.
    end = good.rfind(b"PK\x05\x06")
    put(t, "eocd_bad_offset", good[: end + 16] + struct.pack("<I", 0xFFFFFF00) + good[end + 20 :])
    put(t, "eocd_bad_count", good[: end + 8] + struct.pack("<HH", 0xFFFF, 0xFFFF) + good[end + 12 :])
    put(t, "eocd_only", b"PK\x05\x06" + b"\0" * 18)
    put(t, "member_not_npy", zip_of([("a.npy", b"hello, not numpy")]))
    put(t, "member_not_named_npy", zip_of([("a.txt", a)]))
    put(t, "member_nested_descr_32", zip_of([("a.npy", npy("[" * 32 + "]" * 32, data=b""))]))
    put(t, "member_header_over_10000", zip_of([("a.npy", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" + " " * 12000, version=(2, 0)) + b"\0" * 4)], zipfile.ZIP_DEFLATED))
    put(t, "member_shape_overflow", zip_of([("a.npy", npy(shape="(4611686018427387904, 4611686018427387904)", data=b""))]))
    put(t, "member_truncated", zip_of([("a.npy", a[:-3])]))
    put(t, "member_dir", zip_of([("a/", b""), ("a.npy", a)]))
    put(t, "member_path_traversal", zip_of([("../../a.npy", a)]))
    put(t, "member_name_bad_utf8", good.replace(b"a.npy", b"\xff.npy"))
    put(t, "duplicate_members", zip_of([("a.npy", a), ("a.npy", b)]))
    # 1 MiB of zeros deflates to about 1 KiB: a member far bigger than its archive.
    put(t, "deflate_ratio", zip_of([("z.npy", npy(shape="(262144,)", data=b"\0" * (1 << 20)))], zipfile.ZIP_DEFLATED))
    # A deflated member whose stored size lies: the stream is cut short.
    z = zip_of([("a.npy", a * 8)], zipfile.ZIP_DEFLATED)
    put(t, "deflate_cut", z[:40] + z[60:])


# ---------------------------------------------------------------- quantized rows


def quant_files():
    """The quant_* targets read rows (1 byte), cols (2 bytes), tensor scale (f32), data, scales."""

    def head(rows, cols, scale=1.0):
        return bytes([(rows - 1) % 4]) + struct.pack("<H", cols - 1) + struct.pack("<f", scale)

    specs = {
        # scheme: (data bytes per row for cols, scale bytes for rows x cols)
        "quant_fp8_block": (lambda c: c, lambda r, c: 4 * ((c + 127) // 128) * ((r + 127) // 128)),
        "quant_mxfp8": (lambda c: c, lambda r, c: r * ((c + 31) // 32)),
        "quant_mxfp4": (lambda c: 16 * ((c + 31) // 32), lambda r, c: r * ((c + 31) // 32)),
        "quant_nvfp4": (lambda c: 8 * ((c + 15) // 16), lambda r, c: r * ((c + 15) // 16)),
    }
    for t, (row_bytes, scale_bytes) in specs.items():
        scale_byte = struct.pack("<f", 0.5) if t == "quant_fp8_block" else bytes([127])
        for rows, cols in ((1, 1), (2, 32), (4, 33), (3, 200)):
            data = bytes((i * 37) & 0xFF for i in range(rows * row_bytes(cols)))
            n = scale_bytes(rows, cols)
            scales = (scale_byte * n)[:n]
            put(t, f"ok_{rows}x{cols}", head(rows, cols) + data + scales)
        full = head(2, 32) + bytes(range(2 * row_bytes(32))) + (scale_byte * 8)[: scale_bytes(2, 32)]
        put(t, "empty", b"")
        put(t, "short_header", full[:5])
        put(t, "header_only", full[:7])
        put(t, "short_data", full[:12])
        put(t, "short_scales", full[:-1])
        put(t, "nan_scales", head(1, 64) + bytes(row_bytes(64)) + b"\xff" * scale_bytes(1, 64))
        put(t, "inf_tensor_scale", head(1, 16, float("inf")) + bytes(range(row_bytes(16))) + b"\x7e" * scale_bytes(1, 16))
        put(t, "nan_tensor_scale", head(1, 16, float("nan")) + bytes(range(row_bytes(16))) + b"\x7e" * scale_bytes(1, 16))
        # Found by the fuzzer: nvfp4's scales whose f32 product overflows (448 x 1.7e38),
        # over a zero element: NaN in the f32 decoding (ModelOpt's order), 0 in the f64 one.
        put(t, "scale_product_overflows_f32", head(1, 1, struct.unpack("<f", bytes([0x80, 0x0F, 0x00, 0x7F]))[0]) + bytes(range(row_bytes(1))) + b"\x7e" * scale_bytes(1, 1))
        put(t, "max_cols", head(4, 1024) + bytes(4 * row_bytes(1024)) + b"\x01" * scale_bytes(4, 1024))
        put(t, "junk", b"\xff" * 300)


# ---------------------------------------------------------------- decimals


def decimal_files():
    t = "decimal"
    cases = {
        "one": "1",
        "tenth": "0.1",
        "max_f16": "65504",
        "halfway_f16": "65520",
        "exp_huge": "1e99999999999",
        "exp_huge_neg": "1e-99999999999",
        "exp_overflow_u64": "1e" + "9" * 40,
        "exp_overflow_neg": "1e-" + "9" * 40,
        "neg_nan": "-nan",
        "nan_payload": "nan(0x1234)",
        "inf_words": "-Infinity",
        "hex_float": "0x1p-99999",
        "hex_float_big": "0x1.fffp+99999",
        "empty": "",
        "space": " ",
        "sign_only": "-",
        "dot_only": ".",
        "e_only": "e5",
        "trailing_e": "1e",
        "trailing_junk": "1.5x",
        "double_sign": "--1",
        "leading_plus": "+0.5",
        "neg_zero": "-0",
        "underscore": "1_000",
        "nul": "1\x00",
        "unicode_digits": "１２３",
        "digits_10000": "1" + "0" * 9999,
        "digits_10000_frac": "0." + "0" * 9990 + "1",
        "halfway_long_tail": "1.0009765625" + "0" * 5000 + "1",
        "subnormal_boundary": "2.98023223876953125e-8",
        "zeros_then_exp": "0" * 5000 + "e99999",
        "many_dots": "1.2.3",
    }
    for name, s in cases.items():
        put(t, name, s)
    put(t, "bad_utf8", b"1.5\xff\xfe")
    put(t, "latin1", b"\xb9.0")


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    safetensors()
    npy_files()
    npz_files()
    quant_files()
    decimal_files()
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(ROOT) for f in fs)
    count = sum(len(fs) for _, _, fs in os.walk(ROOT))
    print(f"{count} files, {total} bytes in {os.path.relpath(ROOT)}")


if __name__ == "__main__":
    main()
