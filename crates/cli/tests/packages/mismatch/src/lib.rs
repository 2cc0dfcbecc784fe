//! A fake element package whose fingerprint is RCLICK_TEST_FINGERPRINT
//! (see Cargo.toml). Its header has the layout of rclick_core's
//! `PackageHeader`; its `init` aborts, since the host must never call it.

const FINGERPRINT: &str = match option_env!("RCLICK_TEST_FINGERPRINT") {
    Some(s) => s,
    None => "not set",
};
const NAME: &str = "mismatch";

#[repr(C)]
pub struct Header {
    magic: [u8; 8],
    header_size: usize,
    fingerprint: *const u8,
    fingerprint_len: usize,
    name: *const u8,
    name_len: usize,
    init: unsafe fn(),
}

// SAFETY: immutable static data.
unsafe impl Sync for Header {}

unsafe fn never_called() {
    std::process::abort();
}

#[no_mangle]
#[allow(non_upper_case_globals)]
pub static rclick_package_v1: Header = Header {
    magic: *b"RCLKPKG1",
    header_size: std::mem::size_of::<Header>(),
    fingerprint: FINGERPRINT.as_ptr(),
    fingerprint_len: FINGERPRINT.len(),
    name: NAME.as_ptr(),
    name_len: NAME.len(),
    init: never_called,
};
