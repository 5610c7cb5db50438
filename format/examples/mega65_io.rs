//! Print the MEGA65 machine facts as a C header (mega65/include/mega65_io.h).
fn main() {
    print!("{}", ssnail_format::mega65::c_header());
}
