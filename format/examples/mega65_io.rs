//! Print the MEGA65 machine facts as a C header (mega65/include/mega65_io.h), or with `--ca65`
//! as a ca65 include (mega65/include/mega65_io.inc).
fn main() {
    if std::env::args().nth(1).as_deref() == Some("--ca65") {
        print!("{}", ssnail_format::mega65::ca65_include());
    } else {
        print!("{}", ssnail_format::mega65::c_header());
    }
}
