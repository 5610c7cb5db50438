//! Edits of converted images that tests make: a header field changed in
//! place, the rest of the image as the converter wrote it.

use ssnail_format::image::h;

/// `img` with the description `desc` (header `DESC`, NUL-padded to `DESC_LEN`).
pub fn with_description(img: &[u8], desc: &str) -> Vec<u8> {
    let mut out = img.to_vec();
    let field = &mut out[h::DESC..h::DESC + h::DESC_LEN];
    field.fill(0);
    field[..desc.len()].copy_from_slice(desc.as_bytes());
    out
}

/// `img` whose header says it needs `mb` MiB of memory (`MEM_NEEDED`).
pub fn with_mem_needed_mb(img: &[u8], mb: u32) -> Vec<u8> {
    let mut out = img.to_vec();
    out[h::MEM_NEEDED..h::MEM_NEEDED + 4].copy_from_slice(&(mb << 20).to_le_bytes());
    out
}
