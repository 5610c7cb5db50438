//! Print the MEGA65 sampler's C tables (mega65/include/sampler_tables.h).
fn main() {
    print!("{}", ssnail_format::sampler::c_tables());
}
