//! Fuzz target `safetensors`: arbitrary bytes through `fuzz_feed::safetensors` (see that module for what
//! it does with them); a clean error and a successful parse are both fine.
#![no_main]

#[path = "../../crates/lowp-io/tests/fuzz_feed/mod.rs"]
mod fuzz_feed;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = fuzz_feed::safetensors(data);
});
