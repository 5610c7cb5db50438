//! Print the C header of the contract (mega65/include/ssnail_regs.h), or with `--ca65` its
//! constants for ca65 (mega65/include/ssnail_regs.inc), or with `--capi` the C library's
//! defaults (emu/capi/include/ssnail_defaults.h).
fn main() {
    if std::env::args().any(|a| a == "--ca65") {
        print!("{}", ssnail_format::c_header::ca65_include());
    } else if std::env::args().any(|a| a == "--capi") {
        print!("{}", ssnail_format::c_header::capi_defaults());
    } else {
        print!("{}", ssnail_format::c_header::c_header());
    }
}
