//! Print the C header of the contract (mega65/include/ssnail_regs.h).
fn main() {
    print!("{}", ssnail_format::c_header::c_header());
}
