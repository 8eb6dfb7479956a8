//! The uniffi-bindgen matching this crate's uniffi version exactly.
fn main() {
    uniffi::uniffi_bindgen_main()
}
